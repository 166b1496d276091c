"""The voice made ahead: a line prepared before it is asked for is said from the audio made then,
a wrong guess costs nothing but its synthesis, and a turn prepares what its call will say while it
waits to make it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import numpy as np
import pytest

from agent.assistant import Assistant
from agent.deciding.arguments import grounded
from agent.deciding.tool_use import spoken_result
from agent.features import Features
from agent.speaking.cadence import Cadence
from agent.speaking.filters import default_chain
from agent.speaking.foresight import Foresight, first_unit
from agent.timeline import Timeline
from audio.protocols import AudioChunk
from audio.ready_voice import ReadyVoice, own_voice
from tests.fakes import say
from tests.test_turn_tools import CharSynthesizer, Kitchen, TimedJson, TimerArgs, decision, tool_deps
from tools.executor import ToolResult
from tools.registry import ToolRegistry
from tools.spec import ToolOutput, ToolSpec


class CountingVoice:
    """A voice that says each text as one chunk per word, counting what it was asked to say."""

    language = "en"
    sample_rate = 16000

    def __init__(self, fail: bool = False, delay_s: float = 0.0) -> None:
        self.asked: list[str] = []
        self.fail = fail
        self.delay_s = delay_s

    async def synthesize(self, text: str) -> AsyncIterator[AudioChunk]:
        self.asked.append(text)
        await asyncio.sleep(self.delay_s)
        if self.fail:
            self.fail = False
            raise RuntimeError("voice broke")
        for i, _word in enumerate(text.split()):
            yield AudioChunk(np.full(160, i + 1, np.float32), self.sample_rate)


async def heard(voice: ReadyVoice, text: str) -> list[float]:
    return [float(chunk.samples[0]) async for chunk in voice.synthesize(text)]


async def test_a_line_made_ahead_is_said_from_that_audio_without_a_second_synthesis() -> None:
    inner = CountingVoice()
    voice = ReadyVoice(inner)
    voice.prepare("Timer set for ten minutes.")
    await asyncio.sleep(0.01)
    assert await heard(voice, " Timer set for ten minutes. ") == [1.0, 2.0, 3.0, 4.0, 5.0]
    assert inner.asked == ["Timer set for ten minutes."]
    assert (voice.hits, voice.misses) == (1, 0)


async def test_a_line_still_being_made_is_waited_for_not_made_twice() -> None:
    inner = CountingVoice(delay_s=0.05)
    voice = ReadyVoice(inner)
    voice.prepare("Noted.")
    assert voice.has("Noted.")
    assert await heard(voice, "Noted.") == [1.0]
    assert inner.asked == ["Noted."]


async def test_a_wrong_guess_costs_its_synthesis_and_the_asked_line_is_said() -> None:
    inner = CountingVoice()
    voice = ReadyVoice(inner)
    voice.prepare("Added milk to the shopping list.")
    await asyncio.sleep(0.01)
    assert await heard(voice, "Milk is already on the shopping list.") == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]
    assert inner.asked == ["Added milk to the shopping list.", "Milk is already on the shopping list."]
    assert (voice.hits, voice.misses) == (0, 1)


async def test_a_making_that_failed_or_was_stopped_is_made_again_when_asked() -> None:
    inner = CountingVoice(fail=True)
    voice = ReadyVoice(inner)
    voice.prepare("Noted.")
    await asyncio.sleep(0.01)
    assert not voice.has("Noted.")  # the failure was logged and forgotten
    assert await heard(voice, "Noted.") == [1.0]
    slow = ReadyVoice(CountingVoice(delay_s=1.0))
    slow.prepare("Timer set.")
    for task in asyncio.all_tasks():
        if task.get_name() == "ready-voice":
            task.cancel()  # stopped, as at shutdown
    slow.voice.delay_s = 0.0  # type: ignore[attr-defined]
    assert await heard(slow, "Timer set.") == [1.0, 2.0]


async def test_only_the_newest_lines_are_kept_but_fixed_ones_always() -> None:
    inner = CountingVoice()
    voice = ReadyVoice(inner, keep=2)
    await voice.keep_always(["Let me check."])
    for text in ("One.", "Two.", "Three."):
        voice.prepare(text)
        await asyncio.sleep(0.01)
    assert not voice.has("One.") and voice.has("Two.") and voice.has("Three.") and voice.has("Let me check.")
    assert own_voice(voice) is inner and own_voice(inner) is inner


def test_the_first_unit_is_cut_as_the_reply_path_cuts_it() -> None:
    assert first_unit("Pasta timer set for 11 minutes.", default_chain(), Cadence()) == "Pasta timer set for 11 minutes."
    long = "In Ilsan it is 12 degrees and cloudy, with a light wind from the west. Rain comes tonight."
    unit = first_unit(long, default_chain(), Cadence())
    assert unit is not None and long.startswith(unit) and len(unit) < len(long)
    assert first_unit("  ", default_chain(), Cadence()) is None


class ForetellingKitchen(Kitchen):
    """The test kitchen, its timer able to tell what it will say (``foretold``: a wrong guess)."""

    def __init__(self, foretold: str | None = None) -> None:
        super().__init__()
        self.foretold = foretold

    def foretell(self, args: TimerArgs) -> str:
        return self.foretold if self.foretold is not None else f"{args.label or 'Timer'} set."

    def registry(self) -> ToolRegistry:
        others = [s for s in super().registry().specs if s.name != "timer_start"]
        return ToolRegistry([
            ToolSpec("timer_start", "Start a timer.", TimerArgs, self.start_timer, side_effects="act", foretell=self.foretell),
            *others,
        ])


def test_foresight_prepares_an_acts_confirmation_and_a_results_words_once_each() -> None:
    registry = ForetellingKitchen().registry()
    asked: list[str] = []
    timeline = Timeline()
    sight = Foresight(asked.append, registry, lambda t: first_unit(t, default_chain(), Cadence()),
                      lambda r: spoken_result(r, "en"), timeline)
    sight.act("timer_start", {"duration_s": 600, "label": "pasta"})
    sight.act("timer_start", {"duration_s": 600, "label": "pasta"})
    sight.act("timer_start", {"duration_s": "never"})  # arguments the call would refuse: nothing
    sight.act("shopping_add", {"item": "milk"})  # a tool that cannot tell: nothing
    sight.result(ToolResult("time_now", True, ToolOutput("It's twelve o'clock."), None, 0.01))
    assert asked == ["pasta set.", "It's twelve o'clock."]
    assert [m.detail["tool"] for m in timeline.marks if m.name == "voice_ahead"] == ["timer_start", "time_now"]


async def _pasta_timer_turn(kitchen: Kitchen, features: Features = Features()) -> tuple[Any, ReadyVoice]:
    """A turn asking for a pasta timer, its voice one that makes lines ahead."""
    chat = TimedJson(decision("", "timer_start", {"duration_s": 600, "label": "pasta"}))
    deps, _sink, executor = tool_deps(chat, kitchen, text="start a pasta timer for ten minutes", grounded=grounded, features=features)
    voice = ReadyVoice(CharSynthesizer())
    deps.synthesizer, deps.voice_ahead = voice, voice.prepare
    executor.start()
    try:
        return await say(Assistant(deps), "start a pasta timer for ten minutes"), voice
    finally:
        await executor.close()


@pytest.mark.parametrize(("foretold", "hits"), [(None, 1), ("Something else entirely.", 0)])
async def test_a_turn_prepares_its_acts_confirmation_and_says_what_the_tool_said(foretold: str | None, hits: int) -> None:
    kitchen = ForetellingKitchen(foretold)
    result, voice = await _pasta_timer_turn(kitchen)
    assert result.spoken == ["pasta set."]
    assert kitchen.timers == [(600, "pasta")]
    assert voice.hits == hits
    ahead = result.timeline.first("voice_ahead")
    assert ahead is not None and ahead.t <= result.timeline.first("tool_start").t


async def test_without_the_feature_nothing_is_made_ahead() -> None:
    result, voice = await _pasta_timer_turn(ForetellingKitchen(), Features().without("ready-voice"))
    assert result.spoken == ["pasta set."]
    assert (voice.hits, voice.misses) == (0, 1)
    assert result.timeline.first("voice_ahead") is None


@pytest.mark.parametrize("language", ["en", "ko"])
@pytest.mark.parametrize("args", [
    {"duration_s": 660, "label": "pasta"}, {"duration_s": 90}, {"duration_s": 4500, "label": "  Roast  Chicken "},
])
async def test_a_started_timer_says_what_was_foretold(tmp_path, language: str, args: dict) -> None:
    from tools.timers import TimerStore, timer_tools

    store = TimerStore(tmp_path / "hearth.db")
    store.open()
    try:
        spec = next(t for t in timer_tools(store, language) if t.name == "timer_start")
        parsed = spec.args.model_validate(args)
        assert spec.foretell is not None
        assert spec.foretell(parsed) == (await spec.run(parsed)).text
    finally:
        store.close()


@pytest.mark.parametrize("language", ["en", "ko"])
@pytest.mark.parametrize(("name", "args"), [
    ("shopping_add", {"item": "oat  milk", "quantity": "2 l"}), ("shopping_add", {"item": "lemons"}),
    ("note_add", {"text": "call the plumber"}),
])
async def test_a_new_item_or_a_note_says_what_was_foretold(tmp_path, language: str, name: str, args: dict) -> None:
    from tools.lists import ListStore, list_tools

    store = ListStore(tmp_path / "hearth.db")
    store.open()
    try:
        spec = next(t for t in list_tools(store, language) if t.name == name)
        parsed = spec.args.model_validate(args)
        assert spec.foretell is not None
        assert spec.foretell(parsed) == (await spec.run(parsed)).text
    finally:
        store.close()


def test_the_lines_said_often_are_cut_into_units_as_a_reply_would_be() -> None:
    from agent.deciding.tool_use import pretool_line
    from agent.speaking.foresight import lines_said_often, units_of

    for language in ("en", "ko"):
        lines = lines_said_often(language)
        assert pretool_line("weather", language) in lines and pretool_line("", language) in lines
        assert all(units_of(line, default_chain(), Cadence()) for line in lines)


async def test_the_line_before_a_slow_tool_is_said_from_audio_kept_for_good() -> None:
    from agent.speaking.foresight import lines_said_often, units_of

    kitchen = Kitchen(air_s=0.05)
    chat = TimedJson(decision("Let me look.", "air_quality", {"location": "Ilsan"}))
    deps, _sink, executor = tool_deps(chat, kitchen, text="how is the air in Ilsan")
    inner = CharSynthesizer()
    voice = ReadyVoice(inner)
    await voice.keep_always(u for line in lines_said_often("en") for u in units_of(line, default_chain(), Cadence()))
    deps.synthesizer, deps.voice_ahead = voice, voice.prepare
    executor.start()
    try:
        result = await say(Assistant(deps), "how is the air in Ilsan")
    finally:
        await executor.close()
    assert result.spoken[0] == "Let me check the air quality."
    assert voice.hits == 1 and voice.misses == 1  # the line kept; the answer made when asked


@pytest.mark.parametrize("language", ["en", "ko"])
@pytest.mark.parametrize(("running", "args"), [
    ([(600, "pasta")], {"label": "pasta"}), ([(600, "pasta"), (300, None)], {"all": True}),
    ([(600, "pasta"), (300, "rice")], {}), ([], {"label": "rice"}), ([(600, "pasta")], {"label": "rice"}),
])
async def test_a_cancel_says_what_was_foretold_and_foretelling_cancels_nothing(
        tmp_path, language: str, running: list, args: dict) -> None:
    from tools.timers import TimerStore, timer_tools

    store = TimerStore(tmp_path / "hearth.db")
    store.open()
    try:
        for seconds, label in running:
            store.start(seconds, label)
        spec = next(t for t in timer_tools(store, language) if t.name == "timer_cancel")
        parsed = spec.args.model_validate(args)
        assert spec.foretell is not None
        foretold = spec.foretell(parsed)
        assert len(store.active()) == len(running)  # foretelling changed nothing
        assert foretold == (await spec.run(parsed)).text
    finally:
        store.close()
