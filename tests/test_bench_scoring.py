"""The benchmark's tool-call checker and transcript error rates."""

from __future__ import annotations

import unicodedata

import pytest

from bench.suites.numbers import parse_number
from bench.suites.schema import ExpectedCall
from bench.suites.scoring import (
    ToolCall,
    char_error_rate,
    parse_duration,
    parse_quantity,
    score_calls,
    transcript_error,
    values_match,
    word_error_rate,
)


def expect(tool: str, **args: object) -> ExpectedCall:
    return ExpectedCall(tool=tool, args=args)


@pytest.mark.parametrize("given", [30, 30.0, "30", " 30 ", "30.0", "thirty", "Thirty", "서른", "삼십"])
def test_numbers_written_any_way_are_equal(given: object) -> None:
    assert parse_number(given) == 30
    assert values_match("number", 30, given)


@pytest.mark.parametrize(
    ("text", "value"),
    [("twenty-five", 25), ("one hundred and twenty", 120), ("a hundred", 100), ("1,000", 1000), ("½", 0.5),
     ("1/4", 0.25), ("스물다섯", 25), ("이십오", 25), ("다섯", 5), ("오", 5), ("한", 1), ("3만", 30000)],
)
def test_number_words(text: str, value: float) -> None:
    assert parse_number(text) == value


@pytest.mark.parametrize("text", ["a", "pizza", "", None, True, "five minutes", "사과", "오이"])
def test_not_numbers(text: object) -> None:
    assert parse_number(text) is None


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        (1800, 1800), ("1800", 1800), ("half an hour", 1800), ("30 minutes", 1800), ("thirty minutes", 1800),
        ("0:30:00", 1800), ("PT30M", 1800), ("1/2 an hour", 1800), ("a minute and a half", 90),
        ("ninety seconds", 90), ("1:30", 90), ("an hour and 15 minutes", 4500), ("an hour and fifteen minutes", 4500),
        ("1 hour, 15 minutes, and 30 seconds", 4530), ("5 and a half minutes", 330), ("one and a half hours", 5400),
        ("an hour and a half", 5400), ("1 and a 1/2 hours", 5400), ("a quarter of an hour", 900),
        ("three quarters of an hour", 2700), ("half a minute", 30), ("1h30m", 5400), ("90s", 90), ("10 min", 600),
        ("-5 minutes", -300), ("minus five minutes", -300),
        ("1분 30초", 90), ("반 시간", 1800), ("30분", 1800), ("삼십 분", 1800), ("한 시간 반", 5400),
        ("2분 반", 150), ("다섯 시간", 18000), ("오 분", 300), ("십오 분", 900), ("1시간 15분", 4500),
        ("30분간", 1800), ("10분 동안", 600),
    ],
)
def test_equivalent_durations(text: object, seconds: int) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["pizza", "five", "tomorrow", "5분 타이머", "minutes", "1:75:00:00"])
def test_not_durations(text: str) -> None:
    # A bare number is seconds, so "five" is 5 s; the others are not durations at all.
    assert parse_duration(text) is None or text == "five"


def test_durations_compare_across_languages() -> None:
    assert score_calls([expect("timer_start", duration_s=90)], [ToolCall("timer_start", {"duration_s": "1분 30초"})]).right_args
    assert score_calls([expect("timer_start", duration_s=1800)], [ToolCall("timer_start", {"duration_s": "half an hour"})]).right_args
    wrong = score_calls([expect("timer_start", duration_s=1800)], [ToolCall("timer_start", {"duration_s": "3 minutes"})])
    assert wrong.right_tool and not wrong.right_args
    assert "duration_s" in wrong.detail


def test_number_as_text_matches_number() -> None:
    score = score_calls([expect("timer_start", duration_s=30)], [ToolCall("timer_start", {"duration_s": "30"})])
    assert score == score_calls([expect("timer_start", duration_s=30)], [ToolCall("timer_start", {"duration_s": 30.0})])
    assert score.right_tool and score.right_args and score.detail == "ok"


def test_strings_ignore_case_whitespace_punctuation_and_normal_form() -> None:
    expected = [expect("timer_start", label="pizza")]
    for label in ("Pizza", "  pizza ", "pizza.", "the pizza", "Pizza timer", "PIZZA!"):
        assert score_calls(expected, [ToolCall("timer_start", {"label": label})]).right_args, label
    assert not score_calls(expected, [ToolCall("timer_start", {"label": "pasta"})]).right_args
    decomposed = unicodedata.normalize("NFD", "라면")
    assert decomposed != "라면"
    assert score_calls([expect("timer_start", label="라면")], [ToolCall("timer_start", {"label": decomposed + " 타이머"})]).right_args


