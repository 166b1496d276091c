"""Tool arguments are bounded to what a kitchen needs, and recipe files are read from their folder only.

Each case here was a way to make a tool speak nonsense (a 150-digit duration, "inf grams"), fail
with an internal error instead of a clear one, or read a file outside its folder.  Real stores in
tmp dirs, through the real executor.
"""

from __future__ import annotations

import ast
import json
import math
import os
import re
from collections.abc import AsyncIterator
from datetime import datetime, timezone
from pathlib import Path

import pytest

from tools.convert import MAX_AMOUNT, convert_tools
from tools.executor import ToolExecutor
from tools.forecast import ForecastFileError, load_forecast
from tools.lists import ListStore, list_tools
from tools.recipe_files import MAX_MINUTES, RecipeFormatError, confined_path, read_recipe
from tools.recipe_reading import step_seconds
from tools.recipes import RecipeBook
from tools.registry import ToolRegistry
from tools.sensors import SensorReading
from tools.timers import MAX_DURATION_S, TimerStore, timer_tools
from tools.weather import WeatherSettings, weather_tools

TOOLS_DIR = Path(__file__).resolve().parent.parent / "tools"


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
async def executor(tmp_path: Path) -> AsyncIterator[ToolExecutor]:
    timers, lists = TimerStore(tmp_path / "hearth.db", Clock()), ListStore(tmp_path / "hearth.db")
    timers.open()
    lists.open()
    runner = ToolExecutor(ToolRegistry([*timer_tools(timers), *list_tools(lists), *convert_tools()]))
    runner.start()
    yield runner
    await runner.close()
    timers.close()
    lists.close()


async def refused(executor: ToolExecutor, name: str, args: dict) -> str:
    result = await executor.call(name, args)
    assert not result.ok and result.error is not None
    assert result.error.kind == "invalid_arguments", result.error
    return result.error.message


# -- timers ------------------------------------------------------------------------------------------


async def test_timer_adjust_refuses_a_delta_of_ten_to_the_300_instead_of_speaking_150_digits(executor: ToolExecutor):
    await executor.call("timer_start", {"duration_s": 600, "label": "pasta"})
    message = await refused(executor, "timer_adjust", {"delta_s": 10**300})
    assert "less than or equal to 86400" in message
    assert "less than or equal to 86400" not in await refused(executor, "timer_adjust", {"delta_s": -(10**300)})


async def test_timer_adjust_at_the_bounds_answers_in_hours_and_minutes(executor: ToolExecutor):
    await executor.call("timer_start", {"duration_s": 600, "label": "pasta"})
    off = await executor.call("timer_adjust", {"delta_s": -MAX_DURATION_S})
    assert off.ok and off.output.text == "Took 24 hours off the pasta timer; 0 seconds left."


async def test_adjusting_a_timer_past_a_day_is_refused_and_the_timer_is_unchanged(executor: ToolExecutor):
    await executor.call("timer_start", {"duration_s": 3600, "label": "dough"})
    for _ in range(2):
        out = await executor.call("timer_adjust", {"delta_s": MAX_DURATION_S})
    assert out.ok and out.output.data["error"] == "too_long"
    assert out.output.text == "A timer can run for at most 24 hours; the dough timer has 1 hour left."
    status = await executor.call("timer_status", {"label": "dough"})
    assert status.output.text == "The dough timer has 1 hour left."


async def test_the_korean_answer_to_a_timer_past_a_day(tmp_path: Path):
    store = TimerStore(tmp_path / "t.db", Clock())
    store.open()
    tools = {t.name: t for t in timer_tools(store, "ko")}
    await tools["timer_start"].run(tools["timer_start"].args(duration_s=MAX_DURATION_S))
    out = await tools["timer_adjust"].run(tools["timer_adjust"].args(delta_s=1))
    assert out.text == "타이머는 최대 24시간까지 맞출 수 있어요."


@pytest.mark.parametrize("label", ["", "   ", "\n\t"])
async def test_a_blank_timer_label_means_no_label(executor: ToolExecutor, label: str):
    out = await executor.call("timer_start", {"duration_s": 300, "label": label})
    assert out.ok and out.output.text == "Timer set for 5 minutes." and out.output.data["label"] is None


async def test_a_timer_label_longer_than_sixty_characters_is_refused(executor: ToolExecutor):
    assert "longer than 60 characters" in await refused(executor, "timer_start", {"duration_s": 60, "label": "x" * 61})


# -- lists and notes -----------------------------------------------------------------------------------


@pytest.mark.parametrize("tool, args", [
    ("shopping_add", {"item": "   "}),
    ("shopping_add", {"item": "\n"}),
    ("shopping_complete", {"item": " \t "}),
    ("note_add", {"text": " \n "}),
])
async def test_a_whitespace_only_item_or_note_is_refused_at_validation(executor: ToolExecutor, tool: str, args: dict):
    assert "must not be blank" in await refused(executor, tool, args)


