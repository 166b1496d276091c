"""Knowledge answers checked for the fact: numbers with their units, phrases, the usual wrong one."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from bench.suites.answers import AnswerCheck, NumberRange, answer_right, said_numbers

EGG = AnswerCheck(numbers=[NumberRange(min=8, max=14, units=["minute", "min", "분"])])


@pytest.mark.parametrize("reply", [
    "Boil it for about ten minutes.", "Hard boil for 9-12 minutes.", "Twelve minutes, then cool it.",
    "약 10분 정도 삶으세요.", "십 분 삶아요.", "열 분이면 돼요.",
])
def test_a_number_in_range_with_its_unit_is_right(reply: str) -> None:
    assert answer_right(reply, EGG)


@pytest.mark.parametrize("reply", [
    "About 20 minutes.", "Two hours.", "Ten.", "Boil it until it's done.", "I can set a timer for you.", "삶으세요.",
])
def test_a_number_out_of_range_without_its_unit_or_none_at_all_is_wrong(reply: str) -> None:
    assert not answer_right(reply, EGG)


def test_phrases_and_the_usual_wrong_answer() -> None:
    swap = AnswerCheck(any_of=["lemon", "vinegar"], none_of=["water"])
    assert answer_right("Add a spoon of Lemon juice to milk.", swap)
    assert not answer_right("Use water.", swap)
    assert not answer_right("Lemon juice in water.", swap)  # the wrong fact spoils a right one
    with pytest.raises(ValidationError):
        AnswerCheck(none_of=["water"])  # nothing to be right with


def test_numbers_are_read_as_spoken() -> None:
    assert said_numbers("Twenty-eight grams, and 3 teaspoons.")[0][0] == 28
    assert [value for value, _ in said_numbers("Twenty-eight grams, and 3 teaspoons.")] == [28, 3]
    assert [value for value, _ in said_numbers("백 도에서 끓어요")] == [100]


def test_a_number_in_the_other_temperature_scale_is_not_taken():
    from bench.suites.answers import AnswerCheck, answer_right

    fridge = AnswerCheck(numbers=[{"min": 1, "max": 5, "units": ["degree", "°", "celsius", "c"]},
                                  {"min": 33, "max": 40, "units": ["degree", "°", "fahrenheit", "f"]}])
    assert not answer_right("37 degrees Celsius is a good temperature.", fridge)
    assert not answer_right("Keep it at 37 °C.", fridge)
    assert answer_right("37 degrees Fahrenheit.", fridge)
    assert answer_right("About 4 degrees Celsius.", fridge)
