"""Recipe search: reading files, the incremental index, ranking, Korean queries and the spoken answer."""

from __future__ import annotations

import json
import logging
import os
import time
from pathlib import Path

import pytest
from pydantic import ValidationError

import tools.recipes as recipes_module
from tools.executor import ToolExecutor
from tools.recipe_files import RecipeFormatError, read_recipe
from tools.recipes import TRIGRAM_AVAILABLE, RecipeBook, query_terms, recipe_tools
from tools.registry import ToolRegistry

SAMPLES = Path(__file__).resolve().parent.parent / "recipes"
TOKENIZERS = [True, False] if TRIGRAM_AVAILABLE else [False]


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def md(title: str, ingredients: list[str], steps: list[str], minutes: int | None = None) -> str:
    head = f"---\ntitle: {title}\n" + (f"minutes: {minutes}\n" if minutes else "") + "---\n"
    return head + "## Ingredients\n" + "".join(f"- {i}\n" for i in ingredients) + "## Steps\n" + "".join(
        f"{n}. {s}\n" for n, s in enumerate(steps, 1))


@pytest.fixture
def samples(tmp_path: Path):
    book = RecipeBook(SAMPLES, tmp_path / "index.db")
    book.open()
    yield book
    book.close()


async def search(book: RecipeBook, query: str, language: str = "en"):
    spec = recipe_tools(book, language)[0]
    return await spec.run(spec.args.model_validate({"query": query}))


# -- files ---------------------------------------------------------------------------


def test_markdown_with_front_matter_and_korean_sections(tmp_path: Path) -> None:
    path = write(tmp_path, "k.md", "---\ntitle: 김치찌개\naliases: kimchi stew, kimchi jjigae\nminutes: 30분\nservings: 2\n---\n"
                 "## 재료\n- 김치 2컵\n- 두부\n  반 모\n## 만드는 법\n1. 볶는다.\n2. 끓인다.\n")
    recipe = read_recipe(path, "k.md")
    assert (recipe.title, recipe.minutes, recipe.servings) == ("김치찌개", 30, 2)
    assert recipe.aliases == ("kimchi stew", "kimchi jjigae")
    assert recipe.ingredients == ("김치 2컵", "두부 반 모")  # a wrapped line joins the item above
    assert recipe.steps == ("볶는다.", "끓인다.")


def test_markdown_heading_title_and_json(tmp_path: Path) -> None:
    text = "# Cheese omelette\n\nQuick.\n**Time:** 10 minutes\n분량: 1인분\n\n## Ingredients\n- 3 eggs\n## Method\n- Cook.\n"
    plain = read_recipe(write(tmp_path, "o.md", text), "o.md")
    assert (plain.title, plain.ingredients, plain.steps, plain.description) == ("Cheese omelette", ("3 eggs",), ("Cook.",), "Quick.")
    assert (plain.minutes, plain.servings) == (10, 1)
    data = {"title": "Stew", "minutes": "1 hour", "ingredients": ["beef"], "steps": ["Simmer."]}
    as_json = read_recipe(write(tmp_path, "s.json", json.dumps(data)), "s.json")
    assert (as_json.title, as_json.minutes, as_json.ingredients) == ("Stew", 60, ("beef",))


@pytest.mark.parametrize("name, text, reason", [
    ("bad.json", "{not json", "invalid JSON"),
    ("list.json", "[1, 2]", "not an object"),
    ("untitled.json", '{"ingredients": ["x"]}', "no title"),
    ("open.md", "---\ntitle: x\n", "not closed"),
    ("ingredients.json", '{"title": "x", "ingredients": [1]}', "not a list of strings"),
])
def test_unreadable_recipes_say_why(tmp_path: Path, name: str, text: str, reason: str) -> None:
    with pytest.raises(RecipeFormatError, match=reason):
        read_recipe(write(tmp_path, name, text), name)


def test_non_utf8_file_is_a_format_error(tmp_path: Path) -> None:
    path = tmp_path / "latin1.md"
    path.write_bytes("# Crêpes\n".encode("latin-1"))
    with pytest.raises(RecipeFormatError, match="UTF-8"):
        read_recipe(path, "latin1.md")


