"""The talker and the reasoner: which requests are delegated, what the listener hears meanwhile,
the caps, the fall-back when the reasoner fails, backchannels, and the reasoner kept warm."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Sequence

import pytest

from agent.assistant import Assistant
from agent.deciding.arguments import grounded
from agent.deciding.reasoner import (
    Reasoner, ReasonerSettings, cap_line, copies_a_worked_answer, holding_line, one_item_each, with_notes,
)
from agent.deciding.tool_calls import ToolPlan
from agent.deciding.reference import KitchenReference
from agent.deciding.routing import is_question, knows_how, route_after_decision, route_by_words, several_acts
from agent.model.llm import ChatMessage, json_gbnf
from agent.results import Outcome
from tests.fakes import say
from tests.test_turn_tools import Kitchen, TimedJson, decision, tool_deps


# ---- the rule ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("How long do I poach a salmon fillet?", "en"),
        ("What could we swap in for sour cream?", "en"),
        ("At what temperature does sugar caramelise?", "en"),
        ("What internal temperature should lamb reach?", "en"),
        ("Is it safe to reheat cooked rice twice?", "en"),
        ("Why does my custard go lumpy?", "en"),
        ("달걀 완숙은 몇 분 삶아?", "ko"),
        ("대파는 어떻게 보관해?", "ko"),
        ("된장은 왜 마지막에 풀어?", "ko"),
    ],
)
def test_questions_for_know_how_go_to_the_reasoner_by_their_words(text: str, language: str) -> None:
    route = route_by_words(text, language)
    assert route is not None and (route.to, route.reason) == ("reasoner", "knowledge")


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("How much time has the pasta timer got left?", "en"),  # the household's timer
        ("How much longer for the rice?", "en"),
        ("How many grams is two cups of flour?", "en"),  # the converter answers exactly
        ("How many teaspoons in a tablespoon?", "en"),
        ("How do I make crumpets?", "en"),  # the recipe tools
        ("How cold is it outside tomorrow?", "en"),  # the weather
        ("What's on my shopping list?", "en"),
        ("Set a timer for 10 minutes", "en"),
        ("타이머 얼마나 남았어?", "ko"),
        ("내일 날씨 어때?", "ko"),
        ("한 큰술은 몇 작은술이야?", "ko"),
    ],
)
def test_what_the_tools_keep_or_compute_stays_with_the_talker(text: str, language: str) -> None:
    assert route_by_words(text, language) is None


@pytest.mark.parametrize(
    ("text", "language", "several"),
    [
        ("Add flour and butter to my shopping list.", "en", False),  # one act on two things: made once per thing
        ("Add flour to the list and set a timer for an hour.", "en", True),
        ("Set a timer for ten minutes and add eggs to the list.", "en", True),
        ("장보기 목록에 대파랑 두부 추가해 줘.", "ko", False),
        ("우유 추가하고 타이머 오 분 맞춰 줘.", "ko", True),
        ("Timer for a minute and a half, please.", "en", False),
        ("And another one for the broccoli, eight minutes.", "en", False),  # a follow-up's "and"
        ("Set a timer for ninety minutes, no wait, two hours.", "en", False),  # a correction is one act
        ("Take the lemons off the shopping list, I got them.", "en", False),
        ("What's the difference between baking soda and baking powder?", "en", False),  # a question
    ],
)
def test_several_acts_in_one_request(text: str, language: str, several: bool) -> None:
    assert several_acts(text, language) is several


def test_after_the_talker_decides_a_question_it_has_no_tool_for_is_delegated() -> None:
    assert route_after_decision("What goes well with lamb?", "en", None, True).reason == "talker_unsure"
    assert route_after_decision("Tell me a joke.", "en", None, True).to == "talker"
    assert route_after_decision("What time is it?", "en", "time_now", True).to == "talker"
    # An act the words do not support, on words that ask: the talker was unsure.
    assert route_after_decision("Can I freeze cooked rice?", "en", "timer_start", False).reason == "talker_unsure"
    assert route_after_decision("Add the salt yourself later", "en", "shopping_add", False).to == "talker"  # asked back
    # An act chosen on a question that is not a request: no timer for a three minute egg.
    assert route_after_decision("Is a three minute egg still runny?", "en", "timer_start", True, acts=True).reason == "talker_unsure"
    assert route_after_decision("Can you set a timer for five minutes?", "en", "timer_start", True, acts=True).to == "talker"
    assert route_after_decision("타이머 5분 맞춰 줄래?", "ko", "timer_start", True, acts=True).to == "talker"
    assert route_after_decision("What's on my list?", "en", "shopping_list", True, acts=False).to == "talker"


def test_korean_small_talk_stays_out_of_the_reasoner() -> None:
    # Not a question: no route to the reasoner, which wrote well-formed nonsense for these.
    assert route_after_decision("고마워.", "ko", None, True).to == "talker"
    assert route_after_decision("불 좀 꺼줘.", "ko", None, True).to == "talker"
    assert route_after_decision("달걀 완숙은 몇 분 삶아?", "ko", None, True).reason == "talker_unsure"


@pytest.mark.parametrize(
    ("text", "language", "question"),
    [("What time is it", "en", True), ("Set a timer", "en", False), ("밥은 몇 분 뜸 들여?", "ko", True), ("우유 추가해 줘", "ko", False)],
)
def test_questions_are_told_from_requests(text: str, language: str, question: bool) -> None:
    assert is_question(text, language) is question


def test_know_how_needs_no_digit() -> None:
    assert knows_how("How long should a roast chicken rest?", "en")
    assert not knows_how("How long should I set 5 minutes for?", "en")


# ---- the reasoner's prompts ---------------------------------------------------------------------


class ReasonerChat:
    """A scripted reasoner: a reply per call kind, written piece by piece after ``ttft_s``."""

    def __init__(self, answer: Sequence[str] = ("About six minutes.",), calls: str = "", ttft_s: float = 0.01,
                 fail: BaseException | None = None, continues: bool = True) -> None:
        self.answer = list(answer)
        self.calls_json = calls
        self.ttft_s = ttft_s
        self.fail = fail
        self.continues_reply = continues
        self.asked: list[tuple[list[ChatMessage], dict | None, str]] = []
        self.kept: list[list[list[ChatMessage]]] = []
        self.keep_started = asyncio.Event()
        self.keep_s = 0.0
        self.keep_cancelled = 0

    async def warm(self, system_prompt: str) -> None:
        pass

    async def keep_heads(self, prompts) -> int:
        self.kept.append([list(p) for p in prompts])
        self.keep_started.set()
        try:
            await asyncio.sleep(self.keep_s)
        except asyncio.CancelledError:
            self.keep_cancelled += 1
            raise
        return len(prompts)

    async def stream(self, messages, max_tokens=None, json_schema=None, reply_start: str = "") -> AsyncIterator[str]:
        self.asked.append((list(messages), json_schema, reply_start))
        await asyncio.sleep(self.ttft_s)
        if self.fail is not None:
            raise self.fail
        for piece in ([self.calls_json] if json_schema is not None else self.answer):
            yield piece
            await asyncio.sleep(0.005)


def registry():
    return Kitchen().registry()


def test_the_answer_prompt_bounds_the_history_and_carries_the_reference_notes() -> None:
    chat = ReasonerChat()
    reasoner = Reasoner(chat, registry(), "en", ReasonerSettings(history_turns=2))
    history = [ChatMessage("user" if i % 2 == 0 else "assistant", f"turn {i}") for i in range(12)]
    messages = reasoner.answer_messages("How long do I boil an egg?", history, "Let me think.", ["Eggs: 6 minutes for runny."])
    assert [m.content for m in messages[-5:-1]] == ["turn 8", "turn 9", "turn 10", "turn 11"]
    assert messages[-1].content == with_notes("How long do I boil an egg?", ["Eggs: 6 minutes for runny."], "en")
    assert "Eggs: 6 minutes for runny." in messages[-1].content
    # The head kept warm ends with the conversation so far; only the question is read after it.
    assert [i for i, m in enumerate(messages) if m.keep] == [len(messages) - 2]
    assert "You have just said" not in messages[0].content  # a local model is handed the line itself


def test_a_remote_reasoner_is_told_the_line_it_goes_on_from() -> None:
    reasoner = Reasoner(ReasonerChat(continues=False), registry(), "ko")
    system = reasoner.answer_messages("왜?", [], holding_line("knowledge", "ko"))[0].content
    assert holding_line("knowledge", "ko") in system


async def test_a_local_reasoner_continues_the_holding_line() -> None:
    chat = ReasonerChat(["For a runny yolk, six minutes."])
    reasoner = Reasoner(chat, registry(), "en")
    pieces = [p async for p in reasoner.answer("How long do I boil an egg?", (), "Let me think.")]
    assert pieces == ["For a runny yolk, six minutes."]
    assert chat.asked[0][2] == "Let me think. "


def test_the_calls_schema_compiles_to_a_grammar_and_caps_the_calls() -> None:
    reasoner = Reasoner(ReasonerChat(), registry(), "en", ReasonerSettings(max_calls=2))
    schema = reasoner.calls_schema
    assert schema["properties"]["calls"]["maxItems"] == 2
    assert all("say" not in branch["properties"] for branch in schema["properties"]["calls"]["items"]["anyOf"])
    assert "timer_start" in json_gbnf(schema)


async def test_plan_keeps_known_tools_in_order_and_at_most_max_calls() -> None:
    calls = {"calls": [{"tool": "shopping_add", "args": {"item": "flour"}}, {"tool": "shopping_add", "args": {"item": "butter"}},
                       {"tool": "shopping_add", "args": {"item": "sugar"}}]}
    reasoner = Reasoner(ReasonerChat(calls=json.dumps(calls)), registry(), "en", ReasonerSettings(max_calls=2))
    plans = await reasoner.plan("Add flour, butter and sugar")
    assert [(p.tool, p.args) for p in plans] == [("shopping_add", {"item": "flour"}), ("shopping_add", {"item": "butter"})]
    broken = Reasoner(ReasonerChat(calls='{"calls": [{"tool": "shopping_'), registry(), "en")
    assert await broken.plan("Add flour and butter") == []


async def test_a_korean_list_item_joining_two_things_is_one_call_each() -> None:
    calls = {"calls": [{"tool": "shopping_add", "args": {"item": "대파랑 두부"}},
                       {"tool": "shopping_complete", "args": {"item": "당근이랑 양파하고 우유"}}]}
    reasoner = Reasoner(ReasonerChat(calls=json.dumps(calls)), registry(), "ko", ReasonerSettings(max_calls=4))
    plans = await reasoner.plan("장보기 목록에 대파랑 두부 추가하고 당근이랑 양파하고 우유는 빼 줘")
    assert [(p.tool, p.args["item"]) for p in plans] == [
        ("shopping_add", "대파"), ("shopping_add", "두부"),
        ("shopping_complete", "당근"), ("shopping_complete", "양파"),  # capped at max_calls
    ]


def test_one_item_each_leaves_single_things_and_english_alone() -> None:
    for item in ("사과", "고사리랑", "mac and cheese", "salt and pepper"):
        plan = ToolPlan("", "shopping_add", {"item": item})
        assert one_item_each(plan) == [plan]
    timer = ToolPlan("", "timer_start", {"duration_s": 60, "label": "라면이랑 계란"})
    assert one_item_each(timer) == [timer]


def test_the_reference_finds_a_fact_for_a_question_and_nothing_for_small_talk() -> None:
    bank = {"en": [("how long boil egg soft runny hard minutes", "A runny yolk takes about 6 minutes; hard-boiled 10 to 12."),
                   ("fridge temperature cold how cold", "A fridge should be at or below 4 °C, 40 °F.")]}
    reference = KitchenReference(bank)
    assert reference.lookup("How long should I boil an egg?", "en") == ["A runny yolk takes about 6 minutes; hard-boiled 10 to 12."]
    assert reference.lookup("Tell me a joke", "en") == []
    assert reference.lookup("냉장고 온도는?", "ko") == []  # no Korean facts in this bank


def test_the_shipped_reference_has_facts_in_both_languages() -> None:
    reference = KitchenReference()
    assert len(reference) > 300
    assert reference.lookup("What temperature should the fridge be?", "en")
    assert reference.lookup("냉장고 온도는 몇 도가 좋아?", "ko")


# ---- in the turn ---------------------------------------------------------------------------------


def with_reasoner(chat_talker, reasoner_chat, text, kitchen=None, settings=ReasonerSettings(), language="en"):
    kitchen = kitchen or Kitchen()
    deps, sink, executor = tool_deps(chat_talker, kitchen, text=text, grounded=grounded, language=language)
    deps.reasoner = Reasoner(reasoner_chat, deps.tools.registry, language, settings)
    return deps, sink, executor, kitchen


async def run_text(deps, executor, *texts):
    assistant = Assistant(deps)
    executor.start()
    try:
        return [await say(assistant, text) for text in texts], assistant
    finally:
        await executor.close()


async def test_a_question_for_knowledge_is_answered_by_the_reasoner_after_the_holding_line():
    talker = TimedJson(decision("Ten minutes.", "none"))
    reasoner = ReasonerChat(["For a runny yolk, ", "about six minutes."], ttft_s=0.05)
    deps, sink, executor, _ = with_reasoner(talker, reasoner, "How long do I boil an egg?")
    (result,), _ = await run_text(deps, executor, "How long do I boil an egg?")
    assert sink.text() == "Let me think.For a runny yolk, about six minutes."
    assert [u.kind for u in result.units] == ["holding", "answer"]
    assert result.route == "knowledge"
    assert talker.calls == []  # routed by the words: the talker was never asked
    tl = result.timeline
    assert tl.first("route").detail == {"to": "reasoner", "reason": "knowledge", "where": "local"}
    assert tl.first("unit_audio_out").t <= tl.first("reasoner_first_token").t  # the line was heard while the reasoner worked


async def test_a_question_the_talker_has_no_tool_for_goes_to_the_reasoner_and_the_talkers_guess_is_never_said():
    # No word rule reads it as know-how ("What goes well with lamb?" would go by its words).
    talker = TimedJson(decision("Thyme is great.", "none"))
    reasoner = ReasonerChat(["Rosemary and garlic."])
    deps, sink, executor, _ = with_reasoner(talker, reasoner, "Do capers belong in a lamb stew?")
    (result,), _ = await run_text(deps, executor, "Do capers belong in a lamb stew?")
    assert result.route == "talker_unsure"
    assert "Thyme" not in sink.text()
    assert sink.text().endswith("Rosemary and garlic.")


@pytest.mark.parametrize(("opening", "question", "language"), [
    # the worked answers of the prompt's head, said to other questions
    ("30분에서 40분쯤 찌면 돼요.", "냉동실에 뭐뭐 있더라?", "ko"),
    ("고구마는 김이 오른 찜기에서 30분에서 40분쯤 쪄요.", "식기세척기 다 돌았어?", "ko"),
    ("Moisture from the inside moves into the crust; a paper bag", "Is the dishwasher done?", "en"),
    ("Maple syrup or golden syrup, in the same amount.", "Which pan is best for searing fish?", "en"),
])
def test_an_opening_copied_from_a_worked_answer_is_a_copy(opening: str, question: str, language: str) -> None:
    assert copies_a_worked_answer(opening, question, language)


@pytest.mark.parametrize(("opening", "question", "language"), [
    ("감자는 김이 오른 찜기에서 20분쯤 찌면 돼요.", "감자 몇 분 쪄?", "ko"),  # the example's form, about what was asked
    ("고구마는 김이 오른 찜기에서 30분에서 40분쯤 찌면 돼요.", "고구마 몇 분 쪄야 돼?", "ko"),  # the worked question itself
    ("Boil the eggs for about nine minutes.", "How long do I boil eggs?", "en"),
    ("Brown rice takes about 40 to 45 minutes at a gentle simmer.", "How long does brown rice need?", "en"),
])
def test_an_answer_of_its_own_is_no_copy(opening: str, question: str, language: str) -> None:
    assert not copies_a_worked_answer(opening, question, language)


async def test_a_copied_answer_is_held_back_and_the_user_asked_to_say_it_another_way():
    talker = TimedJson(decision("Sure.", "none"))
    reasoner = ReasonerChat(["Moisture from the inside ", "moves into the crust; ", "a paper bag keeps it crisp."])
    deps, sink, executor, _ = with_reasoner(talker, reasoner, "Do capers belong in a lamb stew?")
    (result,), _ = await run_text(deps, executor, "Do capers belong in a lamb stew?")
    assert result.route == "talker_unsure"
    assert "crust" not in sink.text() and sink.text().endswith("Could you say it another way?")


async def test_an_answer_is_said_whole_once_its_opening_is_judged():
    reasoner = Reasoner(ReasonerChat(["Capers ", "are ", "fine ", "in a lamb stew. ", "Add them late."]), registry(), "en")
    assert [p async for p in reasoner.answer("Do capers belong in a lamb stew?")] == \
        ["Capers ", "are ", "fine ", "in a lamb stew. ", "Add them late."]
    short = Reasoner(ReasonerChat(["Yes."]), registry(), "en")
    assert [p async for p in short.answer("Can I freeze pesto?")] == ["Yes."]


@pytest.mark.parametrize(("said", "answer"), [
    ("Thank you.", "You're welcome."), ("Thank you so much!", "You're welcome."), ("Hello!", "Hello!"), ("Never mind.", "Okay."),
])
async def test_small_talk_gets_its_template_never_the_talkers_words_nor_the_reasoner(said, answer):
    talker = TimedJson(decision("Sorry, I'm not a fan of those!", "none"))
    reasoner = ReasonerChat()
    deps, sink, executor, _ = with_reasoner(talker, reasoner, said)
    (result,), _ = await run_text(deps, executor, said)
    assert (sink.text(), result.route, reasoner.asked) == (answer, None, [])
    assert {source for source, _ in result.reply_sources} == {"template"}


@pytest.mark.parametrize(("said", "answer"), [
    ("고마워.", "천만에요."),
    ("안녕, 좋은 아침!", "안녕하세요!"),
    ("타이머 좀... 아, 아니다. 신경 쓰지 마.", "네, 알겠어요."),
    ("로봇청소기 돌려 줘", "죄송해요, 그건 아직 못 해요."),
])
@pytest.mark.parametrize("with_reasoner_model", [True, False])
async def test_korean_without_a_tool_gets_a_template_never_the_talkers_words(said, answer, with_reasoner_model):
    # The talker writes no Korean sentences: these are what it wrote for such requests.
    talker = TimedJson(decision("텔레치 켜, 대담하기 쉬을 것이 자사를 통합.", "none"))
    reasoner = ReasonerChat(["30분에서 40분쯤 찌면 돼요."])
    deps, sink, executor, _ = with_reasoner(talker, reasoner, said, language="ko")
    if not with_reasoner_model:
        deps.reasoner = None
    (result,), _ = await run_text(deps, executor, said)
    assert sink.text() == answer
    assert result.route is None and reasoner.asked == [] and result.outcome == Outcome.ANSWERED


@pytest.mark.parametrize(("said", "answer"), [
    ("Please run the dishwasher.", "Sorry, I can't do that yet."),  # a request nothing here serves
    ("Could you call my sister?", "Sorry, I can't do that yet."),
    ("Purple elephant kitchen.", "Sorry, I'm not sure what you'd like. Could you say it another way?"),  # words nothing understood
    ("Banana the with of.", "Sorry, I'm not sure what you'd like. Could you say it another way?"),
])
async def test_english_words_no_tool_serves_get_an_honest_line_not_the_talkers(said, answer):
    from agent.features import Features

    talker = TimedJson(decision("No, no way!", "none"))
    deps, sink, executor, _ = with_reasoner(talker, ReasonerChat(), said)
    deps.features = Features(reasoner=False)
    (result,), _ = await run_text(deps, executor, said)
    assert result.reply == answer and "no way" not in result.reply.lower()


async def test_a_failed_reasoner_leaves_a_korean_template_not_the_talkers_words():
    talker = TimedJson(decision("에어를 좌구하다.", "none"))
    reasoner = ReasonerChat(fail=RuntimeError("http://10.0.0.5:8080: connection refused"))
    deps, sink, executor, _ = with_reasoner(talker, reasoner, "닭가슴살은 왜 퍽퍽해?", language="ko")
    (result,), _ = await run_text(deps, executor, "닭가슴살은 왜 퍽퍽해?")
    assert sink.text() == holding_line("knowledge", "ko") + "죄송해요, 그건 답을 드릴 수 없어요."


async def test_several_acts_are_made_one_by_one_through_the_same_checks():
    calls = {"calls": [{"tool": "shopping_add", "args": {"item": "flour"}}, {"tool": "timer_start", "args": {"duration_s": 600}},
                       {"tool": "shopping_add", "args": {"item": "butter"}}]}  # the third nobody asked for
    reasoner = ReasonerChat(calls=json.dumps(calls))
    said = "Add flour to my shopping list and set a timer for ten minutes."
    deps, sink, executor, kitchen = with_reasoner(TimedJson([]), reasoner, said)
    (result,), _ = await run_text(deps, executor, said)
    assert kitchen.shopping == ["flour"]  # the butter is not in the words: asked back, not made
    assert len(kitchen.timers) == 1
    assert result.route == "several_acts"
    assert [(c.name, c.ran) for c in result.tool_calls] == [("shopping_add", True), ("timer_start", True), ("shopping_add", False)]
    assert sink.text().startswith(holding_line("several_acts", "en") + "Added flour.Timer set.")


async def test_a_reasoner_past_its_wall_time_is_stopped_and_the_talker_says_so():
    reasoner = ReasonerChat(["Never heard."], ttft_s=5.0)
    deps, sink, executor, _ = with_reasoner(TimedJson([]), reasoner, "Why does bread go stale?", settings=ReasonerSettings(max_s=1.0))
    started = time.monotonic()
    (result,), _ = await run_text(deps, executor, "Why does bread go stale?")
    assert time.monotonic() - started < 4.0
    assert sink.text() == holding_line("knowledge", "en") + cap_line("en")
    assert result.timeline.first("reasoner_capped") is not None


async def test_a_failed_reasoner_leaves_an_honest_line_not_the_talkers_guess():
    talker = TimedJson(decision("About ten minutes.", "none"))
    reasoner = ReasonerChat(fail=RuntimeError("http://10.0.0.5:8080: connection refused"))
    deps, sink, executor, _ = with_reasoner(talker, reasoner, "How long do I boil an egg?")
    (result,), _ = await run_text(deps, executor, "How long do I boil an egg?")
    assert sink.text() == holding_line("knowledge", "en") + "Sorry, I don't have an answer for that."
    assert result.route is None and result.outcome == Outcome.ANSWERED
    assert result.timeline.first("reasoner_failed") is not None


async def test_without_the_reasoner_a_question_no_tool_answers_is_said_to_have_no_answer():
    from agent.features import Features

    talker = TimedJson(decision("About ten minutes.", "none"))
    reasoner = ReasonerChat()
    deps, sink, executor, _ = with_reasoner(talker, reasoner, "How long do I boil an egg?")
    deps.features = Features(reasoner=False)
    (result,), _ = await run_text(deps, executor, "How long do I boil an egg?")
    assert (sink.text(), reasoner.asked) == ("Sorry, I don't have an answer for that.", [])


# ---- backchannels and the warm reasoner ------------------------------------------------------------


async def test_a_backchannel_is_folded_into_the_conversation_not_answered():
    talker = TimedJson(decision("It's twelve o'clock.", "time_now", {}))
    deps, sink, executor, _ = with_reasoner(talker, ReasonerChat(), "what time is it")
    (first, mm, then), assistant = await run_text(deps, executor, "what time is it", "Mm, okay.", "what time is it")
    assert mm.outcome == Outcome.BACKCHANNEL and mm.spoken == [] and mm.tool_calls == []
    history = [m.content for m in assistant.history]
    assert "Mm, okay." not in history
    assert history.count("what time is it") == 2


async def test_okay_after_a_question_is_an_answer_not_a_backchannel():
    talker = TimedJson(decision("Adding it.", "shopping_add", {"item": "milk"}))
    # The milk is said (an item nobody said is asked for, not asked about); the add is not asked for.
    deps, sink, executor, kitchen = with_reasoner(talker, ReasonerChat(), "milk is running low")
    (asked, yes), _ = await run_text(deps, executor, "milk is running low", "okay")
    assert asked.pending is not None
    assert yes.outcome == Outcome.ANSWERED and kitchen.shopping == ["milk"]


async def test_the_reasoner_is_kept_warm_with_the_conversation_and_a_press_stops_it():
    talker = TimedJson(decision("It's twelve o'clock.", "time_now", {}))
    reasoner = ReasonerChat()
    reasoner.keep_s = 5.0
    deps, sink, executor, _ = with_reasoner(talker, reasoner, "what time is it")
    assistant = Assistant(deps)
    executor.start()
    try:
        await say(assistant, "what time is it")
        await asyncio.wait_for(reasoner.keep_started.wait(), 1.0)
        heads = reasoner.kept[-1]
        assert {m.content for head in heads for m in head} >= {"what time is it", "It's twelve o'clock."}
        assert all(head[-1].keep for head in heads)
        await say(assistant, "what time is it")  # the next press stops the pre-warm under way
        assert reasoner.keep_cancelled >= 1
    finally:
        assistant._stop_prewarm()
        await executor.close()


async def test_a_turns_prompt_stops_growing_with_the_conversation():
    """Thirty turns: the talker's and the reasoner's prompts late in the conversation are no longer
    than early on (the history is bounded), so a turn's cost does not grow with the conversation."""
    talker = TimedJson(decision("It's twelve o'clock.", "time_now", {}))
    reasoner = ReasonerChat(["About six minutes."])
    deps, sink, executor, _ = with_reasoner(talker, reasoner, "what time is it")
    texts = ["what time is it" if i % 3 else "How long do I boil an egg?" for i in range(30)]
    results, _ = await run_text(deps, executor, *texts)
    assert all(r.outcome == Outcome.ANSWERED for r in results)
    talker_sizes = [sum(len(m.content) for m in messages) for messages, _schema in talker.calls]
    reasoner_sizes = [sum(len(m.content) for m in messages) for messages, _schema, _start in reasoner.asked]
    assert len(talker_sizes) == 20 and len(reasoner_sizes) == 10
    # Once the history is full (four exchanges), later prompts are no longer than those of the
    # turns right after it filled: the same mix of requests, the same size.
    assert max(talker_sizes[10:]) <= max(talker_sizes[4:10])
    assert max(reasoner_sizes[5:]) <= max(reasoner_sizes[2:5])


