"""One life of hearth in the kill test: scripted requests that act, taken through the real turn
until the process is killed.

What is real: the :class:`~agent.assistant.Assistant` and its turns (listening with the Silero
voice detector, the planner's parsing, argument repair and grounding, the tool executor,
Cadence, the spoken units), the tools and their SQLite stores, the conversation record, the
timer watcher and its announcements, espeak-ng speaking the replies into a clocked WAV speaker
(a unit is heard when the speaker's clock has played it).  What is scripted: the user's words
(spoken by espeak-ng into the microphone, but "recognized" as the script says, with no ASR),
and the talker's decision (the JSON the model would write for that request).

Each thing worth checking is reported on stdout as one JSON line, written the moment it
happens and after the record has it: the words heard, an acting call started and settled
(``"ack"``: the change is made and hearth is about to say so), each unit heard to its end.
The driver (:mod:`bench.drills.kill`) kills the process at a random moment and checks the reports
against the files after the next start.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from agent.assistant import Assistant
from agent.events import Event, StateChanged, ToolCalled, ToolStarted, TranscriptFinal, UnitSpoken
from agent.record import ConversationRecord
from agent.speaking.phrases import system_prompt
from agent.deps import TurnDeps
from audio.espeak_tts import EspeakSettings, EspeakSynthesizer
from audio.protocols import AudioChunk, Transcript
from audio.volume import VolumeSpeaker
from audio.wav import WavFileSpeaker, resample
from firmware_py.config import HearthConfig, parse_config
from firmware_py.demo import play_request
from firmware_py.wiring import cadence_settings, listen_settings, make_vad, model_store, timer_announcements, tool_use

RATE = 16000

_LABELS = {
    "en": ("pasta", "rice", "tea", "stew", "bread", "cookies", "potatoes", "soup", "chicken", "beans", "pizza", "cake"),
    "ko": ("라면", "파스타", "국수", "찌개", "고구마", "만두", "감자", "떡볶이", "밥", "계란찜"),
}
_ITEMS = {
    "en": ("milk", "butter", "flour", "sugar", "apples", "bananas", "carrots", "onions", "garlic", "tomatoes", "cheese",
           "yogurt", "honey", "lemons", "spinach", "coffee"),
    "ko": ("우유", "두부", "대파", "마늘", "양파", "사과", "바나나", "당근", "김치", "버터", "고추장", "간장", "참기름", "콩나물"),
}
_NOTES = {
    "en": ("the oven runs hot", "call the plumber on monday", "the spare key is with the neighbours",
           "buy a new kettle", "the blue pot leaks", "water the basil"),
    "ko": ("가스 밸브 잠그기", "내일 병원 예약", "화분에 물 주기", "택배 찾아오기", "보일러 점검 받기", "냉장고 청소하기"),
}
_MINUTES = (1, 2, 3, 5, 10, 15, 20, 30)


@dataclass(frozen=True)
class Ask:
    """One scripted request: the words said, and the call the talker decides on for them."""

    words: str
    tool: str
    args: dict[str, Any]


def _request(language: str, tool: str, name: str, minutes: int = 0) -> Ask:
    ko = language == "ko"
    if tool == "timer_start":
        words = f"{name} 타이머 {minutes}분 맞춰 줘" if ko else f"set a {name} timer for {minutes} minutes"
        return Ask(words, tool, {"duration_s": minutes * 60, "label": name})
    if tool == "timer_cancel":
        return Ask(f"{name} 타이머 취소해 줘" if ko else f"cancel the {name} timer", tool, {"label": name})
    if tool == "shopping_add":
        return Ask(f"장보기 목록에 {name} 추가해 줘" if ko else f"add {name} to the shopping list", tool, {"item": name})
    if tool == "shopping_complete":
        return Ask(f"장보기 목록에서 {name} 지워 줘" if ko else f"take {name} off the shopping list", tool, {"item": name})
    return Ask(f"메모해 줘 {name}" if ko else f"take a note {name}", "note_add", {"text": name})


def plan_life(rng: random.Random, language: str, timers: list[str], items: list[str], turns: int) -> list[Ask]:
    """Requests for one life: each names a timer or an item no other request of this life names,
    so a change acknowledged in this life is never undone in it.  Timers and items to cancel or
    tick off are those there at the start, in this language."""
    lang_of = (lambda s: "ko" if any("가" <= ch <= "힣" for ch in s) else "en")
    cancel = [t for t in timers if lang_of(t) == language]
    tick = [i for i in items if lang_of(i) == language]
    fresh_labels = [label for label in _LABELS[language] if label not in timers]
    fresh_items = [item for item in _ITEMS[language] if item not in items]
    for pool in (cancel, tick, fresh_labels, fresh_items):
        rng.shuffle(pool)
    asks: list[Ask] = []
    while len(asks) < turns:
        tool = rng.choice(("timer_start", "timer_start", "timer_cancel", "shopping_add", "shopping_add", "shopping_complete", "note_add"))
        pool = {"timer_start": fresh_labels, "timer_cancel": cancel, "shopping_add": fresh_items, "shopping_complete": tick}.get(tool)
        if pool is not None and not pool:
            tool, pool = "note_add", None
        name = pool.pop() if pool is not None else rng.choice(_NOTES[language])
        asks.append(_request(language, tool, name, rng.choice(_MINUTES)))
    return asks


class TypedWords:
    """The recognizer's stand-in: hears the utterance out, then says it heard the words it was given."""

    sample_rate = RATE

    def __init__(self, language: str) -> None:
        self.language = language
        self.words = ""

    async def transcribe(self, audio: AsyncIterator[AudioChunk], context: str = "", *, hypotheses: int = 1) -> AsyncIterator[Transcript]:
        seconds = 0.0
        async for chunk in audio:
            seconds += chunk.duration
        yield Transcript(self.words, True, len(self.words), seconds, self.words)