# -- the shipped collection ----------------------------------------------------------------


def test_sample_collection_is_complete(samples: RecipeBook) -> None:
    files = [p for p in SAMPLES.iterdir() if p.suffix in (".md", ".json") and not p.name.startswith("README")]
    assert 16 <= len(files) <= 24 and samples.count() == len(files)
    korean = 0
    for path in files:
        recipe = read_recipe(path, path.name)
        assert recipe.minutes and recipe.servings and len(recipe.ingredients) >= 3 and len(recipe.steps) >= 2, path.name
        korean += any("\uac00" <= ch <= "\ud7a3" for ch in recipe.title)
    assert 6 <= korean <= len(files) - 6  # a mix of English and Korean dishes


@pytest.mark.parametrize("query, first", [
    ("banana bread", "Banana bread"),
    ("good pancake recipe", "Pancakes"),
    ("crepes", "Crêpes"),
    ("chicken curry recipe", "Chicken curry"),
    ("how to make lasagne", "Lasagna"),
    ("김치찌개", "김치찌개"),
    ("김치찌개 레시피", "김치찌개"),
    ("김치찌개를 어떻게 만들어", "김치찌개"),
    ("김치 찌개", "김치찌개"),
    ("kimchi stew", "김치찌개"),
    ("된장찌개 어떻게 끓여", "된장찌개"),
    ("잡채 만드는 법", "잡채"),
    ("떡볶이", "떡볶이"),
    ("미역국", "미역국"),
    ("계란말이", "계란말이"),
])
def test_sample_queries_find_the_dish_first(samples: RecipeBook, query: str, first: str) -> None:
    assert samples.search(query)[0].title == first


def test_query_terms_drop_filler_and_split_particles() -> None:
    assert query_terms("Have you got a good pancake recipe?") == ["pancake"]
    assert query_terms("김치찌개를 만드는 법 알려줘") == ["김치찌개를", "김치찌개"]
    assert query_terms("김치 찌개") == ["김치", "찌개", "김치찌개"]
    assert query_terms("recipe") == [] and query_terms("레시피") == []


# -- the index ---------------------------------------------------------------------------


@pytest.mark.parametrize("trigram", TOKENIZERS)
def test_korean_substrings_and_particles(tmp_path: Path, trigram: bool) -> None:
    folder = tmp_path / "r"
    write(folder, "a.md", md("김치찌개", ["김치", "돼지고기"], ["끓인다."]))
    write(folder, "b.md", md("된장찌개", ["된장", "두부"], ["끓인다."]))
    write(folder, "c.md", md("Pancakes", ["flour"], ["Fry."]))
    book = RecipeBook(folder, tmp_path / "i.db", trigram=trigram)
    book.open()
    assert [r.title for r in book.search("김치찌개 레시피")][:1] == ["김치찌개"]
    assert [r.title for r in book.search("김치찌개를")][:1] == ["김치찌개"]
    assert {r.title for r in book.search("찌개")} == {"김치찌개", "된장찌개"}
    assert [r.title for r in book.search("두부")] == ["된장찌개"]
    book.close()


