"""Arguments read from the user's words: numbers and durations, values by tool, repair and grounding."""

from __future__ import annotations

import pytest

from agent.deciding.arguments import grounded, repair_arguments, supported
from agent.deciding.extract import mentions_all, note_text, shopping_item, timer_durations, timer_label, adjustment_sign
from agent.deciding.extract_lookup import place, recipe_query, when
from agent.deciding.extract_units import Conversion, conversion
from agent.deciding.spoken_numbers import durations, numbers


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("put the kettle timer on for twelve minutes", [720]),
        ("an hour and a half for the ham", [5400]),
        ("give it a minute and a quarter", [75]),
        ("three and a half hours", [12600]),
        ("sixty-five seconds", [65]),
        ("2 hours, 10 minutes and 5 seconds", [7805]),
        ("1h20m", [4800]),
        ("quarter of an hour", [900]),
        ("half a minute please", [30]),
        ("take 4 minutes off the 2 hour timer", [240, 7200]),
        ("add three more minutes", [180]),
        ("a hundred and twenty seconds", [120]),
        ("no numbers here at all", []),
        ("2분 10초 타이머", [130]),
        ("십 분", [600]),
        ("삼십초만", [30]),
        ("한 시간 사십 분", [6000]),
        ("세 시간 반", [12600]),
        ("반 시간", [1800]),
        ("열두 시간", [43200]),
        ("5분 반", [330]),
        ("계란이 분명해", []),
    ],
)
def test_durations_said_in_either_language(text: str, seconds: list[int]) -> None:
    assert [round(found.value) for found in durations(text)] == seconds


@pytest.mark.parametrize(
    ("text", "values"),
    [
        ("four hundred twenty five degrees", [425]),
        ("a dozen rolls and two bagels", [12, 2]),
        ("three quarters of a cup", [0.75]),
        # a fraction said in the singular after its count, as a hyphenated measure is
        ("a three-quarter cup measure", [0.75]), ("two-third cup of milk", [2 / 3]), ("one quarter teaspoon", [0.25]),
        ("two quarter pounders", [2, 0.25]),
        ("a cup of rice", []),  # an article is not a number on its own
        ("버터 두 덩이랑 우유 1리터", [2, 1]),
        ("세제 사야 돼", []),  # 세 inside a word is not three
        ("계란 두 판", [2]),
        ("삼십오 개", [35]),
        ("스물다섯 개", [25]),
        ("오이 하나", [1]),
    ],
)
def test_numbers_said_in_either_language(text: str, values: list[float]) -> None:
    assert [found.value for found in numbers(text)] == values


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("start the lentil timer for 20 minutes", "lentil"),
        ("a timer called flan for an hour", "flan"),
        ("twenty minutes for the meatballs", "meatballs"),
        ("pause timer for quiche", "quiche"),
        ("time the rice for 12 minutes", "rice"),
        ("how long on the banana bread timer", "banana bread"),
        ("cancel the 10 minute timer", None),
        ("stop the kitchen timer", None),
        ("increase timer for 1 hour by 5 minutes", None),
        ("decrease soup timer by a minute", "soup"),
        ("set a timer for 5 minutes", None),
        ("떡 타이머 10분", "떡"),
        ("잡채 타이머를 꺼 줘", "잡채"),
        ("10분 타이머 켜 줘", None),
        ("멈춘 타이머 다시", None),
    ],
)
def test_timer_labels(text: str, label: str | None) -> None:
    assert timer_label(text) == label


def test_timer_durations_leave_out_the_one_naming_the_timer_when_asked() -> None:
    assert timer_durations("take 4 minutes off the 2 hour timer", naming=False) == [240]
    assert timer_durations("add 30 seconds to the timer for 1 hour", naming=False) == [30]
    assert timer_durations("start a 2 hour timer", naming=True) == [7200]


@pytest.mark.parametrize(
    ("text", "sign"),
    [("take a minute off", -1), ("take 30 seconds from the timer", -1), ("shorten it by 2 minutes", -1),
     ("give it five more minutes", 1), ("타이머 3분 줄여", -1), ("타이머 1분 더", 1), ("the timer, 5 minutes", None)],
)
def test_adjustment_sign(text: str, sign: int | None) -> None:
    assert adjustment_sign(text) == sign


