"""A recipe read aloud step by step: the ingredients, then "next", "repeat", "go back", a timer offered."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.assistant import Assistant
from agent.deciding.commands import local_command, recipe_move, recipe_to_read
from agent.deciding.extract import HANGUL
from agent.deciding.tool_calls import ToolCallPlanner
from agent.deciding.tool_use import ToolUse
from firmware_py.home_tools import SAMPLE_RECIPES
from tests.fakes import ToneSynthesizer, say
from tests.test_turn import make_deps
from tests.test_volume import NoModel
from tools.executor import ToolExecutor
from tools.recipe_reading import ReadingPlace, reading_tools, spoken_line, step_seconds
from tools.recipes import RecipeBook
from tools.registry import ToolRegistry
from tools.settings import SettingsStore
from tools.timers import TimerStore, timer_tools


@pytest.mark.parametrize(("text", "dish"), [
    ("Read me the banana bread recipe", "banana bread"),
    ("Tell me how to make a chocolate cake step by step", "chocolate cake"),
    ("can you walk me through the pancake recipe", "pancake"),
    ("read the recipe", ""),
    ("김치찌개 레시피 읽어 줘", "김치찌개"),
    ("떡볶이 만드는 법 차근차근 알려줘", "떡볶이"),
    # the dish is named in the clause that asks: the remark beside it is no part of the dish, nor a reason to search
    ("Read out the shepherd's pie recipe, I've honestly no idea how it goes.", "shepherd's pie"),
    ("Read me the crumble recipe a bit at a time, I've got butter on my fingers.", "crumble"),
    ("Can you read the carbonara recipe, my fingers are covered in egg?", "carbonara"),
    ("Take me through the flapjack recipe bit by bit.", "flapjack"),
    # "step by step" asks in a clause of its own: the dish is in the words before
    ("Read me how to make the goulash, step by step.", "goulash"), ("How do I make gnocchi, step by step?", "gnocchi"),
    ("Talk me through how to make paella, a bit at a time.", "paella"),
])
def test_asking_for_a_recipe_read_aloud(text: str, dish: str) -> None:
    assert recipe_to_read(text, "en") == dish


@pytest.mark.parametrize("text", ["find me a pancake recipe", "what can I make with eggs", "I read the recipe already, thanks"])
def test_a_search_is_not_a_reading(text: str) -> None:
    assert recipe_to_read(text, "en") is None


@pytest.mark.parametrize(("text", "reading", "move"), [
    ("Next.", False, "next"), ("what's the next step?", False, "next"), ("okay, next please", False, "next"),
    ("go back", False, "back"), ("previous step", False, "back"), ("start over", False, "first"),
    ("what are the ingredients", False, "ingredients"), ("다음", False, "next"), ("다음 단계", False, "next"),
    ("이전 단계", False, "back"), ("재료 알려 줘", False, "ingredients"),
    # Only while a recipe is being read: these mean other things otherwise.
    ("repeat", True, "repeat"), ("again", True, "repeat"), ("다시", True, "repeat"), ("go on", True, "next"),
    ("what do I need", True, "ingredients"),
    ("repeat", False, None), ("다시", False, None), ("continue", False, None), ("what do I need", False, None),
    ("next week is my birthday", True, None), ("cancel the next timer", True, None),
])
def test_moves_through_a_recipe(text: str, reading: bool, move: str | None) -> None:
    assert recipe_move(text, "en", reading) == move


@pytest.mark.parametrize(("text", "move"), [
    ("Hold on, which step was before this one?", "back"), ("Go back one, please.", "back"), ("앞 단계로 다시 가 줘", "back"),
    ("Sorry, say that again?", "repeat"), ("I missed that, one more time.", "repeat"), ("한 번 더 읽어 줄래?", "repeat"),
    ("Okay, I'm done, what now?", "next"), ("Right, carry on.", "next"), ("응 넘어가자", "next"),
    ("Remind me of the ingredients?", "ingredients"), ("So what goes in it?", "ingredients"), ("재료가 뭐였지?", "ingredients"),
    ("Read the first step again.", "first"), ("Let's start over from the top.", "first"), ("처음부터 다시 읽어 줘", "first"),
    ("Start at the top please.", "first"), ("Can you start from the beginning?", "first"),
    # the ingredients asked for again are the ingredients, not the step just read
    ("What were the ingredients again?", "ingredients"), ("Tell me the ingredients one more time.", "ingredients"),
    ("What do I need again?", "ingredients"),
])
def test_a_move_is_read_from_its_words_among_words_any_move_holds(text: str, move: str | None) -> None:
    assert recipe_move(text, "en", reading=True) == move


@pytest.mark.parametrize("text", ["Go back to the store later.", "Say hello to grandma again.", "다시 타이머 맞춰 줘",
                                  "Remind me to stir it in five minutes."])
def test_words_beside_a_move_make_it_something_else(text: str) -> None:
    assert recipe_move(text, "en", reading=True) is None


def _language(text: str) -> str:
    return "ko" if HANGUL.search(text) else "en"


@pytest.mark.parametrize(("text", "move"), [
    # a move as one clause among remarks that ask for nothing else
    ("Hang on, the kettle was loud, read that again.", "repeat"), ("물이 끓어서 못 들었어, 다시 읽어 줘.", "repeat"),
    ("Sorry, my phone rang, say it one more time.", "repeat"),
    ("Flour's in, keep going.", "next"), ("The onions are chopped, what's after this?", "next"),
    ("양파 다 썰었어, 다음 뭐야?", "next"), ("Alright, what happens after that?", "next"),
    ("Hmm, I think I skipped something, back one step.", "back"), ("잠깐, 아까 그 전 단계 뭐였지?", "back"),
    ("Hmm, that's odd, what was the previous one?", "back"),
    # the ingredients, however they are asked for
    ("Are eggs one of the ingredients?", "ingredients"), ("재료에 설탕 들어가?", "ingredients"),
    ("Hmm, what ingredients does the sauce use?", "ingredients"),
    # asked to be told again: no reminder unless a length is said
    ("Remind me what goes into the batter.", "ingredients"), ("Jog my memory, what went into it?", "ingredients"),
    ("Remind me the ingredients, I wasn't listening.", "ingredients"),
    # from the very beginning, however it is put
    ("I lost my place, can we begin again from the top?", "first"), ("Sorry, back to step one please.", "first"),
    ("Okay, from step one, slowly.", "first"),
])
def test_while_reading_a_move_is_heard_among_remarks(text: str, move: str) -> None:
    language = _language(text)
    assert recipe_move(text, language, reading=True) == move


@pytest.mark.parametrize("text", [
    "Hold on, set a timer for the next step.", "Add the ingredients to my shopping list.", "잠깐, 타이머 멈춰 줘.",
    "What's the weather tomorrow again?", "Is it ready yet?", "다음 주에 장 보러 가자.",
])
def test_while_reading_words_for_another_tool_are_no_move(text: str) -> None:
    language = _language(text)
    assert recipe_move(text, language, reading=True) is None


@pytest.mark.parametrize(("text", "dish"), [
    ("Walk me through the risotto.", "risotto"), ("Could you talk me through shakshuka?", "shakshuka"),
    ("잡채 만드는 법 하나씩 읽어 줄래?", "잡채"), ("잡채 하는 거 하나씩 읽어 줘.", "잡채"),
    ("두부조림 만드는 거 처음부터 읽어 줘.", "두부조림"), ("미역국 끓이는 법 차근차근 읽어 줄래?", "미역국"),
])
def test_walking_through_a_dish_is_reading_its_recipe(text: str, dish: str) -> None:
    assert recipe_to_read(text, "en") == dish


def test_a_command_needs_its_tool() -> None:
    assert local_command("next", "en", ["recipe_step"]) is not None
    assert local_command("next", "en", ["timer_start"]) is None


@pytest.mark.parametrize(("step", "seconds"), [
    ("Pour into the tin and bake 55 to 60 minutes, until a skewer comes out clean.", 3300),
    ("Simmer for 1 hour.", 3600), ("Cook until crisp and golden, 4 to 5 minutes.", 240),
    ("떡과 어묵을 넣고 중불에서 10분 끓인다.", 600), ("Heat the oven to 175 °C.", None),
])
def test_the_time_a_step_takes(step: str, seconds: int | None) -> None:
    assert step_seconds(step) == seconds


def test_amounts_are_written_out_for_the_voice() -> None:
    assert spoken_line("75 g melted butter, 1 tsp vanilla, 2 tbsp oil at 175 °C", "en") == (
        "75 grams melted butter, 1 teaspoon vanilla, 2 tablespoons oil at 175 degrees")
    assert spoken_line("떡볶이 떡 300 g", "ko") == "떡볶이 떡 300그램"


@pytest.fixture
def kitchen(tmp_path: Path):
    book = RecipeBook(SAMPLE_RECIPES, tmp_path / "recipes.db")
    book.open()
    settings = SettingsStore(tmp_path / "hearth.db")
    settings.open()
    yield book, settings, tmp_path
    settings.close()
    book.close()


def _tools(book: RecipeBook, settings: SettingsStore, language: str = "en"):
    read, step = reading_tools(book, ReadingPlace(settings), language)
    return read, step


async def test_ingredients_then_one_step_at_a_time(kitchen) -> None:
    book, settings, _ = kitchen
    read, step = _tools(book, settings)
    out = await read.run(read.args(query="banana bread"))
    assert out.text.startswith("Banana bread, for 8. You need 3 ripe bananas, 75 grams melted butter,")
    assert out.text.endswith("and 190 grams plain flour. Say next for the first step.")
    said = [(await step.run(step.args(move=m))).text for m in ("next", "next", "repeat", "back", "first")]
    assert said[0] == "Step 1 of 4. Heat the oven to 175 degrees and butter a loaf tin."
    assert said[1].startswith("Step 2 of 4. Mash the bananas")
    assert said[2] == said[1]
    assert said[3] == said[0] and said[4] == said[0]
    for _ in range(3):
        last = await step.run(step.args(move="next"))
    assert last.text == ("Step 4 of 4, the last one. Pour into the tin and bake 55 to 60 minutes, until a skewer comes out "
                         "clean. Shall I set a 55-minute timer?")
    assert last.data["offer"] == {"tool": "timer_start", "args": {"duration_s": 3300, "label": "banana bread"}}
    assert (await step.run(step.args(move="next"))).text == "That was the last step. Enjoy!"
    assert (await step.run(step.args(move="ingredients"))).text == out.text


async def test_the_place_survives_a_restart(kitchen) -> None:
    book, settings, tmp_path = kitchen
    read, step = _tools(book, settings)
    await read.run(read.args(query="pancakes"))
    await step.run(step.args(move="next"))
    settings.close()
    again = SettingsStore(tmp_path / "hearth.db")
    again.open()
    try:
        _read, step = _tools(book, again)
        assert (await step.run(step.args(move="next"))).text.startswith("Step 2 of")
    finally:
        again.close()


async def test_nothing_open_unknown_and_unreadable_recipes_are_said_plainly(kitchen) -> None:
    book, settings, _ = kitchen
    read, step = _tools(book, settings)
    assert (await step.run(step.args(move="next"))).text.startswith("No recipe is open.")
    assert (await read.run(read.args(query=""))).text == "Which recipe should I read?"
    missing = await read.run(read.args(query="chocolate cake"))
    assert missing.text.startswith("I don't have a recipe for chocolate cake.") and missing.data["error"] == "not_found"
    # Asked for a dish the book does not have, hearth never reads a different one that shares a word.
    soup = await read.run(read.args(query="chicken soup"))
    assert soup.data["error"] == "not_found" and "chicken curry" in soup.text
    korean = await read.run(read.args(query="tteokbokki"))
    assert korean.data["error"] == "other_language"
    assert not any("가" <= c <= "힣" for c in korean.text)  # the English voice gets no Hangul


async def test_a_korean_recipe_in_korean(kitchen) -> None:
    book, settings, _ = kitchen
    read, step = _tools(book, settings, "ko")
    out = await read.run(read.args(query="떡볶이"))
    assert out.text.startswith("떡볶이, 2인분이에요. 재료는 떡볶이 떡 300그램,")
    await step.run(step.args(move="next"))
    second = await step.run(step.args(move="next"))
    assert second.text == "2단계예요. 떡과 어묵을 넣고 중불에서 10분 끓인다. 10분 타이머를 맞출까요?"


async def _dialog(texts: list[str], tmp_path: Path) -> tuple[list[str], TimerStore]:
    book = RecipeBook(SAMPLE_RECIPES, tmp_path / "recipes.db")
    book.open()
    settings = SettingsStore(tmp_path / "hearth.db")
    settings.open()
    timers = TimerStore(tmp_path / "hearth.db")
    timers.open()
    registry = ToolRegistry([*timer_tools(timers), *reading_tools(book, ReadingPlace(settings))])
    executor = ToolExecutor(registry)
    executor.start()
    chat = NoModel()
    deps = make_deps(chat=chat, synthesizer=ToneSynthesizer(seconds_per_char=0.0005))
    model_tools = registry.for_model()
    deps.tools = ToolUse(ToolCallPlanner(chat, model_tools.specs, model_tools.tool_call_schema(), "x"), executor, registry)
    assistant = Assistant(deps)
    spoken = []
    try:
        for text in texts:
            spoken.append(" ".join((await say(assistant, text, speech_s=0.3)).spoken))
    finally:
        await executor.close()
        book.close()
        settings.close()
    return spoken, timers


async def test_reading_aloud_by_voice_and_a_yes_starts_the_offered_timer(tmp_path: Path) -> None:
    texts = ["Read me the banana bread recipe", "next", "what's the next step?", "again", "next", "next", "yes please"]
    spoken, timers = await _dialog(texts, tmp_path)
    assert spoken[0].startswith("Banana bread, for 8.")
    assert spoken[1].startswith("Step 1 of 4.") and spoken[2].startswith("Step 2 of 4.")
    assert spoken[3] == spoken[2]
    assert spoken[5].endswith("Shall I set a 55-minute timer?")
    assert [(t.duration_s, t.label) for t in timers.active()] == [(3300, "banana bread")]
    timers.close()
    assert NoModel.calls == 0


async def test_an_offer_not_taken_starts_nothing(tmp_path: Path) -> None:
    spoken, timers = await _dialog(["read me the waffles recipe", "next", "next", "next", "no thanks"], tmp_path)
    assert spoken[3].endswith("Shall I set a 4-minute timer?")
    assert timers.active() == []
    timers.close()


@pytest.mark.parametrize(("text", "language", "dish"), [
    ("Read out the lentil soup one.", "en", "lentil soup"), ("Read me the chicken one please.", "en", "chicken"),
    ("Can you read the banana bread one", "en", "banana bread"),
    ("된장국 거 읽어 줄래?", "ko", "된장국"), ("그럼 잡채 거 좀 읽어 줘", "ko", "잡채"), ("김치전 거 읽어 줘요", "ko", "김치전"),
])
def test_the_one_of_a_dish_among_those_found_is_read(text: str, language: str, dish: str) -> None:
    assert recipe_to_read(text, language) == dish


@pytest.mark.parametrize(("text", "language"), [
    ("Okay, read the first one.", "en"), ("Read the list one.", "en"), ("목록 거 읽어 줘", "ko"),
])
def test_the_one_that_names_no_dish_is_no_recipe_of_that_name(text: str, language: str) -> None:
    assert recipe_to_read(text, language) in (None, "")
