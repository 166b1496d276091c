"""What a timer request says, read from its words: names said around the length, lengths said
without their number, the direction of a change, and which timer act a word asks for alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.deciding.extract import adjustment_sign, timer_label
from agent.deciding.intents import offered
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


@pytest.mark.parametrize(("text", "label"), [
    # named in so many words
    ("Start one called focaccia, thirty-five minutes.", "focaccia"), ("Call it pizza, fifteen minutes.", "pizza"),
    ("Eight minutes, name it tea.", "tea"), ("Label this one bread, forty minutes.", "bread"),
    ("이십 분 타이머, 이름은 밥으로 해 줘.", "밥"), ("오 분 맞춰 줘, 이름은 계란이라고 해 줘.", "계란"),
    ("만두라고 이름 붙여서 칠 분.", "만두"),
    # what cooks, said before where it went or how long it takes
    ("The potatoes are on, twenty minutes please.", "potatoes"), ("Chicken's in the oven, set forty minutes.", "chicken"),
    ("Okay the sausages have just gone in, eight minutes.", "sausages"),
    ("The barley needs forty minutes.", "barley"), ("Brisket takes an hour forty.", "brisket"),
    ("Soup gets twenty minutes.", "soup"),
    ("국 끓이는 타이머 얼마 남았지?", "국"), ("감자 삶는 타이머 꺼 줘.", "감자"), ("고기 굽는 거 십 분 맞춰 줘.", "고기"),
    # what it is doing as it cooks
    ("So the eggs are boiling now, put nine minutes on them.", "eggs"), ("Chickpeas are simmering, forty minutes please.", "chickpeas"),
    ("The lamb's resting, give it fifteen minutes.", "lamb"),
])
def test_a_timers_name_given_or_said_as_what_cooks(text: str, label: str) -> None:
    assert timer_label(text) == label


@pytest.mark.parametrize("text", ["I need ten minutes.", "The oven is on, set twenty minutes.", "It's in, ten minutes please.",
                                  "That takes about ten minutes."])
def test_who_needs_the_time_or_where_it_cooks_is_no_name(text: str) -> None:
    assert timer_label(text) is None


@pytest.mark.parametrize("text", ["Add ten minutes to the timer.", "다시 돌려", "Set a timer for five minutes.", "에어컨 꺼 줘",
                                  "선풍기 멈춰", "30초짜리 타이머 하나만.", "오 분짜리 타이머 맞춰 줘.", "10분 정도 타이머 켜 줘",
                                  "한 시간짜리 타이머 하나 돌려 줘", "한 시간 반짜리 타이머 맞춰 줘."])
def test_words_that_name_no_timer_give_no_name(text: str) -> None:
    assert timer_label(text) is None


@pytest.mark.parametrize(("text", "seconds"), [
    ("Hour and a half timer.", [5400]),
    ("Minute and a half on the eggs.", [90]),
    ("Give the roast an hour and a half.", [5400]),
    ("한시간이십분 타이머 맞춰 줘", [4800]),
    ("삼십분이랑 한시간반", [1800, 5400]),
    ("한 시간이 지났어", [3600]),
    # the minutes after the hours, or the seconds after the minutes, as a bare number
    ("Brisket takes an hour forty.", [6000]), ("Two hours ten, please.", [7800]), ("Give it two minutes thirty.", [150]),
    ("An hour and two timers.", [3600]),
])
def test_lengths_said_without_a_number_or_without_spaces(text: str, seconds: list[int]) -> None:
    assert [int(d.value) for d in durations(text)] == seconds


@pytest.mark.parametrize(("text", "sign"), [
    ("Make the rice timer two minutes shorter.", -1),
    ("Make it a bit shorter, say a minute.", -1),
    ("Make the pasta timer three minutes longer.", 1),
    # read in the clause that says the length: a remark beside it is about the food
    ("만두 타이머 2분만 더 줘, 아직 덜 익었어.", 1), ("고기 타이머 오 분 빼 줘, 더 익으면 안 돼.", -1),
    ("Add two minutes, it's less done than I thought.", 1),
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


KITCHEN_TOOLS = ["timer_start", "timer_status", "timer_cancel", "timer_adjust", "shopping_add", "shopping_complete", "shopping_list",
                 "recipe_search", "time_now"]


@pytest.mark.parametrize(("text", "language"), [
    ("돌아가는 타이머 싹 다 지워 주세요.", "ko"), ("Remove the bread timer.", "en"), ("Take the pasta timer off, it's done.", "en"),
    ("떡볶이 타이머 이제 꺼도 돼.", "ko"), ("Cook the rice timer down to zero, I mean stop it.", "en"), ("감자 볶는 타이머 멈춰.", "ko"),
])
def test_words_about_a_timer_are_not_offered_the_list_or_a_recipe(text: str, language: str) -> None:
    tools = offered(text, language, KITCHEN_TOOLS)
    assert not {"shopping_add", "shopping_complete", "shopping_list", "recipe_search"} & set(tools)
    assert {"timer_cancel", "timer_start"} & set(tools)


@pytest.mark.parametrize(("text", "language", "kept"), [
    ("Set a rice timer and add rice to the list.", "en", "shopping_add"),
    ("Find me a brownie recipe and start a timer.", "en", "recipe_search"),
    ("타이머 끄고 장보기 목록에서 우유 지워 줘.", "ko", "shopping_complete"),
])
def test_a_list_or_a_recipe_named_beside_a_timer_keeps_its_tools(text: str, language: str, kept: str) -> None:
    assert kept in offered(text, language, KITCHEN_TOOLS)


@pytest.mark.parametrize(("text", "language"), [
    ("So what's left for me to buy this week?", "en"), ("What do we still need to pick up?", "en"),
    ("장보기 리스트에 뭐 남았는지 좀 불러 줄래?", "ko"), ("뭐 사야 되는지 남은 거 알려 줘.", "ko"),
])
def test_words_about_the_list_with_no_timer_and_no_length_are_not_offered_the_timers(text: str, language: str) -> None:
    tools = offered(text, language, KITCHEN_TOOLS)
    assert "shopping_list" in tools and not any(t.startswith("timer_") for t in tools)


def test_a_length_said_beside_the_list_keeps_the_timers() -> None:
    assert "timer_adjust" in offered("Add ten minutes, and buy milk later.", "en", KITCHEN_TOOLS)


@pytest.mark.parametrize(("text", "language"), [
    ("Throw another three minutes onto the cookie timer.", "en"), ("Give the stew five more minutes.", "en"),
    ("Add two extra minutes to the rice.", "en"), ("라면 타이머 일 분 늘려 줘.", "ko"),
])
def test_a_change_of_time_is_never_offered_a_new_timer(text: str, language: str, tmp_path: Path) -> None:
    ranked = kitchen_picker(tmp_path, language).ranked(text)
    tools = [s.entry[2] for s in ranked]
    assert "timer_start" not in tools and tools[0] == "timer_adjust"


def test_another_timer_asked_for_is_still_a_new_timer(tmp_path: Path) -> None:
    assert kitchen_picker(tmp_path, "en").ranked("Set another timer for five minutes.")[0].entry[2] == "timer_start"