def test_reopen_reads_only_changed_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "r"
    for name in ("one", "two", "three"):
        write(folder, f"{name}.md", md(f"Dish {name}", ["salt"], ["Cook."]))
    reads: list[str] = []
    real = recipes_module.read_recipe
    monkeypatch.setattr(recipes_module, "read_recipe", lambda path, rel: reads.append(rel) or real(path, rel))

    book = RecipeBook(folder, tmp_path / "i.db")
    assert book.open() == recipes_module.IndexStats(indexed=3, unchanged=0, removed=0, failed=0)
    book.close()
    reads.clear()
    book.open()
    assert reads == []  # nothing re-read on an unchanged folder
    book.close()

    changed = write(folder, "two.md", md("Dish two with saffron", ["saffron"], ["Cook."]))
    (folder / "three.md").unlink()
    write(folder, "sub/four.json", json.dumps({"title": "Dish four", "ingredients": ["x"], "steps": ["y"]}))
    stats = book.open()
    assert stats == recipes_module.IndexStats(indexed=2, unchanged=1, removed=1, failed=0)
    assert sorted(reads) == ["sub/four.json", "two.md"]
    assert [r.title for r in book.search("saffron")] == ["Dish two with saffron"]
    assert book.search("three") == []

    # The same size with a new modification time (an editor saving in place) is a change too.
    reads.clear()
    st = changed.stat()
    os.utime(changed, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    assert book.refresh().indexed == 1 and reads == ["two.md"]
    book.close()


def test_bad_file_is_skipped_with_one_log_line(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    folder = tmp_path / "r"
    write(folder, "broken.json", '{"title": "Broken", ')
    write(folder, "good.md", md("Tomato soup", ["tomatoes"], ["Simmer."]))
    write(folder, "README.md", "# How to add recipes\n\n## Ingredients\n- none\n")
    book = RecipeBook(folder, tmp_path / "i.db")
    with caplog.at_level(logging.WARNING, logger="tools.recipes"):
        stats = book.open()
    assert stats.failed == 1 and stats.indexed == 1
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1 and "broken.json" in warnings[0] and "invalid JSON" in warnings[0]
    assert [r.title for r in book.search("tomato")] == ["Tomato soup"]
    assert book.search("ingredients none how") == []  # README is documentation, not a recipe
    caplog.clear()
    book.close()
    with caplog.at_level(logging.WARNING, logger="tools.recipes"):
        assert book.open().failed == 0  # not retried, so not logged again, until the file changes
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    book.close()


def test_ranking_prefers_the_dish_name(tmp_path: Path) -> None:
    folder = tmp_path / "r"
    write(folder, "smoothie.md", md("Breakfast smoothie", ["2 bananas", "banana chips", "milk"],
                                    ["Blend the banana.", "Add more banana.", "Top with banana."]))
    write(folder, "bread.md", md("Banana bread", ["flour"], ["Bake for an hour and let it cool before slicing."]))
    write(folder, "salad.md", md("Fruit salad", ["apple", "a banana"], ["Chop."]))
    book = RecipeBook(folder, tmp_path / "i.db")
    book.open()
    titles = [r.title for r in book.search("banana")]
    assert titles[0] == "Banana bread" and set(titles) == {"Banana bread", "Breakfast smoothie", "Fruit salad"}
    assert [r.title for r in book.search("banana", limit=1)] == ["Banana bread"]
    book.close()


def test_tokenizer_change_rebuilds_the_index(tmp_path: Path) -> None:
    if not TRIGRAM_AVAILABLE:
        pytest.skip("SQLite without the trigram tokenizer")
    first = RecipeBook(SAMPLES, tmp_path / "i.db", trigram=True)
    total = first.open().indexed
    first.close()
    second = RecipeBook(SAMPLES, tmp_path / "i.db", trigram=False)
    assert second.open().indexed == total
    assert second.search("김치찌개")[0].title == "김치찌개"
    second.close()


def test_missing_folder_is_an_empty_book(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    book = RecipeBook(tmp_path / "nowhere", tmp_path / "i.db")
    with caplog.at_level(logging.WARNING):
        assert book.open().indexed == 0
    assert "does not exist" in caplog.text and book.count() == 0
    book.close()


def test_large_folder_still_searches(tmp_path: Path) -> None:
    folder = tmp_path / "many"
    folder.mkdir()
    foods = ["chicken", "beef", "tofu", "mushroom", "lentil", "pork", "salmon", "potato", "rice", "noodle"]
    styles = ["soup", "stew", "salad", "curry", "bake", "stir fry", "pie", "roast"]
    for i in range(2000):
        title = f"{foods[i % 10]} {styles[(i // 10) % 8]} {i}"
        if i == 1234:
            title = "Saffron risotto"
        if i == 777:
            title = "할머니 김치찌개"
        (folder / f"r{i:04d}.md").write_text(md(title, [f"{foods[(i * 7) % 10]}", "salt", "water"], ["Cook it well."]),
                                              encoding="utf-8")
    book = RecipeBook(folder, tmp_path / "i.db")
    assert book.open().indexed == 2000
    started = time.perf_counter()
    assert book.search("saffron risotto")[0].title == "Saffron risotto"
    assert book.search("김치찌개 레시피")[0].title == "할머니 김치찌개"
    assert len(book.search("chicken soup", limit=5)) == 5
    assert time.perf_counter() - started < 2.0
    book.close()
    assert book.open().unchanged == 2000
    book.close()


# -- the tool ----------------------------------------------------------------------------


def test_tool_spec(samples: RecipeBook) -> None:
    spec = recipe_tools(samples)[0]
    assert (spec.name, spec.side_effects, spec.timeout_s) == ("recipe_search", "read", 5.0)
    assert ToolRegistry([spec]).slow("recipe_search", threshold_s=0.3)  # gets a spoken line before it runs
    assert set(spec.schema()["properties"]) == {"query"}
    assert spec.args.model_validate({"query": "  pancakes  "}).query == "pancakes"
    for bad in ({"query": ""}, {"query": "   "}, {"query": "x" * 201}, {}, {"query": "pie", "limit": 3}):
        with pytest.raises(ValidationError):
            spec.args.model_validate(bad)
    with pytest.raises(ValueError, match="unsupported language"):
        recipe_tools(samples, "fr")


async def test_spoken_matches_in_english(samples: RecipeBook) -> None:
    out = await search(samples, "banana bread")
    assert out.text == "I found a recipe for banana bread. It takes 1 hour 10 minutes."
    match = out.data["matches"][0]
    assert match["title"] == "Banana bread" and match["path"] == "banana-bread.md" and match["minutes"] == 70
    assert "3 ripe bananas" in match["ingredients"] and "error" not in out.data

    out = await search(samples, "pancakes")
    assert out.text == "I found 2 recipes: pancakes and crêpes. The first takes 20 minutes."
    out = await search(samples, "rice")
    assert out.text.startswith(f"I found {len(out.data['matches'])} recipes; the best matches are egg fried rice")


async def test_a_voice_is_never_handed_another_script(samples: RecipeBook) -> None:
    import re

    # 떡볶이's aliases name it in Latin letters for the English voice.
    out = await search(samples, "tteokbokki")
    assert out.text.startswith("I found a recipe for tteokbokki.")
    for query in ("rice", "kimchi", "soup", "egg"):
        out = await search(samples, query)
        assert not re.search(r"[가-힣]", out.text), out.text
    for query in ("팬케이크", "라자냐", "바나나"):
        out = await search(samples, query, "ko")
        assert not re.search(r"[A-Za-z]", out.text), out.text


async def test_spoken_matches_in_korean(samples: RecipeBook) -> None:
    out = await search(samples, "김치찌개 레시피", "ko")
    assert out.text == "김치찌개 레시피를 찾았어요. 30분 걸려요."
    out = await search(samples, "찌개", "ko")
    assert out.text == "레시피를 2개 찾았어요: 김치찌개, 된장찌개. 첫 번째는 30분 걸려요."


async def test_nothing_found_is_said_plainly(samples: RecipeBook, tmp_path: Path) -> None:
    out = await search(samples, "sushi")
    assert out.text == "I couldn't find a recipe for sushi." and out.data == {"query": "sushi", "matches": [], "error": "not_found"}
    out = await search(samples, "초밥", "ko")
    assert out.text == "초밥 레시피를 찾지 못했어요." and out.data["error"] == "not_found"
    # A recipe asked for with no dish named is an idea asked for: the quickest are offered (tests/test_meal_ideas.py).
    out = await search(samples, "a recipe please")
    assert out.data["suggested"] is True and out.text.startswith("How about cheese omelette?")
    empty = RecipeBook(tmp_path / "empty", tmp_path / "e.db")
    empty.open()
    for query in ("pancakes", "a recipe please"):
        out = await search(empty, query)
        assert out.data["error"] == "no_recipes" and out.text == "There are no recipes in the recipe folder yet."
    empty.close()


async def test_runs_through_the_executor(samples: RecipeBook) -> None:
    executor = ToolExecutor(ToolRegistry(recipe_tools(samples, "ko")))
    executor.start()
    try:
        result = await executor.call("recipe_search", {"query": "불고기 만드는 법"})
    finally:
        await executor.close()
    assert result.ok and result.output is not None
    assert result.output.data["matches"][0]["title"] == "불고기"