def test_mentions_all() -> None:
    assert mentions_all("stop every timer") and mentions_all("타이머 모두 꺼") and mentions_all("타이머 다 꺼")
    assert not mentions_all("타이머 다시 켜") and not mentions_all("stop the timer")
    # 다 before the act asks for every timer; elsewhere it says something is done
    assert mentions_all("다 멈춰 줘") and mentions_all("타이머 다 취소해")
    assert not mentions_all("감자 거 꺼 줘, 다 익었어") and not mentions_all("라면 거 꺼, 다 됐다") and not mentions_all("다 끓었으니 국 타이머 꺼")


@pytest.mark.parametrize(
    ("text", "complete", "expected"),
    [
        ("Add Parmesan to my shopping list.", False, ("Parmesan", None)),
        ("put five limes on the list", False, ("limes", "5")),
        ("add 3 litres of oat milk to the list", False, ("oat milk", "3 l")),
        ("add a bag of flour to the grocery list", False, ("flour", "1 bag")),
        ("add ginger as well", False, ("ginger", None)),
        ("we're out of honey", False, ("honey", None)),
        ("cross the honey off my shopping list", True, ("honey", None)),
        ("remove ginger from the list", True, ("ginger", None)),
        ("check off limes", True, ("limes", None)),
        ("장보기 목록에 깻잎 추가해 줘", False, ("깻잎", None)),
        ("쇼핑 리스트에 두부 세 모 말고 두 개 넣어 줘", False, ("두부 세 모 말고", "2개")),
        ("리스트에 콩나물 담아", False, ("콩나물", None)),
        ("감자도 추가해", False, ("감자", None)),
        ("목록에서 깻잎 빼 줘", True, ("깻잎", None)),
        ("what is on the list", False, None),
        # a container said in the plural is still the container
        ("add two bottles of fish sauce to the list", False, ("fish sauce", "2 bottles")),
        ("put three boxes of cereal on the list", False, ("cereal", "3 boxes")),
        ("add 4 jars of pesto to the shopping list", False, ("pesto", "4 jars")),
        # a particle after the amount leaves it the amount ("만" only, "정도" about, "씩" each)
        ("목록에 두부 두 모만 넣어 줘.", False, ("두부", "2모")), ("계란 한 판 정도 목록에 넣어 줘", False, ("계란", "1판")),
        ("두유 세 팩쯤 추가해 줘", False, ("두유", "3팩")), ("배 하나만 추가해 줘", False, ("배", "1")),
        # when it was bought is no part of the thing
        ("방금 대파 사 왔어, 목록에서 지워 줘.", True, ("대파", None)), ("어제 우유 샀으니까 목록에서 빼 줘", True, ("우유", None)),
        ("아까 김 사 왔으니까 지워요.", True, ("김", None)),
    ],
)
def test_shopping_items(text: str, complete: bool, expected: tuple[str, str | None] | None) -> None:
    assert shopping_item(text, complete=complete) == expected


@pytest.mark.parametrize(
    ("text", "note"),
    [
        ("make a note that the cake tin is in the garage", "the cake tin is in the garage"),
        ("Note: buy candles for Saturday.", "buy candles for Saturday"),
        ("remember that Tom hates coriander", "Tom hates coriander"),
        ("메모 좀 해 줘. 토요일에 손님 와", "토요일에 손님 와"),
        ("가스비 내야 된다고 메모해 줘", "가스비 내야 된다"),
        # the quoting ending after the note is not written down
        ("메모해 줘, 오븐이 좀 세게 나온다고.", "오븐이 좀 세게 나온다"), ("메모 좀 해 줘, 택배는 금요일이라고", "택배는 금요일"),
        ("메모해, 보일러 점검 다음 주라고", "보일러 점검 다음 주"),
        # the note after a bare "메모" and a comma
        ("메모 좀, 내일 아침에 가스 검침 와.", "내일 아침에 가스 검침 와"), ("이거 메모 좀, 가스 검침 금요일.", "가스 검침 금요일"),
        ("메모, 오븐 온도 10도 낮게.", "오븐 온도 10도 낮게"),
        # "jot this down", said before the note
        ("Jot this down: ring the plumber about the sink.", "ring the plumber about the sink"),
        ("Write that down, the gate code is 4512.", "the gate code is 4512"), ("Put this down: bins go out Tuesday.", "bins go out Tuesday"),
        ("what's the weather", None),
    ],
)
def test_note_text(text: str, note: str | None) -> None:
    assert note_text(text) == note


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("how many grams are in three cups of sugar", Conversion(3, "cup", "g", "sugar")),
        ("what's 425 fahrenheit in celsius", Conversion(425, "F", "C", None)),
        ("gas mark seven in fahrenheit", Conversion(7, "gas_mark", "F", None)),
        ("which gas mark is 160 degrees celsius", Conversion(160, "C", "gas_mark", None)),
        ("how many teaspoons in a third of a cup", Conversion(1 / 3, "cup", "tsp", None)),
        ("how many tablespoons of oil is 30 millilitres", Conversion(30, "ml", "tbsp", "oil")),
        ("설탕 세 컵은 몇 그램이야?", Conversion(3, "cup", "g", "설탕")),
        ("오븐 200도는 화씨로 몇 도야", Conversion(200, "C", "F", None)),
        ("화씨 400도는 섭씨로?", Conversion(400, "F", "C", None)),
        ("화씨, 350도는 섭씨로몇도야.", Conversion(350, "F", "C", None)),  # a breath heard as a comma
        ("두 큰술은 몇 작은술이야", Conversion(2, "tbsp", "tsp", None)),
        ("convert grams to cups", Conversion()),
    ],
)
def test_conversions(text: str, expected: Conversion) -> None:
    assert conversion(text) == expected