def test_alternatives() -> None:
    expected = [expect("shopping_add", item=["lemons", "lemon"])]
    assert score_calls(expected, [ToolCall("shopping_add", {"item": "Lemon"})]).right_args
    assert score_calls(expected, [ToolCall("shopping_add", {"item": "lemons"})]).right_args
    assert not score_calls(expected, [ToolCall("shopping_add", {"item": "limes"})]).right_args


def test_units_are_normalised() -> None:
    for unit in ("cups", "cup", "c", "Cups", "컵"):
        assert values_match("unit", "cup", unit), unit
    for unit in ("grams", "g", "gram", "그램"):
        assert values_match("unit", "g", unit), unit
    for unit in ("C", "°C", "celsius", "Celsius", "degrees Celsius", "℃", "섭씨"):
        assert values_match("unit", "C", unit), unit
    for unit in ("F", "°F", "fahrenheit", "화씨"):
        assert values_match("unit", "F", unit), unit
    for unit in ("gas mark", "Gas Mark", "gas_mark"):
        assert values_match("unit", "gas_mark", unit), unit
    for unit in ("tablespoons", "tbsp", "큰술"):
        assert values_match("unit", "tbsp", unit), unit
    assert not values_match("unit", "C", "c")  # a lower-case c is a cup
    assert not values_match("unit", "tsp", "tbsp")


def test_conversion_call() -> None:
    expected = [expect("convert_units", value=2, from_unit="cup", to_unit="g", ingredient="flour")]
    actual = [ToolCall("convert_units", {"value": "two", "from_unit": "cups", "to_unit": "grams", "ingredient": "Flour"})]
    assert score_calls(expected, actual).right_args
    actual = [ToolCall("convert_units", {"value": 2, "from_unit": "g", "to_unit": "cup", "ingredient": "flour"})]
    assert not score_calls(expected, actual).right_args


def test_quantities() -> None:
    assert parse_quantity("two liters") == (2.0, "l")
    assert parse_quantity("2 l") == (2.0, "l")
    assert parse_quantity("두 판") == parse_quantity("2판") == (2.0, "판")
    assert parse_quantity("2개") == (2.0, "")
    assert values_match("quantity", "3", "three")
    assert values_match("quantity", "3", "3 pieces")
    assert values_match("quantity", "2 l", "2 litres")
    assert not values_match("quantity", "2 l", "2")
    assert not values_match("quantity", "3", "4")


def test_booleans_and_a_left_out_flag() -> None:
    assert score_calls([expect("timer_cancel", all=True)], [ToolCall("timer_cancel", {"all": "yes"})]).right_args
    assert score_calls([expect("timer_cancel", all=False)], [ToolCall("timer_cancel", {})]).right_args
    assert score_calls([expect("timer_cancel", all=False)], [ToolCall("timer_cancel", {"all": None})]).right_args
    assert not score_calls([expect("timer_cancel", all=True)], [ToolCall("timer_cancel", {})]).right_args
    assert not score_calls([expect("timer_cancel", all=False)], [ToolCall("timer_cancel", {"all": True})]).right_args


def test_unchecked_and_missing_arguments() -> None:
    # An argument the scenario leaves out is not checked; one it names must be there.
    assert score_calls([expect("timer_status")], [ToolCall("timer_status", {"label": "anything"})]).right_args
    missing = score_calls([expect("timer_status", label="pizza")], [ToolCall("timer_status", {})])
    assert missing.right_tool and not missing.right_args
    assert "(missing)" in missing.detail


def test_wrong_tool() -> None:
    score = score_calls([expect("timer_start", duration_s=600)], [ToolCall("timer_status", {})])
    assert not score.right_tool and not score.right_args
    assert "missing timer_start" in score.detail and "unexpected timer_status" in score.detail


def test_extra_call() -> None:
    score = score_calls(
        [expect("timer_start", duration_s=600)],
        [ToolCall("timer_start", {"duration_s": 600}), ToolCall("timer_start", {"duration_s": 600})],
    )
    assert not score.right_tool and "unexpected timer_start" in score.detail


def test_missing_call() -> None:
    score = score_calls(
        [expect("shopping_add", item="flour"), expect("shopping_add", item="butter")],
        [ToolCall("shopping_add", {"item": "flour"})],
    )
    assert not score.right_tool and "missing shopping_add" in score.detail