class PrefillChat(ReasonerChat):
    """A reasoner that records what it was asked to read ahead, each reading taking ``read_s``."""

    def __init__(self, read_s: float = 0.0) -> None:
        super().__init__()
        self.read: list[str] = []
        self.read_s = read_s
        self.read_cancelled = 0

    async def prefill(self, messages) -> int:
        self.read.append(messages[-1].content)
        try:
            await asyncio.sleep(self.read_s)
        except asyncio.CancelledError:
            self.read_cancelled += 1
            raise
        return 10


async def test_the_reasoner_reads_a_know_how_question_while_it_is_said():
    from agent.deciding.reasoner import EarlyReading
    from agent.timeline import Timeline

    chat = PrefillChat(read_s=0.05)
    reasoner = Reasoner(chat, registry(), "en", reference=KitchenReference({"en": [("boil egg minutes", "Eggs boil 6 minutes.")]}))
    reading = EarlyReading(reasoner, [], Timeline())
    for partial in ["How long", "How long do I", "How long do I boil", "How long do I boil"]:
        reading.hear(partial)
        await asyncio.sleep(0.01)
    reading.hear("Set a timer for")  # not a question for knowledge: nothing read
    await asyncio.sleep(0.1)
    await reading.close()
    assert [text.split("\n")[-1] for text in chat.read] == ["How long do I", "How long do I boil"]
    assert chat.read_cancelled == 1  # the newer words gave up the reading under way
    # The notes come first, so the reading on the partial words is the start of the final prompt.
    final = reasoner.answer_messages("How long do I boil an egg?", [], "", reasoner.facts_for("How long do I boil an egg?"))
    assert final[-1].content.startswith(chat.read[-1].rsplit("\n", 1)[0])


