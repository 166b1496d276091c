"""Fuzzing the recipe file parser: whatever a file holds, it is a Recipe or one RecipeFormatError.

And what comes out is fit to say: a title, times and servings within their bounds, steps that
:func:`~tools.recipe_reading.step_seconds` reads without failing.
"""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from tools.recipe_files import MAX_MINUTES, MAX_SERVINGS, Recipe, RecipeFormatError, read_recipe
from tools.recipe_reading import step_seconds
from tests.fuzzing import fuzz

LINES = [
    "---", "title: Pancakes", "minutes: 20", "minutes: 1e999", "servings: 99999999999999999999", "aliases: a, b", "tags:",
    "# Pancakes", "## Ingredients", "## 재료", "## Steps", "## 만드는 법", "### For the sauce", "- 200 g flour", "1. Whisk.",
    "2) Bake 55 to 60 minutes.", "Time: 1 hour", "**Serves:** 4", "Simmer 10분", "  continued line", "", "#", "-", "1.",
    "Bake " + "9" * 5000 + " minutes.", "시간: " + "7" * 30, "\ufeff", "\x00", "title:", ": value",
]


def _outcome(path: Path, relative: str) -> Recipe | None:
    try:
        recipe = read_recipe(path, relative)
    except RecipeFormatError as exc:
        assert "\n" not in str(exc)
        return None
    assert recipe.title.strip() and recipe.path == relative
    assert recipe.minutes is None or 0 < recipe.minutes <= MAX_MINUTES
    assert recipe.servings is None or 0 < recipe.servings <= MAX_SERVINGS
    for step in recipe.steps:
        seconds = step_seconds(step)
        assert seconds is None or 0 < seconds <= 24 * 3600
    return recipe


@fuzz(scale=2)
@given(st.binary(max_size=600), st.sampled_from(["r.md", "r.json", "r.markdown"]))
def test_random_bytes_are_a_recipe_or_one_format_error(tmp_path_factory, data: bytes, name: str):
    path = tmp_path_factory.mktemp("fuzz-recipe") / name
    path.write_bytes(data)
    _outcome(path, name)


@fuzz(scale=2)
@given(st.lists(st.sampled_from(LINES) | st.text(max_size=40), max_size=30))
def test_random_markdown_is_a_recipe_or_one_format_error(tmp_path_factory, lines: list[str]):
    path = tmp_path_factory.mktemp("fuzz-recipe") / "r.md"
    # A lone surrogate becomes bytes that are not UTF-8: a broken file, which must be refused in one line.
    path.write_bytes("\n".join(lines).encode("utf-8", "surrogatepass"))
    _outcome(path, "r.md")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(10**30), max_value=10**30) | st.floats() | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
json_keys = st.sampled_from(["title", "name", "minutes", "time", "servings", "serves", "ingredients", "steps", "instructions",
                             "aliases", "tags", "description"])


@fuzz(scale=2)
@given(st.dictionaries(json_keys, json_values, max_size=8) | json_values)
def test_random_json_is_a_recipe_or_one_format_error(tmp_path_factory, document):
    path = tmp_path_factory.mktemp("fuzz-recipe") / "r.json"
    path.write_text(json.dumps(document, allow_nan=True), encoding="utf-8")
    _outcome(path, "r.json")