async def test_a_blank_quantity_is_no_quantity(executor: ToolExecutor):
    out = await executor.call("shopping_add", {"item": "  milk ", "quantity": "   "})
    assert out.output.text == "Added milk to the shopping list."


@pytest.mark.parametrize("tool, args, limit", [
    ("shopping_add", {"item": "x" * 81}, 80),
    ("shopping_add", {"item": "milk", "quantity": "9" * 41}, 40),
    ("note_add", {"text": "word " * 201}, 1000),
])
async def test_text_longer_than_its_bound_is_refused(executor: ToolExecutor, tool: str, args: dict, limit: int):
    assert f"longer than {limit} characters" in await refused(executor, tool, args)


async def test_note_remove_with_an_id_past_sqlites_integers_is_refused_not_an_internal_error(executor: ToolExecutor):
    assert "less than or equal to 9223372036854775807" in await refused(executor, "note_remove", {"id": 10**30})


# -- conversions -------------------------------------------------------------------------------------


@pytest.mark.parametrize("args", [
    {"value": 1e308, "from_unit": "cup", "to_unit": "g", "ingredient": "flour"},
    {"value": 1e308, "from_unit": "C", "to_unit": "F"},
    {"value": -1e308, "from_unit": "C", "to_unit": "K"},
    {"value": float("inf"), "from_unit": "g", "to_unit": "kg"},
    {"value": float("nan"), "from_unit": "g", "to_unit": "kg"},
    {"value": "NaN", "from_unit": "g", "to_unit": "kg"},
])
async def test_convert_refuses_huge_and_non_finite_amounts_instead_of_answering_inf(executor: ToolExecutor, args: dict):
    message = await refused(executor, "convert_units", args)
    assert "value:" in message


async def test_convert_refuses_an_amount_too_small_to_measure(executor: ToolExecutor):
    assert "too small to measure" in await refused(executor, "convert_units", {"value": 1e-300, "from_unit": "g", "to_unit": "kg"})


@pytest.mark.parametrize("value, src, dst, ingredient, expected", [
    (MAX_AMOUNT, "l", "tsp", None, "10000 litres is about 2,030,000 teaspoons."),
    (MAX_AMOUNT, "C", "F", None, "10000 degrees Celsius is 18032 degrees Fahrenheit."),
    (MAX_AMOUNT, "kg", "cup", "cocoa", "10000 kilograms of cocoa is about 118000 cups."),
    (0.001, "g", "l", "honey", "0.001 grams of honey is about 0 litres."),
])
async def test_the_largest_and_smallest_answers_have_no_exponent_and_few_digits(
    executor: ToolExecutor, value: float, src: str, dst: str, ingredient: str | None, expected: str
):
    out = await executor.call("convert_units", {"value": value, "from_unit": src, "to_unit": dst, "ingredient": ingredient})
    assert out.ok and out.output.text == expected
    assert not re.search(r"e[+-]\d|inf|nan", out.output.text)


@pytest.mark.parametrize("unit", ["", "   "])
async def test_a_blank_unit_is_refused_at_validation(executor: ToolExecutor, unit: str):
    assert "must not be blank" in await refused(executor, "convert_units", {"value": 1, "from_unit": unit, "to_unit": "g"})


# -- recipe files ---------------------------------------------------------------------------------


def test_a_symlink_out_of_the_recipe_folder_is_not_read(tmp_path: Path, caplog: pytest.LogCaptureFixture):
    secret = tmp_path / "secret.md"
    secret.write_text("# Secret\n\n## Steps\n1. the password is hunter2\n")
    folder = tmp_path / "recipes"
    folder.mkdir()
    (folder / "pancakes.md").write_text("# Pancakes\n\n## Steps\n1. Whisk.\n")
    (folder / "leak.md").symlink_to(secret)
    (folder / "sub").mkdir()
    (folder / "sub" / "up.md").symlink_to(Path("..") / ".." / "secret.md")
    (folder / "alias.md").symlink_to("pancakes.md")  # a link that stays inside is a recipe like any other
    book = RecipeBook(folder, tmp_path / "recipes.db")
    stats = book.open()
    assert (stats.indexed, stats.failed) == (2, 2)
    assert sorted(r.title for r in book.search("secret password hunter2")) == []
    assert {r.path for r in book.search("pancakes")} == {"pancakes.md", "alias.md"}
    assert "points outside the recipe folder" in caplog.text


@pytest.mark.parametrize("relative", ["../secret.md", "sub/../../secret.md", "/etc/passwd"])
def test_a_path_with_dot_dot_or_an_absolute_path_is_refused(tmp_path: Path, relative: str):
    (tmp_path / "secret.md").write_text("# Secret\n")
    folder = tmp_path / "recipes"
    (folder / "sub").mkdir(parents=True)
    with pytest.raises(RecipeFormatError, match="points outside the recipe folder"):
        confined_path(folder, relative)


