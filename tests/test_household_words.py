"""How a household asks for the time and the weather without the words a manual would use."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.deciding.intents import asks_time_left, cued_tools
from test_several_things import kitchen_picker
from agent.deciding.tool_examples import ExamplePicker
from bench.suites.tool_accuracy import build_registry


@pytest.fixture
def picker(tmp_path: Path) -> ExamplePicker:
    registry, _ = build_registry(tmp_path)
    return ExamplePicker("en", registry=registry)


@pytest.mark.parametrize("text", ["Will I need a jacket tonight?", "Will we need the big coats this weekend?",
                                  "Should I bring a coat this evening?"])
def test_what_to_wear_out_asks_the_weather_not_the_list(picker: ExamplePicker, text: str) -> None:
    assert picker.choices(text, 1, 3)[0] == ["weather"]


def test_what_to_buy_is_still_the_list(picker: ExamplePicker) -> None:
    assert picker.choices("What do I need to buy?", 1, 3)[0] == ["shopping_list"]


@pytest.mark.parametrize("text", ["Is it six yet?", "Has it gone half past five already?", "Is it ten o'clock yet?"])
def test_whether_it_is_an_hour_yet_asks_the_time(text: str, tmp_path: Path) -> None:
    assert "time_now" in cued_tools(text, "en")
    assert kitchen_picker(tmp_path, "en").choices(text, 1, 3)[0] == ["time_now"]


@pytest.mark.parametrize("text", ["Is it five minutes yet?", "Is it one of those days?", "Is it six eggs or seven?"])
def test_other_questions_with_a_number_ask_no_time(text: str) -> None:
    assert "time_now" not in cued_tools(text, "en")


@pytest.mark.parametrize("text", ["How's the pasta getting on for time?", "How are the potatoes doing?", "How's the rice coming along?"])
def test_how_the_thing_cooking_is_doing_asks_its_time_left(text: str) -> None:
    assert asks_time_left(text, "en")  # answered by a running timer's status, else as before


@pytest.mark.parametrize("text", ["How's the weather doing?", "How are you doing?", "How's the air doing today?"])
def test_how_anything_else_is_doing_asks_no_time_left(text: str) -> None:
    assert not asks_time_left(text, "en")
