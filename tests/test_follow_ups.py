"""Follow-ups resolved against what hearth just did: "Actually, make that …" and "How long until it's done?".

"Actually, make that fifteen minutes." after a rice timer was set was asked back as an unrelated
adjustment; "How long until it's done?" with a timer running was answered from general knowledge.
Both lean on the turn before: the first changes the last act (kept as :class:`Act`), the second
asks the timer that runs.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.deciding.arguments import grounded, repair_arguments
from agent.deciding.intents import asks_time_left, asks_which_timers
from agent.deciding.reasoner import Reasoner
from agent.deciding.undo import Act, amended
from tests.test_reasoner import ReasonerChat, run_text
from tests.test_turn_tools import CharSink, CharSynthesizer
from tests.fakes import EnergyVad, ScriptedRecognizer
from agent.deciding.tool_calls import ToolCallPlanner
from agent.deciding.tool_use import ToolUse
from agent.deps import TurnDeps
from tools.executor import ToolExecutor
from tools.registry import ToolRegistry
from tools.timers import TimerStore, timer_tools


class Decisions:
    """A talker that writes one scripted decision per request, in order."""

    def __init__(self, *decisions: dict) -> None:
        self.decisions = list(decisions)
        self.calls = 0

    async def warm(self, system_prompt: str) -> None:
        pass

    async def stream(self, messages, max_tokens=None, json_schema=None):
        self.calls += 1
        yield json.dumps(self.decisions.pop(0) if self.decisions else {"say": "Okay.", "tool": "none"}, ensure_ascii=False)


@pytest.fixture
def timers(tmp_path: Path):
    now = [1000.0]
    store = TimerStore(tmp_path / "hearth.db", clock=lambda: now[0])
    store.open()
    yield store, now
    store.close()


def timer_deps(talker, store: TimerStore, language: str = "en", reasoner: ReasonerChat | None = None):
    registry = ToolRegistry(timer_tools(store, language))
    executor = ToolExecutor(registry)
    planner = ToolCallPlanner(talker, registry.specs, registry.tool_call_schema(), "be brief", repair=repair_arguments)
    deps = TurnDeps(
        vad=EnergyVad(), recognizer=ScriptedRecognizer(""), chat=talker, synthesizer=CharSynthesizer(), speaker=CharSink(),
        language=language, system_prompt="be brief", tools=ToolUse(planner, executor, registry, grounded=grounded),
    )
    if reasoner is not None:
        deps.reasoner = Reasoner(reasoner, registry, language)
    return deps, executor


# ---- "Actually, make that …" --------------------------------------------------------------------------


RICE = Act("timer_start", {"duration_s": 600, "label": "rice"}, {"label": "rice", "duration_s": 600})


@pytest.mark.parametrize(("text", "delta"), [
    ("Actually, make that fifteen minutes.", 300),
    ("Make it 8 minutes.", -120),
    ("No, twelve minutes.", 120),
    ("Actually, twenty minutes instead", 600),
    ("Oh wait, I meant 5 minutes.", -300),
    ("Change it to eleven minutes.", 60),
    ("Set it to nine minutes", -60),
    ("아니, 십오 분으로 해 줘.", 300),
    ("8분으로 바꿔 줘", -120),
    # a bare number counts in the unit of the length it takes back; a reason after it is no more
    ("Ah, no, I meant twenty, it has to go a lot longer.", 600),
    ("Oops, I meant fifteen.", 300),
    ("No, sorry, twelve, I misread the packet.", 120),
    # regret said first, the new length with a copula
    ("아 잘못 말했다, 십오 분이야.", 300),
    ("내가 잘못 말했어, 이십 분이에요.", 600),
    ("아니 이십 분이라고.", 600),
])
def test_a_change_of_length_is_the_last_timers(text: str, delta: int) -> None:
    assert amended(RICE, text, "ko" if any("가" <= c <= "힣" for c in text) else "en") == ("timer_adjust", {"label": "rice", "delta_s": delta})


@pytest.mark.parametrize(("act", "text"), [
    (RICE, "Make it snappy."),
    (RICE, "Set a timer for fifteen minutes."),
    (RICE, "Set the timer for fifteen minutes."),  # maybe a second timer: the talker decides
    (RICE, "Actually, make that fifteen minutes for the pasta."),
    (RICE, "Actually, ten minutes."),  # what it is already
    (RICE, "Twenty please."),  # no word that takes the length back
    (RICE, "And another ten minutes for the rice, it's a big pot."),
    (Act("shopping_add", {"item": "milk"}, {}), "Actually, make that fifteen minutes."),
    (None, "Actually, make that fifteen minutes."),
])
def test_other_words_change_nothing_of_the_last_act(act, text: str) -> None:
    assert amended(act, text, "en") is None


def test_a_change_of_a_change_is_worked_out_from_what_was_added() -> None:
    added = Act("timer_adjust", {"delta_s": 300, "label": "stew"}, {"label": "stew"})
    assert amended(added, "Actually, make that ten minutes.", "en") == ("timer_adjust", {"label": "stew", "delta_s": 300})
    unnamed = Act("timer_start", {"duration_s": 300}, {"label": None, "duration_s": 300})
    assert amended(unnamed, "make it six minutes", "en") == ("timer_adjust", {"label": "last", "delta_s": 60})


@pytest.mark.parametrize(("first", "then", "language", "label"), [
    ("Set a timer for ten minutes for the rice.", "Actually, make that fifteen minutes.", "en", "rice"),
    ("밥 타이머 십 분 맞춰 줘.", "아니, 십오 분으로 해 줘.", "ko", "밥"),
])
async def test_in_the_turn_make_that_changes_the_timer_just_set(first: str, then: str, language: str, label: str, timers) -> None:
    store, now = timers
    # What the talker decided: the start, then an adjustment by the whole new length, which the words
    # do not support as such ("Add 15 minutes to the timer?").
    talker = Decisions({"say": "", "tool": "timer_start", "args": {"duration_s": 600, "label": label}},
                       {"say": "", "tool": "timer_adjust", "args": {"delta_s": 900}})
    deps, executor = timer_deps(talker, store, language)
    (started, changed), _ = await run_text(deps, executor, first, then)
    (timer,) = store.active()
    assert timer.label == label and timer.remaining_s(now[0]) == pytest.approx(900)
    assert changed.pending is None and [(c.name, c.ran) for c in changed.tool_calls] == [("timer_adjust", True)]
    assert talker.calls == 1  # the follow-up needed no decision


# ---- "How long until it's done?" --------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "language"), [
    ("How long until it's done?", "en"), ("How much longer?", "en"), ("Is it done yet?", "en"),
    ("When will it be ready?", "en"), ("How long is left?", "en"), ("How long until the rice is done?", "en"),
    ("언제 다 돼?", "ko"), ("얼마나 더 걸려?", "ko"), ("다 됐어?", "ko"), ("언제 끝나?", "ko"),
])
def test_a_question_of_the_time_left(text: str, language: str) -> None:
    assert asks_time_left(text, language)


@pytest.mark.parametrize(("text", "language"), [
    ("How long do I boil an egg?", "en"), ("How long should I rest a steak?", "en"), ("Is it safe to eat raw eggs?", "en"),
    ("How long does rice take to cook?", "en"), ("파스타 몇 분 삶아?", "ko"), ("달걀은 얼마나 삶아?", "ko"),
])
def test_know_how_is_no_question_of_the_time_left(text: str, language: str) -> None:
    assert not asks_time_left(text, language)


@pytest.mark.parametrize(("text", "language"), [
    # an act on the timer, its "done" saying why
    ("Stop the timer, is it done?", "en"), ("파스타 타이머 꺼도 돼, 다 됐어.", "ko"), ("Cancel the rice one, it's finished.", "en"),
    # the list named, and no timer: what is left to buy
    ("장보기 목록에 뭐 남았어?", "ko"), ("What's left on the shopping list?", "en"), ("How much is left to buy on the list?", "en"),
])
def test_an_act_on_a_timer_or_the_list_is_no_question_of_the_time_left(text: str, language: str) -> None:
    assert not asks_time_left(text, language)


@pytest.mark.parametrize(("first", "then", "language", "left"), [
    ("Set a timer for ten minutes for the rice.", "How long until it's done?", "en", "The rice timer has 8 minutes left."),
    ("밥 타이머 십 분 맞춰 줘.", "언제 다 돼?", "ko", "8분 남았어요."),
])
async def test_with_a_timer_running_it_is_the_timers_time_left(first: str, then: str, language: str, left: str, timers) -> None:
    store, now = timers
    label = "rice" if language == "en" else "밥"
    talker = Decisions({"say": "", "tool": "timer_start", "args": {"duration_s": 600, "label": label}})
    reasoner = ReasonerChat(["Rice takes about 18 minutes."])
    deps, executor = timer_deps(talker, store, language, reasoner)
    executor.start()
    from agent.assistant import Assistant
    from tests.fakes import say

    assistant = Assistant(deps)
    try:
        await say(assistant, first)
        now[0] += 120
        asked = await say(assistant, then)
    finally:
        await executor.close()
    assert reasoner.asked == [] and asked.route is None
    assert [c.name for c in asked.tool_calls] == ["timer_status"]
    assert asked.reply.endswith(left)


@pytest.mark.parametrize(("then", "language", "label"), [
    ("How long until the soup timer is done?", "en", "soup"), ("국 끓이는 타이머 언제 다 돼?", "ko", "국"),
    ("Is the bread done yet?", "en", "bread"),
])
async def test_the_time_left_of_a_timer_named_that_is_not_running_is_asked_by_its_name(then: str, language: str, label: str,
                                                                                      timers) -> None:
    store, now = timers
    first = "Set a timer for ten minutes for the rice." if language == "en" else "밥 타이머 십 분 맞춰 줘."
    rice = "rice" if language == "en" else "밥"
    talker = Decisions({"say": "", "tool": "timer_start", "args": {"duration_s": 600, "label": rice}})
    deps, executor = timer_deps(talker, store, language, ReasonerChat([]))
    (_, asked), _ = await run_text(deps, executor, first, then)
    assert [(c.name, c.args) for c in asked.tool_calls] == [("timer_status", {"label": label})]


async def test_with_no_timer_running_the_question_goes_where_it_went(timers) -> None:
    store, _ = timers
    reasoner = ReasonerChat(["Rice takes about 18 minutes."])
    deps, executor = timer_deps(Decisions(), store, "en", reasoner)
    (asked,), _ = await run_text(deps, executor, "How long until it's done?")
    assert asked.route == "knowledge" and asked.reply.endswith("Rice takes about 18 minutes.")


@pytest.mark.parametrize(("text", "language"), [
    ("Which timers have I got going right now?", "en"), ("Are any timers still running?", "en"), ("Is there a countdown on?", "en"),
    ("Any timers left?", "en"), ("지금 타이머 뭐 뭐 돌아가고 있어?", "ko"), ("타이머 몇 개 켜져 있어?", "ko"),
    ("혹시 타이머 걸려 있나?", "ko"),
])
def test_a_question_of_which_timers_run(text: str, language: str) -> None:
    assert asks_which_timers(text, language)


@pytest.mark.parametrize(("text", "language"), [
    ("Can you set a timer for ten minutes?", "en"), ("Can you turn the timers off?", "en"), ("What time is it?", "en"),
    ("Did you pause the timer?", "en"), ("Could you start a timer going?", "en"), ("타이머 꺼 줄래?", "ko"),
    ("타이머 오 분 맞춰 줄래?", "ko"), ("I've got a timer going.", "en"),
])
def test_an_act_on_timers_or_the_clock_is_no_question_of_which_timers_run(text: str, language: str) -> None:
    assert not asks_which_timers(text, language)


@pytest.mark.parametrize(("text", "language", "said"), [
    ("Which timers have I got going right now?", "en", "No timers"), ("지금 타이머 뭐 돌아가고 있어?", "ko", "타이머"),
])
async def test_which_timers_run_is_the_timers_status_with_none_running(text: str, language: str, said: str, timers) -> None:
    store, _ = timers
    talker = Decisions({"say": "", "tool": "time_now", "args": {}})
    deps, executor = timer_deps(talker, store, language, ReasonerChat([]))
    (asked,), _ = await run_text(deps, executor, text)
    assert [c.name for c in asked.tool_calls] == ["timer_status"] and talker.calls == 0
    assert said in asked.reply


# ---- a list item asked back is one the user said ------------------------------------------------------


@pytest.mark.parametrize(("heard", "item", "asked", "answer", "added", "language"), [
    # The model wrote a food nobody said: it is asked for, never named.
    # (Words the list's readers take a thing from are acted on as said: these name none.)
    ("Oh no, we're all out.", "milk", "What should I add to the shopping list?", "Butter.", "Butter", "en"),
    # Part of it was said: only that part is named.
    ("Could we get more of that cheese?", "cheddar cheese", "Add cheese to the shopping list?", "Yes.", "cheese", "en"),
    ("그거 다 떨어져 가.", "우유", "장보기 목록에 뭘 넣을까요?", "버터", "버터", "ko"),
    ("버터가 좀 부족한 것 같아.", "무염 버터", "장보기 목록에 버터 넣을까요?", "네", "버터", "ko"),
])
async def test_an_item_asked_back_is_one_the_user_said(heard: str, item: str, asked: str, answer: str, added: str, language: str) -> None:
    from tests.test_turn_tools import Kitchen, TimedJson, decision, tool_deps

    kitchen = Kitchen()
    talker = TimedJson(decision("", "shopping_add", {"item": item}))
    deps, sink, executor = tool_deps(talker, kitchen, text=heard, grounded=grounded, language=language)
    deps.tools.planner.repair = repair_arguments
    (first, then), _ = await run_text(deps, executor, heard, answer)
    assert first.reply == asked and kitchen.shopping[:1] == [added]
    assert item not in asked or item in heard


@pytest.mark.parametrize(("text", "language", "delta"), [
    ("Oh hang on, let's say twelve minutes instead.", "en", 240), ("Make that six minutes.", "en", -120),
    ("Actually, nine minutes would be better.", "en", 60), ("No wait, ten minutes.", "en", 120),
    ("Not eight minutes, seven minutes.", "en", -60),
    ("아니 십 분으로 해 줘.", "ko", 120), ("그냥 칠 분으로 바꿔 줘.", "ko", -60), ("아 참, 팔 분 말고 구 분으로 해.", "ko", 60),
])
def test_a_length_taken_back_in_other_words_changes_the_timer_just_set(text: str, language: str, delta: int) -> None:
    started = Act("timer_start", {"duration_s": 480, "label": "rice"}, {"duration_s": 480, "label": "rice"})
    assert amended(started, text, language) == ("timer_adjust", {"label": "rice", "delta_s": delta})


@pytest.mark.parametrize(("text", "language"), [
    ("And another ten minutes for the pasta.", "en"), ("Ten minutes.", "en"), ("Set one more for ten minutes.", "en"),
    ("감자 타이머 십 분도 맞춰 줘.", "ko"), ("Make it eight minutes.", "en"),  # the length it has: nothing to change
    ("타이머 일 분 삼십 초로 해 줘.", "ko"),  # a length asked for with nothing taken back: maybe a new timer, the model's to read
])
def test_a_second_length_or_another_timer_is_no_change_of_the_first(text: str, language: str) -> None:
    assert amended(Act("timer_start", {"duration_s": 480}, {"duration_s": 480}), text, language) is None
