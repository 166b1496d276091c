"""Heartbeat: decisions and early look-ups on partial transcripts, handed to the answer.

The planner here is scripted (a decision per request, after a set delay) and the Thinker is
ticked by hand (``look()``), so scheduling is checked without a clock.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from pydantic import BaseModel

from agent.assistant import Assistant
from agent.deciding.speculation import call_key
from agent.deciding.thinker import Thinker, ThinkerSettings, words_of
from agent.deciding.tool_calls import SayDelta, ToolChosen, ToolPlan
from agent.deciding.tool_use import ToolUse
from agent.features import Features
from agent.listening.listen import Press
from agent.timeline import Timeline
from audio.protocols import AudioChunk, Transcript
from audio.wav import WavFileMicrophone
from firmware_py.config import HearthConfig, ToolsConfig
from firmware_py.home_tools import open_home_tools
from tests.fakes import ToneSynthesizer, speech_like
from tests.test_turn import make_deps
from tools.executor import ToolExecutor
from tools.registry import ToolRegistry
from tools.spec import NoArgs, ToolOutput, ToolSpec


class Place(BaseModel):
    location: str | None = None


class Item(BaseModel):
    item: str


class Kitchen:
    """Tools that count their runs."""

    def __init__(self, weather_s: float = 0.0) -> None:
        self.weather_s = weather_s
        self.runs: list[tuple[str, dict]] = []

    async def weather(self, args: Place) -> ToolOutput:
        self.runs.append(("weather", args.model_dump()))
        await asyncio.sleep(self.weather_s)
        return ToolOutput(f"Sunny in {args.location or 'the kitchen'}.")

    async def add(self, args: Item) -> ToolOutput:
        self.runs.append(("shopping_add", args.model_dump()))
        return ToolOutput(f"Added {args.item}.")

    async def clock(self, _args: NoArgs) -> ToolOutput:
        self.runs.append(("time_now", {}))
        return ToolOutput("It's noon.")

    def registry(self) -> ToolRegistry:
        return ToolRegistry([
            ToolSpec("weather", "Weather.", Place, self.weather, "read", expected_s=1.0, speculable=True),
            ToolSpec("shopping_add", "Add.", Item, self.add, "act"),
            ToolSpec("time_now", "Time.", NoArgs, self.clock, "read", speculable=True, stale_after_s=0.0),
        ])


class ScriptedPlanner:
    """Decides by the last matching phrase in the words, after ``delay_s``; counts its calls."""

    def __init__(self, rules: list[tuple[str, ToolPlan]], delay_s: float = 0.0) -> None:
        self.rules = rules
        self.delay_s = delay_s
        self.calls: list[str] = []
        self.cancelled = 0
        self.chat = object()

    def examples_for(self, text: str) -> list:
        return [(f"example for {text}", {"tool": "none"})]

    def decide(self, text: str) -> ToolPlan:
        found = [plan for phrase, plan in self.rules if words_of(phrase) in words_of(text)]
        return found[-1] if found else ToolPlan("Okay.", None)

    async def plan(self, text: str, history=(), on_say=None, examples=None) -> ToolPlan:
        self.calls.append(text)
        try:
            await asyncio.sleep(self.delay_s)
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        return self.decide(text)

    async def stream(self, text: str, history=(), examples=None):
        plan = await self.plan(text, history)
        yield SayDelta(plan.say)
        yield ToolChosen(plan.tool)
        yield plan


BUSAN = ToolPlan("Let me check the weather.", "weather", {"location": "Busan"})
ILSAN = ToolPlan("Let me check the weather.", "weather", {"location": "Ilsan"})
MILK = ToolPlan("", "shopping_add", {"item": "milk"})


async def _thinker(planner: ScriptedPlanner, kitchen: Kitchen, settings: ThinkerSettings = ThinkerSettings()) -> tuple[Thinker, ToolExecutor]:
    lane = ToolExecutor(kitchen.registry())
    lane.start()
    return Thinker(planner, lane, (), Timeline(), settings), lane


async def _settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0.01)


async def test_a_look_decides_only_on_new_words_or_a_finished_look_up() -> None:
    planner = ScriptedPlanner([("weather in busan", BUSAN)])
    thinker, lane = await _thinker(planner, Kitchen())
    thinker.hear("What's")
    assert not thinker.look()  # too few words
    thinker.hear("What's the weather")
    assert thinker.look()
    await _settle()
    assert not thinker.look()  # the clock alone: nothing changed
    thinker.hear("What's the weather, in Busan")
    assert thinker.look()
    await _settle()
    assert thinker.look() is True  # the early weather call came back: worth another look
    await _settle()
    assert planner.calls == ["What's the weather", "What's the weather, in Busan", "What's the weather, in Busan"]
    await thinker.close()
    await lane.close()


async def test_at_most_k_decisions_in_flight_and_a_busy_look_is_skipped() -> None:
    planner = ScriptedPlanner([], delay_s=10.0)
    thinker, lane = await _thinker(planner, Kitchen(), ThinkerSettings(max_in_flight=2))
    for words in ("set a", "set a timer", "set a timer for"):
        thinker.hear(words)
        thinker.look()
        await asyncio.sleep(0)
    assert len(planner.calls) == 2 and thinker.skipped == 1 and thinker.calls == 2
    record = await thinker.handoff()
    assert record.cancelled == 2 and planner.cancelled == 2  # cut short at the handoff, not waited for
    await lane.close()


@pytest.mark.parametrize("stop_at_end", [True, False])
async def test_the_decision_under_way_is_cut_short_when_the_user_finishes(stop_at_end: bool) -> None:
    planner = ScriptedPlanner([], delay_s=10.0)
    thinker, lane = await _thinker(planner, Kitchen(), ThinkerSettings(stop_at_end=stop_at_end))
    thinker.start()
    thinker.hear("set a timer for")
    thinker.look()
    await asyncio.sleep(0)
    thinker.hear("set a timer for ten")  # newer words: the decision under way is on old ones
    thinker.user_finished()  # the final decode starts now: it should have the CPU
    await asyncio.sleep(0)
    assert planner.cancelled == (1 if stop_at_end else 0)
    thinker.hear("set a timer for ten minutes")
    if stop_at_end:
        assert not thinker.look()  # once stopped, no new decision starts but the one on the newest words
        assert planner.calls == ["set a timer for", "set a timer for ten"]
    record = await thinker.handoff("set a timer for ten minutes")
    cut = 2 if stop_at_end else 1
    assert record.cancelled == cut and planner.cancelled == cut  # counted once, whoever cut it
    thinker.start()  # the user went on after all: thinking resumes
    thinker.hear("set a timer for ten minutes please")
    assert thinker.look()
    await thinker.close()
    await lane.close()


async def test_the_decision_on_the_newest_words_runs_on_and_is_handed_over_when_the_final_has_them() -> None:
    planner = ScriptedPlanner([("in busan", BUSAN)], delay_s=0.05)
    thinker, lane = await _thinker(planner, Kitchen())
    thinker.start()
    thinker.hear("What's the weather in Busan?")
    thinker.look()
    await asyncio.sleep(0)
    thinker.user_finished()
    assert planner.cancelled == 0
    record = await thinker.handoff("what's the weather in Busan")  # the same words: waited for
    assert [d.plan for d in record.decisions] == [BUSAN] and record.cancelled == 0
    assert thinker.timeline.first("heartbeat_finishing") is not None
    await thinker.close()
    await lane.close()


async def test_the_newest_words_are_decided_on_at_the_end_when_no_look_had_them_and_cut_when_the_final_differs() -> None:
    planner = ScriptedPlanner([("in busan", BUSAN)], delay_s=10.0)
    thinker, lane = await _thinker(planner, Kitchen())
    thinker.hear("What's the weather in Busan?")  # heard after the last look
    thinker.user_finished()
    await asyncio.sleep(0)
    assert planner.calls == ["What's the weather in Busan?"]
    record = await thinker.handoff("What's the weather in Busan tomorrow?")  # other words: cut short
    assert record.cancelled == 1 and planner.cancelled == 1 and not record.decisions
    await thinker.close()
    await lane.close()


async def test_without_finishing_the_newest_every_decision_is_cut_at_the_end() -> None:
    planner = ScriptedPlanner([("in busan", BUSAN)], delay_s=10.0)
    thinker, lane = await _thinker(planner, Kitchen(), ThinkerSettings(finish_newest=False))
    thinker.hear("What's the weather in Busan?")
    thinker.look()
    await asyncio.sleep(0)
    thinker.user_finished()
    await asyncio.sleep(0)
    assert planner.cancelled == 1
    record = await thinker.handoff("What's the weather in Busan?")
    assert record.cancelled == 1 and not record.decisions
    await thinker.close()
    await lane.close()


async def test_the_same_call_is_made_once() -> None:
    kitchen = Kitchen()
    planner = ScriptedPlanner([("in busan", BUSAN)])
    thinker, lane = await _thinker(planner, kitchen)
    for words in ("weather in Busan", "weather in Busan tomorrow", "weather in busan tomorrow please"):
        thinker.hear(words)
        thinker.look()
        await _settle()
    assert kitchen.runs == [("weather", {"location": "Busan"})]
    assert list(thinker.record.calls) == [call_key(lane.registry, "weather", {"location": "Busan"})]
    await thinker.close()
    await lane.close()


async def test_nothing_is_done_on_a_partial_by_any_acting_tool_of_the_real_registry(tmp_path: Path) -> None:
    """Every acting tool hearth has (and any added later): never run early, whatever is decided."""
    config = HearthConfig(tools=ToolsConfig(data_dir=tmp_path))
    home = await open_home_tools(config)
    try:
        acting = [spec for spec in home.registry.specs if spec.side_effects == "act"]
        assert {"timer_start", "shopping_add", "note_add", "volume_set"} <= {s.name for s in acting}
        lane = ToolExecutor(home.registry)
        lane.start()
        for spec in acting:
            assert not spec.speculable, spec.name
            refused = await lane.call(spec.name, {}, origin="speculative")
            assert refused.error is not None and refused.error.kind == "refused_speculative", spec.name
            planner = ScriptedPlanner([("please", ToolPlan("", spec.name, {}))])
            thinker = Thinker(planner, lane, (), Timeline())
            thinker.hear("do it please")
            thinker.look()
            await _settle()
            record = await thinker.handoff()
            assert record.decisions and not record.calls, spec.name  # decided on, never dispatched
        await lane.close()
        assert home.timers.active() == [] and home.lists.items() == [] and home.lists.notes() == []
    finally:
        await home.close()


async def test_a_stale_result_is_not_used() -> None:
    kitchen = Kitchen()
    planner = ScriptedPlanner([("the time", ToolPlan("", "time_now", {}))])
    thinker, lane = await _thinker(planner, kitchen)
    thinker.hear("what's the time")
    thinker.look()
    await _settle()
    record = await thinker.handoff()
    key = call_key(lane.registry, "time_now", {})
    assert key is not None and record.calls[key].result is not None
    assert record.usable(key) is None  # stale_after_s = 0: the time must be read again
    await lane.close()


# -- through a turn ----------------------------------------------------------------


class TimedRecognizer:
    """Partials at set wall-clock times after the audio starts; the final once the audio ends."""

    language = "en"
    sample_rate = 16000

    def __init__(self, partials: list[tuple[float, str]], final: str) -> None:
        self.partials = partials
        self.final = final

    async def transcribe(self, audio: AsyncIterator[AudioChunk], context: str = "", *, hypotheses: int = 1) -> AsyncIterator[Transcript]:
        began = time.monotonic()
        pending = list(self.partials)
        async for _chunk in audio:
            while pending and time.monotonic() - began >= pending[0][0]:
                yield Transcript(pending.pop(0)[1], False, 0, time.monotonic() - began)
        yield Transcript(self.final, True, len(self.final), time.monotonic() - began, self.final)


async def _turn(partials, final, planner: ScriptedPlanner, kitchen: Kitchen, features: Features = Features()):
    registry = kitchen.registry()
    executor, lane = ToolExecutor(registry), ToolExecutor(registry)
    executor.start()
    lane.start()
    deps = make_deps(synthesizer=ToneSynthesizer(seconds_per_char=0.001))
    deps.features = features
    deps.recognizer = TimedRecognizer(partials, final)
    deps.tools = ToolUse(planner, executor, registry, lane=lane, thinker=ThinkerSettings(interval_s=0.05))
    try:
        press = Press()
        asyncio.get_running_loop().call_later(0.0, press.release)
        audio = WavFileMicrophone(speech_like(1.2, silence_before_s=0.1, silence_after_s=0.0)).chunks()
        result = await Assistant(deps).handle(audio, press)
    finally:
        await executor.close()
        await lane.close()
    return result


async def test_the_answer_comes_from_the_early_call_with_no_line_and_no_second_decision() -> None:
    kitchen = Kitchen()
    planner = ScriptedPlanner([("weather in busan", BUSAN)])
    result = await _turn([(0.2, "what's the weather"), (0.5, "what's the weather in Busan")], "What's the weather in Busan?", planner, kitchen)
    marks = [m.name for m in result.timeline.marks]
    assert result.spoken == ["Sunny in Busan."]  # no "let me check": there was no wait
    assert "heartbeat_decision_reused" in marks and "heartbeat_reused" in marks
    assert kitchen.runs == [("weather", {"location": "Busan"})]  # fetched once, early
    assert "What's the weather in Busan?" not in planner.calls  # the final words were decided on already


async def test_a_correction_at_the_end_is_not_answered_with_the_early_result() -> None:
    kitchen = Kitchen()
    planner = ScriptedPlanner([("in busan", BUSAN), ("i mean ilsan", ILSAN)])
    final = "What's the weather in Busan, no, I mean Ilsan?"
    result = await _turn([(0.2, "what's the weather in Busan")], final, planner, kitchen)
    assert result.spoken[-1] == "Sunny in Ilsan."
    assert ("weather", {"location": "Ilsan"}) in kitchen.runs
    assert all(m.name != "heartbeat_reused" for m in result.timeline.marks)


async def test_an_act_heard_early_is_made_only_after_the_user_finished() -> None:
    kitchen = Kitchen()
    planner = ScriptedPlanner([("add milk", MILK)])
    result = await _turn([(0.2, "add milk")], "Add milk.", planner, kitchen)
    starts = [m for m in result.timeline.marks if m.name == "tool_start"]
    ends = [m for m in result.timeline.marks if m.name in ("speech_end",)]
    assert kitchen.runs == [("shopping_add", {"item": "milk"})]
    assert starts and ends and starts[0].t >= ends[-1].t
    assert all(m.name != "heartbeat_fetch_start" for m in result.timeline.marks)


@pytest.mark.parametrize("finish", [True, False])
async def test_a_decision_on_the_last_partial_still_under_way_at_the_end_is_finished_and_taken(finish: bool) -> None:
    # The decision takes longer than the speech has left after the last partial: finished, the
    # answer takes it; cut short (the feature off), the final words are decided on again.
    kitchen = Kitchen()
    planner = ScriptedPlanner([("weather in busan", BUSAN)], delay_s=0.6)
    features = Features() if finish else Features().without("finish-newest")
    result = await _turn([(0.9, "what's the weather in Busan")], "What's the weather in Busan?", planner, kitchen, features)
    marks = [m.name for m in result.timeline.marks]
    assert ("heartbeat_decision_reused" in marks) is finish
    assert ("heartbeat_finishing" in marks) is finish
    assert (planner.calls == ["what's the weather in Busan"]) is finish
    assert result.spoken[-1] == "Sunny in Busan."


async def test_without_heartbeat_nothing_is_thought_before_the_end() -> None:
    kitchen = Kitchen()
    planner = ScriptedPlanner([("weather in busan", BUSAN)])
    result = await _turn([(0.2, "what's the weather in Busan")], "What's the weather in Busan?", planner, kitchen,
                         Features().without("heartbeat"))
    assert planner.calls == ["What's the weather in Busan?"]
    assert result.spoken == ["Let me check the weather.", "Sunny in Busan."]


@pytest.mark.parametrize("text", ["What's the weather in Busan?", "what's  the weather in busan"])
def test_words_of_ignores_case_and_punctuation(text: str) -> None:
    assert words_of(text) == "what's the weather in busan"


@pytest.mark.parametrize(("partial", "final"), [
    ("set a timer for ten minutes", "Set a timer for 10 minutes."), ("add a dozen eggs", "Add 12 eggs."),
    ("two hours for the stock", "2 hours for the stock"), ("라면 타이머 삼 분", "라면 타이머 3분."),
    ("타이머 십 분 맞춰 줘", "타이머 10분 맞춰줘."),
])
def test_words_of_reads_numbers_as_digits_and_korean_without_its_spaces(partial: str, final: str) -> None:
    assert words_of(partial) == words_of(final)


def test_words_of_still_tells_other_numbers_apart() -> None:
    assert words_of("set a timer for ten minutes") != words_of("Set a timer for 15 minutes.")


async def test_a_late_early_call_is_waited_for_not_made_again_and_the_wait_gets_its_line() -> None:
    kitchen = Kitchen(weather_s=2.0)
    planner = ScriptedPlanner([("weather in busan", BUSAN)])
    result = await _turn([(0.2, "what's the weather in Busan")], "What's the weather in Busan?", planner, kitchen)
    reused = next(m for m in result.timeline.marks if m.name == "heartbeat_reused")
    assert reused.detail["waited"] is True
    assert kitchen.runs == [("weather", {"location": "Busan"})]
    assert result.spoken == ["Let me check the weather.", "Sunny in Busan."]


class Sight:
    """Records what a Foresight was asked to make ahead."""

    def __init__(self) -> None:
        self.acts: list[tuple[str, dict]] = []
        self.results: list[str] = []

    def act(self, tool: str, args: dict) -> None:
        self.acts.append((tool, dict(args)))

    def result(self, result) -> None:
        self.results.append(result.output.text)


async def test_the_words_of_the_newest_decision_are_made_ahead_only_once_the_user_finished() -> None:
    planner = ScriptedPlanner([("add milk", MILK), ("in busan", BUSAN)], delay_s=0.02)
    kitchen = Kitchen()
    lane = ToolExecutor(kitchen.registry())
    lane.start()
    sight = Sight()
    thinker = Thinker(planner, lane, (), Timeline(), foresight=sight)  # type: ignore[arg-type]
    thinker.hear("Add milk to")
    thinker.look()
    await _settle()
    assert sight.acts == []  # still speaking: nothing is made ahead of an act on a partial
    thinker.hear("Add milk to the list.")
    thinker.user_finished()  # the newest words are decided on past the end
    await _settle()
    assert sight.acts == [("shopping_add", {"item": "milk"})]
    assert kitchen.runs == []  # made ahead is only words: nothing was added
    await thinker.close()

    thinker = Thinker(planner, lane, (), Timeline(), foresight=sight)  # type: ignore[arg-type]
    thinker.hear("What's the weather in Busan?")
    thinker.look()
    await _settle()
    assert sight.results == []  # fetched early, but the user may still be saying something else
    thinker.user_finished()
    assert sight.results == ["Sunny in Busan."]
    await thinker.close()
    await lane.close()


@pytest.mark.parametrize("partial", ["라면 타이머 삼 분", "장 볼 거에 두부 넣어", "내일 부산 날씨는 어때"])
async def test_a_korean_partial_of_several_words_is_thought_about(partial: str) -> None:
    # Korean's words compare without their spaces, as one run; they are still counted as heard.
    planner = ScriptedPlanner([("부산 날씨", BUSAN)])
    thinker, lane = await _thinker(planner, Kitchen())
    thinker.hear(partial.split()[0])
    assert not thinker.look()  # one word is too few, in Korean as in English
    thinker.hear(partial)
    assert thinker.look()
    await _settle()
    assert planner.calls == [partial]
    await thinker.close()
    await lane.close()
