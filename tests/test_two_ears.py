"""Two ears: a second recognizer's whole hearing rides on the first one's final, and an act whose
values the second did not hear is asked back."""

from __future__ import annotations

import asyncio
import threading

import numpy as np
import pytest

from agent.assistant import Assistant
from agent.features import Features
from agent.listening.hearing import weigh
from agent.listening.listen import Press
from audio.protocols import Transcript
from audio.two_ears import TwoEars
from audio.wav import WavFileMicrophone
from tests.fakes import ScriptedRecognizer, speech_like
from tests.test_turn_tools import Kitchen, TimedJson, decision, tool_deps

RATE = 16000


class WholeEar:
    """A second ear that hears ``text`` of any audio, and notes when and what it was given."""

    sample_rate = RATE

    def __init__(self, text: str, fails: bool = False) -> None:
        self.text = text
        self.fails = fails
        self.heard_s: list[float] = []
        self.threads: list[str] = []
        self.loaded = self.warmed = False

    def final(self, samples: np.ndarray, context: str = "") -> Transcript:
        self.heard_s.append(len(samples) / RATE)
        self.threads.append(threading.current_thread().name)
        if self.fails:
            raise RuntimeError("the second model broke")
        return Transcript(self.text, True, len(self.text), len(samples) / RATE, self.text)

    def load(self) -> None:
        self.loaded = True

    def warm(self) -> None:
        self.warmed = True


async def _hear(ears: TwoEars, seconds: float = 1.0) -> list[Transcript]:
    audio = WavFileMicrophone(speech_like(seconds, silence_before_s=0.1, silence_after_s=0.0), realtime=False).chunks()
    return [t async for t in ears.transcribe(audio, "")]


async def test_the_second_ear_hears_the_whole_utterance_once_and_its_words_ride_on_the_final() -> None:
    second = WholeEar("Add two layers of milk to the list.")
    ears = TwoEars(ScriptedRecognizer("Add two liters of milk to the list."), second)
    heard = await _hear(ears, 1.2)
    partials, final = heard[:-1], heard[-1]
    assert partials and all(t.second_hearing is None for t in partials)
    assert final.is_final and final.text == "Add two liters of milk to the list."
    assert final.second_hearing == "Add two layers of milk to the list."
    assert second.heard_s == [pytest.approx(1.3, abs=0.05)]  # all of it, once
    assert second.threads[0] != threading.main_thread().name  # off the loop, beside the first ear's decode
    ears.load()
    ears.warm()
    assert second.loaded and second.warmed


async def test_a_failing_second_ear_leaves_the_first_ears_hearing() -> None:
    ears = TwoEars(ScriptedRecognizer("Set a timer for ten minutes."), WholeEar("", fails=True))
    final = (await _hear(ears))[-1]
    assert final.text == "Set a timer for ten minutes." and final.second_hearing is None


def test_the_hearing_keeps_what_the_second_ear_heard() -> None:
    text = "Set a timer for ten minutes."
    final = Transcript(text, True, len(text), 2.0, text, avg_logprob=-0.1, no_speech_prob=0.01, second_hearing="Set a timer for two minutes.")
    hearing = weigh(final, 30.0)
    assert hearing.second_hearing == "Set a timer for two minutes." and hearing.verdict == "sure"
    assert hearing.marks()["second_ear"] == "Set a timer for two minutes."
    assert "second_ear" not in weigh(Transcript(text, True, 0, 2.0, text), 30.0).marks()


async def _say(assistant: Assistant, first: str, second: str):
    assistant.deps.recognizer = TwoEars(ScriptedRecognizer(first, avg_logprob=-0.2), WholeEar(second))
    press = Press()
    asyncio.get_running_loop().call_later(0.0, press.release)
    audio = WavFileMicrophone(speech_like(0.4, silence_before_s=0.1, silence_after_s=0.0)).chunks()
    return await assistant.handle(audio, press)