@pytest.mark.parametrize(
    ("text", "query"),
    [
        ("find me a recipe for lemon drizzle cake", "lemon drizzle cake"),
        ("how do I make hummus", "hummus"),
        ("look up a nice mushroom risotto recipe", "mushroom risotto"),
        ("recipes with spinach please", "spinach"),
        ("비빔밥 레시피 찾아 줘", "비빔밥"),
        ("갈비탕 어떻게 끓여?", "갈비탕"),
        ("떡국 만드는 법 알려 줘", "떡국"),
        # how a dish is done, by the verb said of it
        ("감자조림 하는 법 좀 찾아 줄래?", "감자조림"), ("김치전 부치는 법 찾아 줘", "김치전"), ("된장찌개 끓이는 방법 알려 줘", "된장찌개"),
        # who it is for, or when, is no dish
        ("Look up a falafel recipe for me, would you?", "falafel"), ("Search for a chili recipe for us please.", "chili"),
        ("Could you find a curry recipe for us?", "curry"),
        ("what time is it", None),
    ],
)
def test_recipe_queries(text: str, query: str | None) -> None:
    assert recipe_query(text) == query


@pytest.mark.parametrize(
    ("text", "where", "day"),
    [
        ("what's the weather in Buenos Aires tomorrow", "Buenos Aires", "tomorrow"),
        ("will it rain on Sunday", None, "Sunday"),
        ("is the air ok in Lyon right now", "Lyon", None),
        ("how's the weather here today", None, "today"),
        ("내일 대전에 눈 와?", "대전", "내일"),
        ("전주 날씨 알려 줘", "전주", None),
        ("오늘 밤 날씨 어때", None, "오늘 밤"),
        ("밖에 미세먼지 심해?", None, None),
    ],
)
def test_places_and_days(text: str, where: str | None, day: str | None) -> None:
    assert (place(text), when(text)) == (where, day)


def test_repair_puts_in_what_was_said_and_drops_what_was_not() -> None:
    fixed = repair_arguments("timer_start", {"duration_s": 150, "label": "noodles"}, "set a timer for ten minutes")
    assert fixed == {"duration_s": 600}
    fixed = repair_arguments("timer_adjust", {"delta_s": 120}, "take two minutes off the soup timer")
    assert fixed == {"delta_s": -120, "label": "soup"}
    assert repair_arguments("timer_cancel", {"label": "tea"}, "cancel all the timers") == {"all": True}
    # a word of the request that cannot name a timer is not kept as its label
    assert repair_arguments("timer_status", {"label": "hour"}, "how long on the timer for 1 hour") == {}
    assert repair_arguments("timer_status", {"label": "10분"}, "10분 타이머 얼마 남았어") == {}
    fixed = repair_arguments("convert_units", {"value": 2, "from_unit": "grams", "to_unit": "Cups", "ingredient": "sugar"},
                             "how many grams is two cups of flour")
    assert fixed == {"value": 2, "from_unit": "cup", "to_unit": "g", "ingredient": "flour"}
    fixed = repair_arguments("shopping_add", {"item": "lemonade", "quantity": "12"}, "put three lemons on the list")
    assert fixed == {"item": "lemons", "quantity": "3"}