def test_order_does_not_matter_and_calls_pair_by_name() -> None:
    expected = [expect("shopping_add", item="flour"), expect("shopping_add", item="butter"), expect("time_now")]
    actual = [ToolCall("time_now", {}), ToolCall("shopping_add", {"item": "Butter"}), ToolCall("shopping_add", {"item": "flour"})]
    score = score_calls(expected, actual)
    assert score.right_tool and score.right_args
    actual[2] = ToolCall("shopping_add", {"item": "sugar"})
    score = score_calls(expected, actual)
    assert score.right_tool and not score.right_args
    assert score.detail.count("shopping_add.item") == 1


def test_no_tool_scenarios() -> None:
    assert score_calls([], []).right_args
    assert score_calls([], []).detail == "ok"
    score = score_calls([], [ToolCall("time_now", {})])
    assert not score.right_tool and not score.right_args
    assert "expected no tool" in score.detail


@pytest.mark.parametrize(
    ("reference", "hypothesis", "wer"),
    [
        ("Set a timer for ten minutes.", "set a timer for 10 minutes", 0.0),
        ("twenty-five grams", "25 grams", 0.0),
        ("What's the time?", "what's the time", 0.0),
        ("It was the best of times", "it was the best of time", 1 / 6),
        ("add milk to the list", "add milk to list", 1 / 5),
        ("add milk", "please add the milk", 1.0),
        ("one hundred and twenty grams", "120 grams", 0.0),
        ("bread and butter", "bread and butter", 0.0),
        ("ten and two", "10 and 2", 0.0),
        ("hello there", "", 1.0),
    ],
)
def test_word_error_rate(reference: str, hypothesis: str, wer: float) -> None:
    assert word_error_rate(reference, hypothesis) == pytest.approx(wer)


@pytest.mark.parametrize(
    ("reference", "hypothesis", "cer"),
    [
        ("지금 몇 시야?", "지금 몇시야", 0.0),
        ("김치찌개 레시피 찾아줘.", "김치찌게 레시피 찾아줘", 1 / 10),
        ("고마워", "고마워요", 1 / 3),
        ("불 좀 꺼줘", "", 1.0),
    ],
)
def test_char_error_rate(reference: str, hypothesis: str, cer: float) -> None:
    assert char_error_rate(reference, hypothesis) == pytest.approx(cer)


def test_transcript_error_by_language() -> None:
    assert transcript_error("지금 몇 시야?", "지금 몇시야", "ko") == 0.0
    assert transcript_error("ten minutes", "10 minutes", "en") == 0.0


def test_transcript_spellings_that_mean_the_same_words_are_not_errors() -> None:
    from bench.suites.scoring import word_error_rate

    assert word_error_rate("Set a roast timer for two and a half hours.", "Set a roast timer for 2.5 hours.") == 0.0
    assert word_error_rate("Okay, resume the timer.", "OK, resume the timer.") == 0.0
    assert word_error_rate("a minute and a half", "a minute and a half") == 0.0
    assert word_error_rate("two and a half", "two and a quarter") > 0.0


def test_dropped_words_are_the_reference_words_lost_and_those_at_the_end() -> None:
    from bench.suites.scoring import dropped_words

    assert dropped_words("Find me a recipe for pancakes.", "Find me a recipe") == (2, 2)
    assert dropped_words("Find me a recipe for pancakes.", "find a recipe for pancake") == (1, 0)
    assert dropped_words("Find me a recipe for pancakes.", "Find me a recipe for pancakes.") == (0, 0)
    assert dropped_words("Find me a recipe for pancakes.", "") == (6, 6)
    assert dropped_words("김치찌개 레시피 찾아 줘", "김치찌개 레시피", "ko") == (2, 2)


def test_a_pre_tool_line_is_owed_only_when_there_is_a_wait() -> None:
    from agent.timeline import Timeline
    from bench.loop.metrics import pretool_figures

    def turn(reused: bool | None, heard: bool) -> dict:
        tl = Timeline(0.0)
        tl.mark("tool_chosen", 1.0, tool="weather", slow=True)
        tl.mark("tts_start", 1.1, unit=0, kind="pretool")
        if heard:
            tl.mark("unit_audio_out", 1.2, unit=0)
        if reused is not None:
            tl.mark("heartbeat_reused", 1.3, tool="weather", waited=not reused)
        tl.mark("tool_start", 1.3)
        tl.mark("tool_end", 1.5)
        return pretool_figures(tl)

    assert turn(None, heard=True)["pretool_in_time"] is True
    assert turn(None, heard=False)["pretool_in_time"] is False
    assert turn(True, heard=False)["pretool_in_time"] is None  # the answer was already there
    assert turn(False, heard=True)["pretool_in_time"] is True  # still coming: the line is owed
