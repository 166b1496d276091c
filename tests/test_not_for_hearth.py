"""Words said near hearth but not to it: to someone else in the room, or about a list that is not
the shopping list. Neither asks hearth for anything."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.deciding.arguments import act_asked_for
from agent.deciding.intents import cued_tools, makes_a_remark, spoken_to_another
from test_several_things import kitchen_picker


@pytest.mark.parametrize(("text", "language"), [
    ("Kids, dinner's in ten minutes!", "en"), ("Honey, can you add the salt to the pot?", "en"),
    ("Guys, set the table please.", "en"), ("얘들아, 밥 오 분 뒤에 먹자", "ko"), ("여보, 타이머 좀 봐 줘", "ko"),
    # someone called by name, with the calling ending
    ("민준아, 숟가락 좀 가져와.", "ko"), ("서연아, 오 분 있다가 불 꺼.", "ko"), ("하은아, 장보기 목록 봤어?", "ko"),
    # called last
    ("Did you pick up the milk, honey?", "en"), ("Can you start the rice in ten minutes, kids?", "en"),
    ("Put the eggs on the list when you're done, guys.", "en"), ("밥 다 됐어, 얘들아.", "ko"), ("타이머 좀 봐 줄래, 여보?", "ko"),
])
def test_words_said_to_someone_else_ask_hearth_nothing(text: str, language: str, tmp_path: Path) -> None:
    assert spoken_to_another(text, language)
    assert not any(act_asked_for(tool, text) for tool in ("timer_start", "shopping_add", "note_add"))
    assert kitchen_picker(tmp_path, language).choices(text, 1, 3)[0] == []


@pytest.mark.parametrize("text", ["Set a timer for the kids' pasta, ten minutes.", "Love this song, turn it up.",
                                  "Mum's coming at six, add wine to the list.", "엄마가 오신대, 타이머 십 분",
                                  "괜찮아, 타이머 맞춰 줘.", "뭐야, 타이머 왜 울려?", "이거야, 이거 타이머에 넣어 줘.",
                                  "있잖아, 감자 삶게 십오 분만 재 줘.", "그렇잖아, 다음 단계 읽어 줘."])
def test_a_name_that_is_no_call_to_someone_leaves_the_request(text: str) -> None:
    assert not spoken_to_another(text, "ko" if "타이머" in text else "en")


@pytest.mark.parametrize("text", ["That's the list of reasons he gave me.", "She sent me a list of names for the party.",
                                  "The list of winners was read out on the radio."])
def test_a_list_of_other_things_is_not_the_shopping_list(text: str) -> None:
    assert not cued_tools(text, "en") & {"shopping_list", "shopping_add"}


@pytest.mark.parametrize("text", ["Read me the list of things to buy.", "Read out the list of groceries.", "Read the list."])
def test_the_list_of_things_to_buy_is_still_the_list(text: str) -> None:
    assert "shopping_list" in cued_tools(text, "en")


@pytest.mark.parametrize("text", ["손님 목록이 꽤 길어.", "할 일 목록을 다 끝냈어.", "이름 목록은 내가 정리할게."])
def test_a_korean_list_of_other_things_is_not_the_shopping_list(text: str) -> None:
    assert not cued_tools(text, "ko") & {"shopping_list", "shopping_add"}


@pytest.mark.parametrize("text", ["장보기 목록이 길어?", "두부 목록에 넣어 줘.", "목록 읽어 줘."])
def test_the_korean_shopping_list_is_still_the_list(text: str) -> None:
    assert cued_tools(text, "ko") & {"shopping_list", "shopping_add"}


@pytest.mark.parametrize("text", ["시간 참 빨리 간다.", "밖에 비 온다.", "벌써 저녁이 됐구나."])
def test_a_korean_remark_looks_nothing_up(text: str, tmp_path: Path) -> None:
    assert makes_a_remark(text, "ko")
    assert kitchen_picker(tmp_path, "ko").choices(text, 1, 3)[0] == []


@pytest.mark.parametrize("text", ["지금 몇 시야?", "시간 좀 알려 줘.", "우유 다 떨어졌다."])
def test_a_korean_question_request_or_act_is_no_remark(text: str) -> None:
    assert not makes_a_remark(text, "ko")


@pytest.mark.parametrize("text", ["The packet says twelve minutes for the pasta.", "The recipe says two cups of flour, that's a lot.",
                                  "This jar says to use it within a week."])
def test_what_a_box_or_a_recipe_says_is_told_and_asks_for_no_act(text: str, tmp_path: Path) -> None:
    from agent.deciding.intents import tells_what_is_written

    assert tells_what_is_written(text, "en")
    assert not {s.entry[2] for s in kitchen_picker(tmp_path, "en").ranked(text)} - {"none", "shopping_list", "timer_status",
                                                                                    "recipe_search", "convert_units", "shopping_complete"}


@pytest.mark.parametrize("text", ["The box says forty minutes, set a timer for that.", "The recipe says two eggs, can you add eggs to the list?"])
def test_what_a_box_says_with_a_request_beside_it_is_the_request(text: str) -> None:
    from agent.deciding.intents import tells_what_is_written

    assert not tells_what_is_written(text, "en")


@pytest.mark.parametrize("text", [
    "Honestly, that oven fan drives the cat up the wall.", "The list your mum scribbled is impossible to read.",
    "On Friday the pasta boiled over because nobody watched the timer.", "Wow, these tomatoes smell amazing today.",
    "Our kettle takes forever in the mornings.",
])
def test_an_english_remark_looks_nothing_up(text: str, tmp_path: Path) -> None:
    assert makes_a_remark(text, "en")
    assert kitchen_picker(tmp_path, "en").choices(text, 1, 3)[0] == []


@pytest.mark.parametrize("text", ["The pasta's done, stop the timer.", "Is the list long?", "The kitchen light, please.",
                                  "Okay, it's back in the oven, let the timer carry on.", "That's the last of the rice, so pop it on the list.",
                                  "I'll sort the onions myself in a bit.", "Set a timer for the kids' pasta, ten minutes."])
def test_a_request_a_question_or_a_plan_is_no_english_remark(text: str) -> None:
    assert not makes_a_remark(text, "en")


@pytest.mark.parametrize("text", ["The quinoa needs fifteen minutes.", "The potatoes want twenty five minutes.",
                                  "That bread needs thirty minutes in the oven."])
def test_a_remark_that_holds_a_whole_act_may_still_be_given_it(text: str, tmp_path: Path) -> None:
    assert makes_a_remark(text, "en")
    assert kitchen_picker(tmp_path, "en").choices(text, 1, 3)[0] != []


@pytest.mark.parametrize("text", ["Ten minutes is never enough for a proper risotto.", "Half an hour was way too long for the brownies.",
                                  "Five minutes just isn't enough to boil these beetroots.", "Two hours felt like forever for that brisket."])
def test_a_length_judged_asks_for_no_timer(text: str, tmp_path: Path) -> None:
    from agent.deciding.intents import judges_a_length

    assert judges_a_length(text, "en")
    assert kitchen_picker(tmp_path, "en").choices(text, 1, 3)[0] == []


@pytest.mark.parametrize("text", ["Ten minutes is fine, set it.", "Set a timer for twenty minutes, that's never enough otherwise.",
                                  "Give the stew ten more minutes."])
def test_a_length_asked_for_is_not_judged(text: str) -> None:
    from agent.deciding.intents import judges_a_length

    assert not judges_a_length(text, "en")


@pytest.mark.parametrize("text", ["The butcher said to add a whole lemon to the stuffing.", "My sister reckons you should salt the water first.",
                                  "The man on the radio says that flour is going up again."])
def test_what_someone_else_said_is_told_and_acts_on_nothing(text: str, tmp_path: Path) -> None:
    from agent.deciding.intents import tells_what_is_written

    assert tells_what_is_written(text, "en")
    assert not {s.entry[2] for s in kitchen_picker(tmp_path, "en").ranked(text)} - {"none", "shopping_complete"}


@pytest.mark.parametrize("text", ["What's your favourite thing to bake?", "Do you like making pancakes?",
                                  "Have you ever tasted proper kimchi?", "Would you rather have soup or a sandwich?"])
def test_a_question_about_hearths_own_taste_is_small_talk(text: str) -> None:
    from agent.deciding.intents import small_talk

    assert small_talk(text, "en") == "greeting"


@pytest.mark.parametrize("text", ["What would you cook for dinner tonight?", "Do you know how long to boil an egg?",
                                  "Do you like this song? Turn it up."])
def test_a_question_for_an_idea_or_a_fact_is_no_small_talk(text: str) -> None:
    from agent.deciding.intents import small_talk

    assert small_talk(text, "en") is None


@pytest.mark.parametrize("text", ["파스타는 원래 십 분 삶는 거래.", "엄마가 그러는데 김치찌개는 오래 끓여야 맛있대.",
                                  "옆집은 타이머 없이도 밥 잘 한대.", "계란은 칠 분 삶아야 반숙이 된대요.", "삼겹살은 오래 구워야 맛있다더라."])
def test_what_others_say_told_in_korean_acts_on_nothing(text: str, tmp_path: Path) -> None:
    from agent.deciding.intents import tells_what_is_written

    assert tells_what_is_written(text, "ko")
    assert kitchen_picker(tmp_path, "ko").choices(text, 1, 3)[0] == []


@pytest.mark.parametrize("text", ["내일 비 온대?", "타이머 맞춰 줄래?", "우유 사야 된대, 목록에 넣어 줘.", "침대 시트 사야 돼."])
def test_a_korean_question_or_request_is_no_hearsay(text: str) -> None:
    from agent.deciding.intents import tells_what_is_written

    assert not tells_what_is_written(text, "ko")


@pytest.mark.parametrize("text", ["주방 조명이 며칠째 깜빡거려.", "며칠 전에 산 두부 아직 괜찮을까?", "이 고기는 며칠 동안 재워야 돼?"])
def test_a_span_of_days_asks_for_no_date(text: str) -> None:
    assert "date_today" not in cued_tools(text, "ko")


@pytest.mark.parametrize("text", ["오늘 며칠이야?", "오늘이 며칠이지?", "며칠이에요 오늘?"])
def test_the_day_of_the_month_is_still_asked_for(text: str) -> None:
    assert "date_today" in cued_tools(text, "ko")