async def test_without_read_ahead_the_reasoner_reads_nothing_early():
    from agent.features import Features

    chat = PrefillChat()
    deps, sink, executor, _ = with_reasoner(TimedJson([]), chat, "How long do I boil an egg?")
    deps.features = Features(read_ahead=False)
    await run_text(deps, executor, "How long do I boil an egg?")
    assert chat.read == []


async def test_in_the_turn_the_partials_are_read_ahead_and_the_answer_follows():
    from tests.fakes import ScriptedRecognizer
    from tests.test_turn import run_turn
    from tests.fakes import speech_like

    chat = PrefillChat()
    deps, sink, executor, _ = with_reasoner(TimedJson([]), chat, "How long do I boil an egg for a soft yolk?")
    deps.recognizer = ScriptedRecognizer("How long do I boil an egg for a soft yolk?", partial_every_s=0.3)
    executor.start()
    try:
        result, _ = await run_turn(deps, speech_like(2.0, silence_before_s=0.1, silence_after_s=0.0))
    finally:
        await executor.close()
    assert len(chat.read) >= 2 and all(text.startswith("How long do") for text in chat.read)
    assert result.timeline.first("reasoner_read_ahead").t < result.timeline.first("speech_end").t
    assert result.route == "knowledge" and sink.text().endswith("About six minutes.")