class ScriptedDecision:
    """The talker's stand-in: writes the decision JSON for the request it was given."""

    def __init__(self) -> None:
        self.decision = ""

    async def warm(self, system_prompt: str) -> None:
        pass

    async def stream(self, messages: Any, max_tokens: int | None = None, json_schema: dict[str, Any] | None = None) -> AsyncIterator[str]:
        for start in range(0, len(self.decision), 8):  # a few characters at a time, as tokens come
            yield self.decision[start : start + 8]
            await asyncio.sleep(0)


class Reports:
    """The assistant's events worth checking, one JSON line each on stdout, as they happen.

    Called after the record has written what it keeps of the event, so a line on stdout means
    the record had it first.  ``os.write`` of a line shorter than the pipe's atomic size: a kill
    leaves whole lines or none."""

    def __init__(self, acts: Any) -> None:
        self.acts = acts
        self.turn = 0

    @staticmethod
    def write(**report: object) -> None:
        os.write(sys.stdout.fileno(), (json.dumps(report, ensure_ascii=False, default=str) + "\n").encode())

    def __call__(self, event: Event) -> None:
        turn = self.turn
        if isinstance(event, TranscriptFinal) and event.text:
            self.write(event="words", turn=turn, text=event.text)
        elif isinstance(event, ToolStarted):
            self.write(event="started", turn=turn, tool=event.name, args=event.args)
        elif isinstance(event, ToolCalled):
            acked = event.status == "ok" and self.acts(event.name)
            self.write(event="ack" if acked else "called", turn=turn, tool=event.name, args=event.args, status=event.status, data=event.data)
        elif isinstance(event, UnitSpoken):
            self.write(event="heard", turn=turn, text=event.text, kind=event.kind)
        elif isinstance(event, StateChanged):
            self.write(event="state", turn=turn, state=event.state.value)


async def _voice(synthesizer: EspeakSynthesizer, words: str) -> AudioChunk:
    """The request as a person would say it into the microphone, after a short silence."""
    pieces = [np.zeros(int(0.2 * RATE), np.float32)]
    async for chunk in synthesizer.synthesize(words):
        pieces.append(resample(chunk.samples, chunk.sample_rate, RATE))
    return AudioChunk(np.concatenate(pieces), RATE)


def life_config(data_dir: Path, language: str) -> HearthConfig:
    """hearth's defaults, on the kill test's data, with a timer announced once."""
    return parse_config({"language": language, "tools": {"data_dir": str(data_dir), "ring_times": 1},
                         "heartbeat": {"enabled": False}, "reasoner": {"where": "off"}})


async def live(data_dir: Path, language: str, seed: int, life: int, turns: int) -> int:
    config = life_config(data_dir, language)
    vad = make_vad(config, model_store(config))
    await asyncio.to_thread(vad.load)
    voice = EspeakSynthesizer(EspeakSettings(voice=language, language=language))
    await voice.load()
    mouth = EspeakSynthesizer(EspeakSettings(voice=language, language=language, sample_rate=RATE))
    speaker = VolumeSpeaker(WavFileSpeaker(voice.sample_rate), config.audio.volume)
    decision, words = ScriptedDecision(), TypedWords(language)
    tools = await tool_use(config, decision, speaker)
    rules, pace = cadence_settings(config)
    deps = TurnDeps(
        vad=vad, recognizer=words, chat=decision, synthesizer=voice, speaker=speaker, language=language,
        system_prompt=system_prompt(language), listen=listen_settings(config), cadence=rules, pace=pace, tools=tools,
    )
    reports = Reports(tools.acts)
    record = ConversationRecord.open(data_dir / "conversation.sqlite3")
    assistant = Assistant(deps, config.history_turns, on_event=reports, record=record)
    ringing = timer_announcements(config, deps, assistant)  # held for the whole life: timers due while off ring at once
    home = tools.home
    timers = [t.label for t in home.timers.active() if t.label]  # type: ignore[union-attr]
    items = [entry.item for entry in home.lists.items()]  # type: ignore[union-attr]
    reports.write(event="ready", language=language, timers=timers, items=items)
    if (await asyncio.to_thread(sys.stdin.readline)).strip() != "go":
        return 0  # the driver is gone
    rng = random.Random(f"{seed}/{life}")
    for ask in plan_life(rng, language, timers, items, turns):
        words.words = ask.words
        decision.decision = json.dumps({"say": "", "tool": ask.tool, "args": ask.args}, ensure_ascii=False)
        heard = await _voice(mouth, ask.words)
        reports.turn = record.next_turn()  # the number the assistant gives the turn it starts now
        reports.write(event="turn", turn=reports.turn, words=ask.words, tool=ask.tool, args=ask.args)
        result = await play_request(assistant, heard, trailing_silence_s=1.0)
        reports.write(event="ended", turn=reports.turn, outcome=result.outcome.value)
    reports.write(event="done")
    await asyncio.sleep(3600)  # the script ran out before the kill came: wait for it
    del ringing  # (held until here)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.drills.kill_child", description="one life of hearth in the kill test")
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--language", choices=["en", "ko"], required=True)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--life", type=int, required=True)
    parser.add_argument("--turns", type=int, default=12)
    args = parser.parse_args(argv)
    return asyncio.run(live(args.data_dir, args.language, args.seed, args.life, args.turns))


if __name__ == "__main__":
    raise SystemExit(main())
