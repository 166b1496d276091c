"""Fixed things hearth says when there is no model reply to speak, per language."""

from __future__ import annotations

from enum import Enum


class Phrase(str, Enum):
    NO_SPEECH = "no_speech"
    NOT_UNDERSTOOD = "not_understood"
    NO_ANSWER = "no_answer"
    FAILED = "failed"
    FAILED_HEARING = "failed_hearing"
    FAILED_ANSWER = "failed_answer"
    FAILED_VOICE = "failed_voice"
    NOT_HEARD = "not_heard"
    """Words were heard, but too poorly to act on or answer (:mod:`agent.listening.hearing`)."""
    THANKS = "thanks"
    GREETING = "greeting"
    NEVER_MIND = "never_mind"
    PRAISED = "praised"
    """Praise for hearth itself ("You're doing great today"): thanked for, nothing looked up."""
    CANNOT_YET = "cannot_yet"
    """A request nothing in hearth serves (a phone call, a taxi), when no model may say so."""
    SAY_ANOTHER_WAY = "say_another_way"
    """Words nothing in hearth understood: asked for again, in other words."""


_PHRASES: dict[str, dict[Phrase, str]] = {
    "en": {
        Phrase.NO_SPEECH: "I didn't hear anything. Press the button and try again.",
        Phrase.NOT_UNDERSTOOD: "Sorry, I didn't catch that.",
        Phrase.NO_ANSWER: "Sorry, I don't have an answer for that.",
        Phrase.FAILED: "Sorry, something went wrong. Please try again.",
        Phrase.FAILED_HEARING: "Sorry, something went wrong with hearing you. Please try again.",
        Phrase.FAILED_ANSWER: "Sorry, something went wrong with my answer. Please try again.",
        Phrase.FAILED_VOICE: "Sorry, something went wrong with my voice. Please try again.",
        Phrase.NOT_HEARD: "Sorry, I didn't catch that. Could you say it again?",
        Phrase.THANKS: "You're welcome.",
        Phrase.GREETING: "Hello!",
        Phrase.NEVER_MIND: "Okay.",
        Phrase.PRAISED: "Thank you!",
        Phrase.CANNOT_YET: "Sorry, I can't do that yet.",
        Phrase.SAY_ANOTHER_WAY: "Sorry, I'm not sure what you'd like. Could you say it another way?",
    },
    "ko": {
        Phrase.NO_SPEECH: "아무 말도 들리지 않았어요. 버튼을 누르고 다시 말해 주세요.",
        Phrase.NOT_UNDERSTOOD: "죄송해요, 잘 못 알아들었어요.",
        Phrase.NO_ANSWER: "죄송해요, 그건 답을 드릴 수 없어요.",
        Phrase.FAILED: "죄송해요, 문제가 생겼어요. 다시 해 주세요.",
        Phrase.FAILED_HEARING: "죄송해요, 말씀을 듣다가 문제가 생겼어요. 다시 해 주세요.",
        Phrase.FAILED_ANSWER: "죄송해요, 대답을 만들다가 문제가 생겼어요. 다시 해 주세요.",
        Phrase.FAILED_VOICE: "죄송해요, 목소리에 문제가 생겼어요. 다시 해 주세요.",
        Phrase.NOT_HEARD: "죄송해요, 잘 못 들었어요. 다시 한 번 말해 주세요.",
        Phrase.THANKS: "천만에요.",
        Phrase.GREETING: "안녕하세요!",
        Phrase.NEVER_MIND: "네, 알겠어요.",
        Phrase.PRAISED: "고마워요!",
        Phrase.CANNOT_YET: "죄송해요, 그건 아직 못 해요.",
        Phrase.SAY_ANOTHER_WAY: "죄송해요, 무슨 말씀인지 잘 모르겠어요. 다르게 한 번 말해 주시겠어요?",
    },
}

SYSTEM_PROMPTS: dict[str, str] = {
    "en": (
        "You are hearth, a friendly voice assistant on a kitchen speaker. "
        "Answer in one or two short spoken sentences. "
        "No lists, no markdown, no emoji."
    ),
    "ko": (
        "당신은 부엌 스피커의 음성 비서 hearth입니다. "
        "한국어로 짧게 한두 문장으로 대답하세요. 목록이나 마크다운은 쓰지 마세요."
    ),
}


def phrase(language: str, which: Phrase) -> str:
    return _PHRASES.get(language, _PHRASES["en"])[which]


def system_prompt(language: str) -> str:
    return SYSTEM_PROMPTS.get(language, SYSTEM_PROMPTS["en"])
