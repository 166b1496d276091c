"""An open request for an idea of what to cook gets something concrete: the quickest recipes in the book.

"What is a quick idea for dinner tonight?" was answered "Which dish or ingredient should I look
for?": the talker chose the recipe search with a query of no dish ("quick"), and the search asked
back. A kitchen speaker asked for an idea offers one.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agent.assistant import Assistant
from agent.deciding.arguments import grounded
from agent.deciding.intents import asks_for_idea
from agent.deciding.reasoner import Reasoner
from agent.deciding.tool_calls import ToolCallPlanner
from agent.deciding.tool_use import ToolUse
from agent.deps import TurnDeps
from firmware_py.home_tools import SAMPLE_RECIPES
from tests.fakes import EnergyVad, ScriptedRecognizer, say
from tests.test_reasoner import ReasonerChat
from tests.test_turn_tools import CharSink, CharSynthesizer, TimedJson, decision
from tools.executor import ToolExecutor
from tools.recipes import RecipeBook, recipe_tools
from tools.registry import ToolRegistry


@pytest.fixture
def book(tmp_path: Path):
    book = RecipeBook(SAMPLE_RECIPES, tmp_path / "recipes.db")
    book.open()
    yield book
    book.close()


async def search(book: RecipeBook, query: str, language: str = "en"):
    spec = recipe_tools(book, language)[0]
    return await spec.run(spec.args(query=query))


# ---- the words ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "language"), [
    ("What is a quick idea for dinner tonight?", "en"),
    ("what should I cook", "en"),
    ("What should we make for dinner?", "en"),
    ("quick dinner idea", "en"),
    ("Any ideas for lunch?", "en"),
    ("I don't know what to cook tonight.", "en"),
    ("Can you suggest something quick for dinner?", "en"),
    ("What's for dinner?", "en"),
    ("뭐 해 먹지?", "ko"),
    ("간단한 저녁 메뉴 추천해 줘", "ko"),
    ("오늘 저녁 뭐 먹을까?", "ko"),
    ("점심 뭐 만들까", "ko"),
    ("I have no idea what to make for dinner.", "en"),
    ("Any idea what to cook tonight?", "en"),
])
def test_an_open_request_for_an_idea_is_heard_as_one(text: str, language: str) -> None:
    assert asks_for_idea(text, language)


@pytest.mark.parametrize(("text", "language"), [
    ("What should I cook the chicken at?", "en"),
    ("How long should I cook rice?", "en"),
    ("Find me a pancake recipe", "en"),
    ("I have an idea, add milk to the list", "en"),
    ("What's a good substitute for butter?", "en"),
    ("Set a timer for dinner", "en"),
    ("김치찌개 레시피 찾아줘", "ko"),
    ("저녁 몇 시에 먹어?", "ko"),
    ("이거 뭐 먹는 거야?", "ko"),
    ("Any idea how long to cook rice?", "en"),
    ("Can you recommend a substitute for butter in this recipe?", "en"),
    ("저녁 메뉴 추천할 때 간장 대신 뭘 써?", "ko"),
])
def test_other_requests_are_not_ideas(text: str, language: str) -> None:
    assert not asks_for_idea(text, language)


# ---- the recipe book ------------------------------------------------------------------------------


async def test_a_search_without_a_dish_offers_the_quickest_recipes(book: RecipeBook) -> None:
    out = await search(book, "quick")
    assert "error" not in out.data and out.data["suggested"] is True
    assert out.text == "How about cheese omelette? It takes 10 minutes. Or egg fried rice, 15 minutes."
    dinner = await search(book, "quick dinner idea")
    assert dinner.text == "For dinner, how about egg fried rice? It takes 15 minutes. Or tomato pasta, 25 minutes."
    assert [m["title"] for m in dinner.data["matches"]] == ["Egg fried rice", "Tomato pasta"]


async def test_in_korean_the_quickest_korean_recipes_are_offered(book: RecipeBook) -> None:
    out = await search(book, "간단한 저녁 메뉴 추천해 줘", "ko")
    assert out.text == "저녁으로 된장찌개 어때요? 25분이면 돼요. 아니면 김치찌개도 30분이면 돼요."
    out = await search(book, "뭐 해 먹지", "ko")
    assert not re.search(r"[A-Za-z]", out.text) and out.data["suggested"] is True
    assert out.text.startswith("김치볶음밥 어때요? 15분이면 돼요.")


async def test_a_quick_dish_is_searched_quickest_first(book: RecipeBook) -> None:
    out = await search(book, "quick rice")
    minutes = [m["minutes"] for m in out.data["matches"]]
    assert minutes == sorted(minutes) and "suggested" not in out.data


# ---- in the turn ------------------------------------------------------------------------------------


def recipe_deps(talker, text: str, language: str, book: RecipeBook, reasoner=None) -> tuple[TurnDeps, CharSink, ToolExecutor]:
    registry = ToolRegistry(recipe_tools(book, language))
    executor = ToolExecutor(registry)
    planner = ToolCallPlanner(talker, registry.specs, registry.tool_call_schema(), "be brief")
    sink = CharSink()
    deps = TurnDeps(
        vad=EnergyVad(), recognizer=ScriptedRecognizer(text), chat=talker, synthesizer=CharSynthesizer(),
        speaker=sink, language=language, system_prompt="be brief", tools=ToolUse(planner, executor, registry, grounded=grounded),
    )
    if reasoner is not None:
        deps.reasoner = Reasoner(reasoner, registry, language)
    return deps, sink, executor


async def answer(deps: TurnDeps, executor: ToolExecutor, text: str):
    executor.start()
    try:
        return await say(Assistant(deps), text)
    finally:
        await executor.close()


IDEA = ["For dinner, how about egg fried rice?", "It takes 15 minutes.", "Or tomato pasta, 25 minutes."]


@pytest.mark.parametrize(("talker", "line"), [
    # What the demo's talker decided: the search, with a query that names no dish; the search's own line is said.
    (decision("Looking for a quick dinner idea.", "recipe_search", {"query": "quick"}), "Let me look through the recipes."),
    # The search for a dish the words do not name, or no search at all: the book is searched all the same.
    (decision("Looking for pasta.", "recipe_search", {"query": "chicken curry"}), "Let me look through the recipes."),
    (decision("Sure, I can help with that!", "none"), "Let me look through the recipes."),
])
async def test_the_demo_request_is_offered_a_recipe_not_asked_back(talker, line: str, book: RecipeBook) -> None:
    text = "What is a quick idea for dinner tonight?"
    deps, sink, executor = recipe_deps(TimedJson(talker), text, "en", book)
    result = await answer(deps, executor, text)
    assert result.spoken == [line, *IDEA]
    assert [(c.name, c.args) for c in result.tool_calls] == [("recipe_search", {"query": text})]
    assert result.timeline.first("first_token") is not None  # the talker still decided


@pytest.mark.parametrize(("text", "language", "dish"), [
    ("what should I cook", "en", "cheese omelette"),
    ("뭐 해 먹지?", "ko", "김치볶음밥"),
    ("간단한 저녁 메뉴 추천해 줘", "ko", "된장찌개"),
])
async def test_an_idea_is_offered_from_the_book_and_the_reasoner_is_not_asked(text: str, language: str, dish: str, book: RecipeBook) -> None:
    talker = TimedJson(decision("I'm not sure.", "none"))
    reasoner = ReasonerChat(["Maybe a stir-fry."])
    deps, sink, executor = recipe_deps(talker, text, language, book, reasoner=reasoner)
    result = await answer(deps, executor, text)
    assert dish in sink.text() and "not sure" not in sink.text()  # the talker's own answer is not said
    assert reasoner.asked == []
    assert result.route is None and [c.name for c in result.tool_calls] == ["recipe_search"]


@pytest.mark.parametrize(("text", "language"), [
    ("what should I cook", "en"), ("Any ideas for lunch?", "en"), ("뭐 해 먹지?", "ko"),
])
async def test_the_decision_bench_makes_an_idea_the_search_as_the_turn_does(text: str, language: str, book: RecipeBook, tmp_path: Path) -> None:
    from bench.suites.tool_accuracy import run_suite

    suite = tmp_path / "ideas.yaml"
    suite.write_text(f"suite: ideas\nlanguage: {language}\ndescription: one idea\nscenarios:\n"
                     f"  - id: idea\n    text: \"{text}\"\n    category: recipe\n"
                     f"    expect: [{{tool: recipe_search, args: {{query: \"{text}\"}}}}]\n", encoding="utf-8")
    talker = TimedJson(decision("I'm not sure.", "none"))
    deps, _sink, executor = recipe_deps(talker, text, language, book)
    assert asks_for_idea(text, language)
    (row,) = await run_suite(deps.tools.planner, str(suite), reasoner=Reasoner(ReasonerChat(["Maybe a stir-fry."]), deps.tools.registry, language))
    turn = await answer(deps, executor, text)
    assert row["calls"] == [[c.name, c.args] for c in turn.tool_calls] == [["recipe_search", {"query": text}]]
    assert row["right_tool"] and row["right_args"] and row["route"] is None


@pytest.mark.parametrize("text", ["버섯으로 할 만한 요리 있어?", "두부로 만들 수 있는 반찬 있을까?", "감자로 해 먹을 만한 거 없나?"])
def test_what_can_be_made_of_what_is_at_hand_is_an_idea_in_korean(text: str) -> None:
    assert asks_for_idea(text, "ko")


@pytest.mark.parametrize("text", ["Anything I can make with these tomatoes?", "Is there something we could cook with the mince?",
                                  "Is there anything we can do with the leftover rice?"])
def test_what_can_be_made_of_what_is_at_hand_is_an_idea(text: str) -> None:
    assert asks_for_idea(text, "en")