def test_a_fifo_named_like_a_recipe_is_refused_without_waiting(tmp_path: Path):
    fifo = tmp_path / "stuck.md"
    os.mkfifo(fifo)
    with pytest.raises(RecipeFormatError, match="not a regular file"):
        read_recipe(fifo, "stuck.md")


@pytest.mark.parametrize("minutes", ["1e999", "NaN", "-5", str(10**40), "0.5", str(MAX_MINUTES + 1)])
def test_json_minutes_that_are_not_a_kitchen_time_are_unknown(tmp_path: Path, minutes: str):
    path = tmp_path / "r.json"
    path.write_text('{"title": "Stew", "minutes": %s, "servings": %s}' % (minutes, minutes))
    recipe = read_recipe(path, "r.json")
    assert (recipe.minutes, recipe.servings) == (None, None)


def test_markdown_minutes_with_thousands_of_digits_are_unknown(tmp_path: Path):
    path = tmp_path / "r.md"
    path.write_text(f"---\ntitle: Stew\nminutes: {'9' * 5000}\n---\n## Steps\n1. Simmer {'7' * 5000} minutes.\n")
    recipe = read_recipe(path, "r.md")
    assert recipe.minutes is None
    assert step_seconds(recipe.steps[0]) is None


def test_json_nested_thousands_deep_is_a_format_error(tmp_path: Path):
    path = tmp_path / "r.json"
    path.write_text('{"title": "x", "steps": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(RecipeFormatError, match="invalid JSON"):
        read_recipe(path, "r.json")


# -- weather ------------------------------------------------------------------------------------------


def _forecast(tmp_path: Path, reading: dict) -> Path:
    now = datetime(2026, 5, 13, 5, tzinfo=timezone.utc)
    cache = {"version": 1, "fetched_at": now.isoformat(), "locations": {"home": {
        "name": "Home", "hourly": [{"time": now.isoformat(), **reading}]}}}
    path = tmp_path / "forecast.json"
    path.write_text(json.dumps(cache))
    return path


@pytest.mark.parametrize("reading", [
    {"temperature_c": float("nan")}, {"temperature_c": 1e308}, {"humidity_pct": 400}, {"wind_kmh": -3},
    {"condition": "x" * 500},
])
def test_a_forecast_reading_no_weather_can_have_stops_the_file(tmp_path: Path, reading: dict):
    with pytest.raises(ForecastFileError):
        load_forecast(_forecast(tmp_path, reading))


class _Sensor:
    def __init__(self, reading: SensorReading) -> None:
        self.reading = reading

    def read(self) -> SensorReading:
        return self.reading


@pytest.mark.parametrize("reading", [SensorReading(float("nan")), SensorReading(-140.0, 50.0), SensorReading(21.0, 180.0)])
async def test_a_sensor_reading_it_cannot_measure_falls_back_to_the_forecast(tmp_path: Path, reading: SensorReading):
    path = _forecast(tmp_path, {"temperature_c": 17.0})
    settings = WeatherSettings(forecast_path=path, home="Home")
    now = datetime(2026, 5, 13, 5, 30, tzinfo=timezone.utc)
    weather = {t.name: t for t in weather_tools(settings, _Sensor(reading), now=lambda: now)}["weather"]
    out = await weather.run(weather.args())
    assert out.text.startswith("The home sensor didn't answer, so this is from the forecast. Now in Home: 17 degrees")
    assert out.data["source"] == "forecast"


# -- no tool runs a shell command ------------------------------------------------------------------------

_SHELL_MODULES = {"subprocess", "pty", "shlex"}
_SHELL_CALLS = {"system", "popen", "execv", "execve", "execvp", "execl", "execlp", "spawnv", "spawnl", "posix_spawn",
                "create_subprocess_exec", "create_subprocess_shell", "startfile"}


def test_no_tool_module_imports_or_calls_anything_that_runs_a_command():
    found = []
    for path in sorted(TOOLS_DIR.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import | ast.ImportFrom):
                names = [a.name for a in node.names] + ([node.module] if isinstance(node, ast.ImportFrom) and node.module else [])
                found += [f"{path.name}: import {n}" for n in names if n.split(".")[0] in _SHELL_MODULES]
            if isinstance(node, ast.Attribute) and node.attr in _SHELL_CALLS:
                found.append(f"{path.name}:{node.lineno}: .{node.attr}")
    assert len(list(TOOLS_DIR.glob("*.py"))) > 15
    assert found == []


def test_the_checks_above_would_see_a_shell_call():
    tree = ast.parse("import subprocess\nos.system('ls')\n")
    attrs = [n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)]
    imports = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    assert "system" in attrs and "subprocess" in imports
    assert math.isfinite(MAX_AMOUNT)


async def test_an_invented_argument_name_with_a_line_break_is_refused_in_one_line(executor: ToolExecutor):
    # Found by tests/test_fuzz_tools.py: the refusal quoted the key as it was, line break and all.
    message = await refused(executor, "timer_start", {"duration_s": 60, "\n": None})
    assert "\n" not in message and "'\\n': Extra inputs are not permitted" in message