@pytest.mark.parametrize(("tool", "args", "first", "second", "asked"), [
    ("timer_start", {"duration_s": 600, "label": "rice"}, "Set a rice timer for ten minutes.", "Set a rice timer for two minutes.",
     "Start a timer for 10 minutes?"),
    ("shopping_add", {"item": "oat milk"}, "Add oat milk to the list.", "Add goat milk to the list.", None),
    ("timer_start", {"duration_s": 45}, "Forty-five seconds on the timer.", "Five seconds on the timer.", "Start a timer for 45 seconds?"),
])
async def test_an_act_whose_values_the_second_ear_did_not_hear_is_asked_back(tool, args, first, second, asked) -> None:
    from agent.deciding.arguments import content_in, grounded

    chat = TimedJson(decision("", tool, args))
    kitchen = Kitchen()
    deps, _, executor = tool_deps(chat, kitchen, text="x", grounded=grounded, holds_values=content_in)
    executor.start()
    try:
        assistant = Assistant(deps)
        result = await _say(assistant, first, second)
    finally:
        await executor.close()
    mark = result.timeline.first("ears_disagree")
    assert mark is not None and mark.detail == {"tool": tool, "second": second}
    assert not any(call.ran for call in result.tool_calls)
    if asked is not None:
        assert result.spoken == [asked]
    assert kitchen.timers == [] and kitchen.shopping == []


@pytest.mark.parametrize(("first", "second"), [
    ("Set a rice timer for ten minutes.", "Set a rice timer for 10 minutes."),  # the same values, written otherwise
    ("Set a rice timer for ten minutes.", "Set the rice time for ten minutes"),  # another verb and noun: values kept
    ("Set a rice timer for ten minutes.", "Set a rice timer for ten minutes."),
])
async def test_an_act_both_ears_heard_goes_ahead(first: str, second: str) -> None:
    from agent.deciding.arguments import content_in, grounded

    chat = TimedJson(decision("", "timer_start", {"duration_s": 600, "label": "rice"}))
    kitchen = Kitchen()
    deps, _, executor = tool_deps(chat, kitchen, text="x", grounded=grounded, holds_values=content_in)
    executor.start()
    try:
        result = await _say(Assistant(deps), first, second)
    finally:
        await executor.close()
    assert result.timeline.first("ears_disagree") is None
    assert kitchen.timers == [(600, "rice")]


async def test_with_the_feature_off_the_second_ear_is_not_heeded() -> None:
    from agent.deciding.arguments import content_in, grounded

    chat = TimedJson(decision("", "timer_start", {"duration_s": 600, "label": "rice"}))
    kitchen = Kitchen()
    deps, _, executor = tool_deps(chat, kitchen, text="x", grounded=grounded, holds_values=content_in)
    deps.features = Features().without("two-ears")
    executor.start()
    try:
        result = await _say(Assistant(deps), "Set a rice timer for ten minutes.", "Set a rice timer for two minutes.")
    finally:
        await executor.close()
    assert result.timeline.first("ears_disagree") is None
    assert kitchen.timers == [(600, "rice")]


def test_a_second_ear_is_wired_in_english_and_its_model_is_required(tmp_path) -> None:
    from audio.moonshine_asr import MoonshineRecognizer
    from audio.whisper_asr import WhisperRecognizer
    from firmware_py.config import parse_config
    from firmware_py.wiring import StartupError, make_recognizer, model_store, required_models

    config = parse_config({"models_dir": str(tmp_path), "asr": {"second_ear_en": "moonshine-base-en"}})
    ears = make_recognizer(config, model_store(config))
    assert isinstance(ears, TwoEars)
    assert isinstance(ears.first, WhisperRecognizer) and isinstance(ears.second, MoonshineRecognizer)
    assert "moonshine-base-en" in required_models(config)

    korean = config.model_copy(update={"language": "ko"})
    assert not isinstance(make_recognizer(korean, model_store(korean)), TwoEars)
    assert "moonshine-base-en" not in required_models(korean)

    same = parse_config({"models_dir": str(tmp_path), "asr": {"second_ear_en": "whisper-tiny-en"}})
    with pytest.raises(StartupError, match="is the first ear too"):
        make_recognizer(same, model_store(same))
