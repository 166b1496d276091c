"""A request corrected while it was said: the value settled on is the one acted on."""

from __future__ import annotations

import pytest

from agent.deciding.arguments import grounded, repair_arguments
from agent.deciding.corrections import corrected


@pytest.mark.parametrize(
    ("said", "meant"),
    [
        ("Set a timer for ninety minutes, no wait, two hours.", "Set a timer for two hours."),
        ("What is the air like in Busan, no, I mean Ilsan?", "What is the air like in Ilsan?"),
        ("Add milk, no, oat milk to the list.", "Add oat milk to the list."),
        ("Set a timer for 1 minute, no, 2 minutes", "Set a timer for 2 minutes"),
        ("부산, 아니 일산 미세먼지 어때?", "일산 미세먼지 어때?"),
        ("타이머 10분, 아니 20분 맞춰 줘", "타이머 20분 맞춰 줘"),
        # Not corrections: an answer, a question with "no" in it, no marker at all.
        ("No, thanks.", "No, thanks."),
        ("Is it snowing? No?", "Is it snowing? No?"),
        ("Set a timer for ten minutes.", "Set a timer for ten minutes."),
        ("I know a good recipe for soup", "I know a good recipe for soup"),
    ],
)
def test_the_words_taken_back_are_replaced(said: str, meant: str) -> None:
    assert corrected(said) == meant


def test_the_value_settled_on_is_the_argument_and_the_one_taken_back_grounds_nothing() -> None:
    said = "Set a timer for ninety minutes, no wait, two hours."
    assert repair_arguments("timer_start", {"duration_s": 5400}, said)["duration_s"] == 7200
    assert grounded("timer_start", {"duration_s": 7200}, said)
    assert not grounded("timer_start", {"duration_s": 5400}, said)
    place = repair_arguments("air_quality", {"location": "Busan"}, "What's the fine dust in Busan, no, I mean Ilsan?")
    assert place["location"] == "Ilsan"


def test_an_earlier_turns_words_never_become_this_requests_arguments() -> None:
    # The chocolate-cake sequence: the next request is searched for in its own words.
    args = repair_arguments("recipe_search", {"query": "make-a-chocolate-cake"}, "What is a quick idea for dinner tonight?")
    assert args["query"] == "What is a quick idea for dinner tonight?"
    # A follow-up may lean on the turn before.
    args = repair_arguments("recipe_search", {"query": "chocolate cake"}, "And one without eggs?")
    assert args["query"] == "chocolate cake"