def test_repair_never_invents_a_value() -> None:
    # No duration in the words: the model's value stands (grounding will ask back), none is made up.
    assert repair_arguments("timer_start", {"duration_s": 300}, "start a timer") == {"duration_s": 300}
    assert repair_arguments("weather", {}, "what's the weather like") == {}
    # A dish nobody said is not searched for: the request's own words are.
    assert repair_arguments("recipe_search", {"query": "soup"}, "I'm hungry") == {"query": "I'm hungry"}
    assert repair_arguments("unknown_tool", {"x": 1}, "anything") == {"x": 1}


def test_a_place_from_the_conversation_is_kept_but_a_copied_one_is_not() -> None:
    assert repair_arguments("weather", {"location": "Oslo"}, "and tomorrow?", copied={"madrid"}) == {"location": "Oslo", "when": "tomorrow"}
    assert repair_arguments("weather", {"location": "Madrid"}, "what's it like outside", copied={"madrid"}) == {}


def test_supported_words() -> None:
    assert supported("tomatoes", "add a tomato") and supported("the milk", "Add milk please")
    assert supported("라면", "라면을 추가해") and not supported("타이", "타이머 꺼 줘")
    assert supported(3, "three eggs") and not supported(4, "three eggs")
    assert not supported("", "anything") and not supported(None, "anything")


@pytest.mark.parametrize(
    ("tool", "args", "text", "ok"),
    [
        ("timer_start", {"duration_s": 600}, "set a timer for ten minutes", True),
        ("timer_start", {"duration_s": 600}, "set a timer", False),
        ("timer_start", {"duration_s": 600, "label": "cake"}, "ten minute timer", False),
        ("timer_adjust", {"delta_s": -60}, "take a minute off", True),
        ("timer_adjust", {"delta_s": 300}, "add a bit more", False),
        ("timer_cancel", {"all": True}, "cancel the timer", False),
        ("timer_cancel", {"label": "rice"}, "cancel it", True),  # which timer may come from the conversation
        ("shopping_add", {"item": "eggs"}, "add eggs to the list", True),
        ("shopping_add", {"item": "eggs", "quantity": "50"}, "read me the pancake recipe", False),
        ("shopping_add", {"item": "eggs", "quantity": "50"}, "add eggs", False),
        ("shopping_add", {"item": "eggs", "quantity": "6"}, "add six eggs", True),
        ("shopping_complete", {"item": "butter"}, "tick off the milk", False),
        ("note_add", {"text": "the oven runs hot"}, "note that the oven runs hot", True),
        ("note_add", {"text": "buy fifty eggs"}, "what does the recipe say", False),
        ("note_add", {"text": "금요일 택배"}, "금요일에 택배 온다고 메모해 줘", True),
        ("time_now", {}, "what time is it", True),
        ("door_lock", {"door": "front"}, "lock the back door", False),
    ],
)
def test_grounded(tool: str, args: dict, text: str, ok: bool) -> None:
    assert grounded(tool, args, text) is ok


def test_an_act_the_user_says_they_will_do_themselves_is_not_made() -> None:
    assert not grounded("shopping_add", {"item": "salt"}, "I'll add the salt myself later.")
    assert not grounded("shopping_add", {"item": "소금"}, "소금은 내가 나중에 넣을게")
    assert grounded("shopping_add", {"item": "salt"}, "Add salt to the list.")


def test_a_place_nobody_named_is_dropped_and_one_named_before_is_kept() -> None:
    assert "location" not in repair_arguments("weather", {"location": "Sudan"}, "Will it rain today?", earlier="")
    kept = repair_arguments("weather", {"location": "Busan", "when": "tomorrow"}, "And tomorrow?", earlier="What's the weather in Busan?")
    assert kept["location"] == "Busan"
    assert repair_arguments("air_quality", {"location": "일산"}, "일산 미세먼지 어때?", earlier="")["location"] == "일산"
    # Without the conversation at hand (earlier=None), a place is left to the model as before.
    assert repair_arguments("weather", {"location": "Sudan"}, "Will it rain today?")["location"] == "Sudan"


@pytest.mark.parametrize("word", ["미세먼지", "날씨", "내일", "weather", "tomorrow", "here"])
def test_a_word_that_names_no_place_is_no_location(word: str) -> None:
    assert "location" not in repair_arguments("air_quality", {"location": word}, f"{word} 어때?")


def test_real_places_stay() -> None:
    assert repair_arguments("weather", {"location": "Vienna"}, "Weather in Vienna?")["location"] == "Vienna"
    assert repair_arguments("air_quality", {"location": "비엔나"}, "비엔나 미세먼지 어때?")["location"] == "비엔나"


