"""What a timer request says, read from its words: names said around the length, lengths said
without their number, the direction of a change, and which timer act a word asks for alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.deciding.extract import adjustment_sign, timer_label
from agent.deciding.spoken_numbers import durations
from agent.deciding.tool_examples import ExamplePicker
from tests.test_several_things import kitchen_picker


@pytest.mark.parametrize(("text", "label"), [
    ("Remind me to stir the risotto in four minutes.", "risotto"),
    ("In twenty minutes remind us about the chicken.", "chicken"),
    ("Remind me in an hour to check on the bread.", "bread"),
    ("Put three more minutes on the broccoli.", "broccoli"),
    ("Take a minute off the lentils.", "lentils"),
    ("Knock two minutes off the stew, please.", "stew"),
    ("삼십 분 타이머 맞춰 줘, 수육.", "수육"),
    ("불고기에서 삼 분만 빼 줘", "불고기"),
    ("떡국 다시 돌려 줘", "떡국"),
])
def test_a_timers_name_said_around_its_length(text: str, label: str) -> None:
    assert timer_label(text) == label


@pytest.mark.parametrize("text", ["Add ten minutes to the timer.", "다시 돌려", "Set a timer for five minutes.", "에어컨 꺼 줘",
                                  "선풍기 멈춰"])
def test_words_that_name_no_timer_give_no_name(text: str) -> None:
    assert timer_label(text) is None


@pytest.mark.parametrize(("text", "seconds"), [
    ("Hour and a half timer.", [5400]),
    ("Minute and a half on the eggs.", [90]),
    ("Give the roast an hour and a half.", [5400]),
    ("한시간이십분 타이머 맞춰 줘", [4800]),
    ("삼십분이랑 한시간반", [1800, 5400]),
    ("한 시간이 지났어", [3600]),
])
def test_lengths_said_without_a_number_or_without_spaces(text: str, seconds: list[int]) -> None:
    assert [int(d.value) for d in durations(text)] == seconds


@pytest.mark.parametrize(("text", "sign"), [
    ("Make the rice timer two minutes shorter.", -1),
    ("Make it a bit shorter, say a minute.", -1),
    ("Make the pasta timer three minutes longer.", 1),
])
def test_shorter_takes_time_away_and_longer_adds_it(text: str, sign: int) -> None:
    assert adjustment_sign(text) == sign


@pytest.fixture
def picker(tmp_path: Path) -> ExamplePicker:
    return kitchen_picker(tmp_path, "ko")


@pytest.mark.parametrize("text", ["국수 타이머는 취소해.", "만두 타이머 그만 취소해 줘", "계란 타이머는 이제 취소"])
def test_a_timer_act_asked_for_alone_wins_over_one_its_noun_shares(picker: ExamplePicker, text: str) -> None:
    assert picker.choices(text, 1, 3)[0] == ["timer_cancel"]


@pytest.mark.parametrize("text", ["Add pasta to the list.", "Put two cartons of milk on the list.", "Add a liter of cream."])
def test_a_tool_whose_whole_call_the_words_hold_is_not_passed_over(picker: ExamplePicker, text: str) -> None:
    assert picker.choices(text, 1, 3)[0] == ["shopping_add"]


@pytest.mark.parametrize(("text", "offered"), [
    ("떡볶이 배달 좀 주문해 줘.", []),          # a no-tool example far nearer than the recipe its dish's name cued
    ("Get us some Thai takeaway delivered.", []),
    ("계란 다 떨어졌어.", ["shopping_add"]),       # the nearest no-tool example is no nearer than chance
])
def test_a_far_nearer_no_tool_example_takes_a_cued_tool_off_the_offer(picker: ExamplePicker, text: str, offered: list[str]) -> None:
    assert picker.choices(text, 1, 3)[0] == offered
