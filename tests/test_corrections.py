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
        # the phrase said again ends in a word said before, not last: that phrase is taken back
        ("Put red onions on the list, no, I mean white onions.", "Put white onions on the list."),
        ("Start the pasta timer for ten minutes, no, the rice timer.", "Start the rice timer for ten minutes."),
        ("Add milk to the list, no, oat milk.", "Add oat milk to the list."),
        # a bare number said again keeps the unit or the thing counted of the number it takes back
        ("Roast timer for forty minutes, no, make that forty-five.", "Roast timer for forty five minutes"),
        ("Set the stock timer for three hours, er, actually four.", "Set the stock timer for four hours"),
        ("Timer for six minutes, sorry, I mean seven, the pan is thick.", "Timer for seven minutes"),
        ("Add two lemons to the list, no, three.", "Add three lemons to the list"),
        # a sound made before the correction is no word taken back; a number and its counter go together
        ("감자 타이머 이십 분, 어 아니 이십오 분으로 해 줘.", "감자 타이머 이십오 분으로 해 줘."),
        ("칠 분 맞춰 줘, 아 아니다, 구 분.", "구 분 맞춰 줘"),
        ("계란 두 개, 아니 세 개 목록에 넣어 줘", "계란 세 개 목록에 넣어 줘"),
        # the reason said after the correction is no part of it; the words closing the request stay
        ("Put cheddar on the list, oh wait, mozzarella, the kids prefer it.", "Put mozzarella on the list"),
        ("Add white bread to the list, no, sorry, brown bread, it keeps longer.", "Add brown bread to the list"),
        ("Add butter to the list please, no, margarine", "Add margarine to the list please"),
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


# ---- a correction after the recognizer's sentence break ---------------------------------------------


@pytest.mark.parametrize(
    ("said", "seconds", "label"),
    [
        ("Set a timer for forty minutes for the stew, no wait. Make it an hour.", 3600, "stew"),
        ("Set a timer for forty minutes for the stew. No wait, make it an hour.", 3600, "stew"),
        ("Start the rice timer for ten minutes. Actually, twelve minutes.", 720, "rice"),
        ("Set a pasta timer for 8 minutes. Sorry, I mean 9 minutes.", 540, "pasta"),
        ("스튜 타이머 사십 분 맞춰 줘. 아니 한 시간으로 해 줘.", 3600, "스튜"),
        ("밥 타이머 십 분 맞춰 줘. 아니다, 십이 분.", 720, "밥"),
    ],
)
def test_a_new_length_after_a_sentence_break_replaces_the_one_before(said: str, seconds: int, label: str) -> None:
    # The correction says the value again in its own shape ("Make it an hour."): it replaces the
    # value of its kind, not as many words just before it ("the stew").
    args = repair_arguments("timer_start", {"duration_s": 600}, said)
    assert args["duration_s"] == seconds and args.get("label") == label
    assert grounded("timer_start", {"duration_s": seconds, "label": label}, said)
    assert not grounded("timer_start", {"duration_s": 2400 if seconds == 3600 else 600, "label": label}, said)


async def test_in_the_turn_the_corrected_length_is_set_not_asked_back() -> None:
    from tests.test_reasoner import run_text
    from tests.test_turn_tools import Kitchen, TimedJson, decision, tool_deps

    for said, language, label in [("Set a timer for forty minutes for the stew, no wait. Make it an hour.", "en", "stew"),
                                  ("스튜 타이머 사십 분 맞춰 줘. 아니 한 시간으로 해 줘.", "ko", "스튜")]:
        kitchen = Kitchen()
        talker = TimedJson(decision("", "timer_start", {"duration_s": 600, "label": label}))  # a length nobody said
        deps, sink, executor = tool_deps(talker, kitchen, text=said, grounded=grounded, language=language)
        deps.tools.planner.repair = repair_arguments  # as the default planner does: the words' values go in
        (result,), _ = await run_text(deps, executor, said)
        assert kitchen.timers == [(3600, label)], (said, sink.text())
        assert result.pending is None