@pytest.mark.parametrize(("text", "item"), [
    ("두유 장보기 목록에 넣어 줘", "두유"), ("우유, 아니 두유 장보기 목록에 넣어 줘", "두유"), ("참기름 목록에 추가해 줘", "참기름"),
])
def test_a_korean_item_said_before_the_list_is_the_item(text: str, item: str) -> None:
    assert repair_arguments("shopping_add", {"item": "장보기"}, text)["item"] == item


@pytest.mark.parametrize(("text", "seconds", "ok"), [
    ("타이머 1분만 줄여줘.", 60, False), ("Put five more minutes on the lamb.", 300, False), ("Ten more minutes please.", 600, False),
    ("Set a timer for ten minutes.", 600, True), ("And another one for the broccoli, eight minutes.", 480, True),
    ("5분 타이머 맞춰줘.", 300, True), ("라면 타이머 3분.", 180, True),
])
def test_a_change_to_a_timer_never_starts_a_new_one(text: str, seconds: int, ok: bool) -> None:
    assert grounded("timer_start", {"duration_s": seconds}, text) is ok


def test_a_question_that_is_not_a_request_supports_no_act():
    from agent.deciding.arguments import grounded

    assert not grounded("timer_start", {"duration_s": 180}, "Does a three minute egg really have a runny yolk?")
    assert not grounded("shopping_add", {"item": "brown sugar"}, "We've run out of brown sugar, what could I swap in?")
    assert grounded("timer_start", {"duration_s": 1200}, "Could you start a twenty minute timer?")
    assert grounded("timer_start", {"duration_s": 300}, "타이머 5분 맞춰 줄래?")


@pytest.mark.parametrize(("tool", "label", "text", "kept"), [
    ("timer_status", "chicken thighs roasting", "Is the chicken nearly done?", "chicken"),
    ("timer_status", "the beans soaking overnight", "How long until the beans are ready?", "beans"),
    ("timer_status", "bread proving dough", "Is the bread done yet?", "bread"),
    ("timer_pause", "soup pot simmering", "Pause the soup.", "soup"),
    ("timer_status", "oven chips", "Are the chips ready yet?", "chips"),
])
def test_a_label_the_model_ran_on_from_is_kept_in_the_words_that_were_said(tool, label, text, kept):
    # A small model runs on past what was said ("chicken thighs roasting"): the label is the part
    # the user said, and a label of which nothing was said is dropped.
    from agent.deciding.arguments import repair_arguments

    assert repair_arguments(tool, {"label": label}, text) == {"label": kept}
    assert repair_arguments(tool, {"label": "pasta"}, text) in ({}, {"label": kept})  # never the unsaid one


def test_a_follow_up_about_the_weather_keeps_the_place_asked_about_before():
    from agent.deciding.arguments import repair_arguments

    earlier = "What's the weather like in London?"
    assert repair_arguments("weather", {"when": "tomorrow"}, "And tomorrow?", earlier=earlier) == {"when": "tomorrow", "location": "London"}
    # Not a follow-up, or no place before: the home's weather.
    assert "location" not in repair_arguments("weather", {"when": "tomorrow"}, "What's the weather tomorrow?", earlier=earlier)
    assert "location" not in repair_arguments("weather", {"when": "tomorrow"}, "And tomorrow?", earlier="Set a timer.")


@pytest.mark.parametrize(("said", "item", "asked"), [
    # The recognizer writes a count it misheard as a word that sounds like it: "two" as "to" or
    # "too", "four" as "for", "eight" as "ate". No item begins with one of those.
    ("Add to the avocados.", "to the avocados", "avocados"),
    ("Put for bagels on the shopping list.", "for bagels", "bagels"),
    ("Add ate eggs to my list.", "ate eggs", "eggs"),
    ("Could you add too limes?", "too limes", "limes"),
])
def test_an_item_that_begins_with_a_lost_count_is_asked_back_without_it(said: str, item: str, asked: str) -> None:
    from agent.deciding.arguments import asked_back, content_in

    assert not content_in("shopping_add", {"item": item}, said)
    assert asked_back("shopping_add", {"item": item}, said) == {"item": asked}


@pytest.mark.parametrize(("said", "item"), [
    ("Add tomatoes.", "tomatoes"), ("Put tortillas on the list.", "tortillas"), ("Add tofu to the shopping list.", "tofu"),
    ("Add four apples.", "apples"),
])
def test_an_item_that_only_starts_like_a_lost_count_is_an_item(said: str, item: str) -> None:
    from agent.deciding.arguments import content_in

    assert content_in("shopping_add", {"item": item}, said)


@pytest.mark.parametrize(("text", "value", "unit"), [
    ("What's three fifty Fahrenheit in Celsius?", 350, "F"), ("Four twenty five degrees Fahrenheit in Celsius.", 425, "F"),
    ("Is two twenty degrees Celsius hot enough?", 220, "C"),
])
def test_an_oven_temperature_said_in_two_parts_is_hundreds(text: str, value: int, unit: str) -> None:
    found = conversion(text)
    assert (found.value, found.from_unit) == (value, unit)


def test_two_numbers_before_a_temperature_are_not_joined_when_the_first_is_its_own() -> None:
    assert conversion("Three hundred fifty Fahrenheit in Celsius").value == 350
    assert conversion("Two cups of flour in grams").value == 2


@pytest.mark.parametrize(("text", "wanted"), [("큰술 두 개면 몇 미리야?", "ml"), ("우유 한 컵은 몇 미리야?", "ml"), ("이 컵으로 몇 미리지?", "ml")])
def test_the_millilitre_as_said_in_korean_kitchens(text: str, wanted: str) -> None:
    assert conversion(text).to_unit == wanted


@pytest.mark.parametrize(("text", "where"), [("저기, 대구 공기 어때요?", "대구"), ("혹시 부산 날씨 어때?", "부산"), ("음 광주 미세먼지 어때", "광주")])
def test_a_korean_place_after_a_filler(text: str, where: str) -> None:
    assert place(text) == where


@pytest.mark.parametrize(("text", "where"), [
    ("How's Seoul looking weather-wise tomorrow?", "Seoul"), ("What's Busan like this weekend?", "Busan"),
    ("How is Jeju looking for Saturday?", "Jeju"), ("How's the weather looking?", None), ("What's Monday looking like?", None),
])
def test_an_english_place_asked_about_as_the_subject(text: str, where: str | None) -> None:
    assert place(text) == where


@pytest.mark.parametrize(("text", "where"), [
    ("대구 쪽 공기는 어때?", "대구"), ("제주도 쪽 비 와?", "제주도"), ("내일 강릉 놀러 가는데 날씨 어때?", "강릉"),
    ("이번 주에 전주 출장 가는데 거기 비 온대?", "전주"), ("우리 동네 쪽 공기 어때?", None), ("내일 날씨 어때?", None),
])
def test_a_korean_place_told_by_the_word_after_it(text: str, where: str | None) -> None:
    # "쪽", "근처", "가는데": the word before is a place, not a day, a filler or the weather
    assert place(text) == where


@pytest.mark.parametrize(("text", "dish"), [("바나나 빵 레시피 찾아 줘.", "바나나 빵"), ("닭 볶음탕 레시피 알려 줘", "닭 볶음탕"),
                                            ("엄마가 해준 갈비찜 만드는 법", "갈비찜"), ("맛있는 김치찌개 레시피", "김치찌개")])
def test_a_korean_dish_of_two_words(text: str, dish: str) -> None:
    assert recipe_query(text) == dish


@pytest.mark.parametrize(("text", "said"), [("How's the weather looking in Busan this weekend?", "this weekend"),
                                            ("Will it rain at the weekend?", "the weekend"), ("이번 주말 부산 날씨는요?", "이번 주말")])
def test_the_weekend_is_when_asked_about(text: str, said: str) -> None:
    assert when(text) == said


@pytest.mark.parametrize(("value", "text"), [
    ("oat milk", "Oat milk's gone again, pop two cartons on the list."), ("bread", "The bread's almost finished."),
    ("onions", "The onions're all gone."),
])
def test_a_thing_said_with_a_contraction_is_said(value: str, text: str) -> None:
    from agent.deciding.arguments import supported

    assert supported(value, text)


@pytest.mark.parametrize(("text", "where"), [
    ("Jeju this weekend, will it rain?", "Jeju"), ("Seoul today, is it cold out?", "Seoul"),
    ("So Gwangju tomorrow, rain or shine?", "Gwangju"),
    ("Rain tomorrow?", None), ("Windy today, do you think?", None), ("Weather tomorrow?", None),
])
def test_a_place_said_as_the_topic_before_its_day(text: str, where: str | None) -> None:
    assert place(text) == where
