"""How households put kitchen requests, read as classes: each class shown by varied sentences, in
English and Korean where both say it.

- a remark tagged with a question about what has been, told from the past, or judged by its length;
- what others said, told before the words that would ask (a weather word inside it asks nothing);
- the list read out, a thing got and ticked off as "that one", an amount said after the request;
- a size said with 짜리, a half said after a unit, a part of today said alone;
- a day said again right after the weather;
- a move through a recipe with what was missed told after it;
- the second of two timers with its unit left off;
- a volume request with its reason after it;
- the dish a Korean timer is for, said with the verb of cooking it.
"""

from __future__ import annotations

import pytest

from agent.deciding.commands import asks_to_read_the_list, lookup_again, recipe_move, volume_command
from agent.deciding.extract import shopping_item, timer_label
from agent.deciding.extract_lookup import when
from agent.deciding.extract_units import conversion
from agent.deciding.intents import cued_tools, judges_a_length, makes_a_remark, small_talk, tells_what_is_written
from agent.deciding.several import timers_in


@pytest.mark.parametrize("text", [
    "Ugh, the weather's been miserable all week, hasn't it.",
    "The forecast was wrong again, wasn't it?",
    "Gosh, the soup smells good, doesn't it?",
    "The timer's been going for ages, hasn't it",
])
def test_a_question_tagged_on_what_has_been_is_a_remark(text):
    assert makes_a_remark(text, "en")


@pytest.mark.parametrize("text", ["It'll snow tomorrow, won't it?", "Will it be hot tomorrow?", "Is the oven on, is it?"])
def test_a_tag_on_what_will_be_still_asks(text):
    assert not makes_a_remark(text, "en")


@pytest.mark.parametrize("text", [
    "In my grandma's day nobody measured anything in grams, it was all handfuls.",
    "Back in the day my mum boiled everything for hours.",
    "During the war people used to stretch a chicken for a week.",
])
def test_when_it_happened_said_before_the_subject_is_still_a_remark(text):
    assert makes_a_remark(text, "en")


@pytest.mark.parametrize("text", [
    "It says bake for forty minutes, but my oven runs hot so I always pull it out early.",
    "It says two eggs, which seems like a lot.",
    "It said to rest it for ten minutes before slicing.",
])
def test_what_it_says_is_told_not_asked(text):
    assert tells_what_is_written(text, "en")


@pytest.mark.parametrize("text", [
    "Chicken's in, it wants seventy minutes, keep time on it for me.",
    "The bread's proving, it needs forty minutes, time it please.",
    "Rice is on, it takes twelve minutes, time that please.",
])
def test_what_the_dish_wants_is_no_label_read_out(text):
    assert not tells_what_is_written(text, "en")


@pytest.mark.parametrize("text", [
    "Do you ever get bored sitting on the counter all day?",
    "Have you ever wanted a day off from all the timers?",
    "Do you like it when I sing while I cook?",
])
def test_a_question_about_hearth_itself_is_small_talk(text):
    assert small_talk(text, "en") == "greeting"


@pytest.mark.parametrize("text", [
    "Is a hundred and twenty right for meringues, or is that too hot?",
    "Is 200 too hot for the chicken?",
    "오븐 이백 도면 너무 더워?",
])
def test_a_number_with_a_word_of_heat_and_no_day_asks_no_forecast(text):
    assert "weather" not in cued_tools(text, "ko" if any("가" <= c <= "힣" for c in text) else "en")


@pytest.mark.parametrize("text", ["Will it be hot tomorrow?", "Is it 20 degrees outside?", "내일 몇 도야?"])
def test_the_weather_with_a_day_or_outside_is_still_the_weather(text):
    assert "weather" in cued_tools(text, "ko" if any("가" <= c <= "힣" for c in text) else "en")


@pytest.mark.parametrize("text", [
    "내일 비 온다던데 소풍은 다음 주에 가자.",
    "옆집 아줌마가 그러는데 요즘 미세먼지가 심하대서 빨래를 안에 널었어.",
    "주말에 춥다더니 캠핑 취소됐어.",
])
def test_a_weather_word_told_as_heard_asks_for_nothing(text):
    assert not cued_tools(text, "ko") & {"weather", "air_quality"}


@pytest.mark.parametrize("text", [
    "엄마 레시피는 고춧가루를 두 숟갈이나 넣더라.",
    "옆집 아줌마가 그러는데 요즘 미세먼지 때문에 창문을 아예 못 연대.",
    "오븐 예열은 이백 도, 굽는 건 십오 분이래.",
    "아랫집은 빨래를 밖에 못 넌대.",
])
def test_korean_told_as_heard_or_remembered_is_told(text):
    assert tells_what_is_written(text, "ko")


@pytest.mark.parametrize("text, judged", [
    ("삼겹살은 오 분이면 충분하다니까, 자기는 너무 오래 구워.", True),
    ("라면은 삼 분이면 돼.", True),
    ("계란은 십 분은 너무 길어.", True),
    ("라면 삼 분 맞춰 줘", False),
    ("오 분이면 돼, 타이머 맞춰 줘.", False),
])
def test_a_korean_length_judged_asks_no_timer(text, judged):
    assert judges_a_length(text, "ko") is judged


@pytest.mark.parametrize("text, language, reads", [
    ("목록에 뭐 적혀 있는지 쭉 불러 줘.", "ko", True),
    ("장보기 목록 읽어 줘", "ko", True),
    ("리스트에 뭐 있어?", "ko", True),
    ("What's on the shopping list?", "en", True),
    ("Can you read out the shopping list?", "en", True),
    ("What's on my list so far?", "en", True),
    ("우유 목록에 넣어 줘", "ko", False),
    ("목록에 우유 있어?", "ko", False),
    ("Is milk on the list?", "en", False),
    ("Add milk to the list", "en", False),
])
def test_the_list_read_out_and_only_that(text, language, reads):
    assert asks_to_read_the_list(text, language) is reads


@pytest.mark.parametrize("text, complete, item, quantity", [
    ("Add mince to the list, about 500 grams.", False, "mince", "500 g"),
    ("Put cream on the list, maybe two cartons.", False, "cream", "2 cartons"),
    ("Put lemons on the list, like six.", False, "lemons", "6"),
    ("Put two avocados on the list, ripe ones if they've got them.", False, "avocados", "2"),
    ("Add eggs to the list, the free range ones.", False, "eggs", None),
    ("Add flour to the list, for the cake.", False, "flour", None),
    ("Add a pack of tortillas as well", False, "tortillas", "1 pack"),
    ("Got the parsley from the garden, so you can mark that one done.", True, "parsley", None),
    ("We got the eggs at the market, tick them off.", True, "eggs", None),
    ("Bought the bread already, so cross it off.", True, "bread", None),
    ("Got the butter on my way back, so take it off the list.", True, "butter", None),
    ("Picked up the onions on the way in, tick them off.", True, "onions", None),
    ("쌀 십 킬로짜리 하나 목록에 넣어 줘.", False, "쌀", "십 킬로짜리 1"),
    ("감자 오 킬로짜리 한 박스 목록에 추가해 줘", False, "감자", "오 킬로짜리 1박스"),
    ("요거트 두 통이요, 장보기 목록에.", False, "요거트", "2통"),
    ("두부 한 모요, 목록에", False, "두부", "1모"),
    ("거기서 양파는 지워, 베란다에 한 망 있더라.", True, "양파", None),
])
def test_things_to_buy_in_a_households_words(text, complete, item, quantity):
    assert shopping_item(text, complete=complete) == (item, quantity)


@pytest.mark.parametrize("text, value", [
    ("밀가루 두 컵 반이면 그램으로 몇이야?", 2.5), ("설탕 세 컵 반이면 그램으로 얼마야?", 3.5), ("우유 한 컵 반은 몇 미리야?", 1.5),
    ("우유 두 컵은 몇 미리야?", 2.0),
])
def test_a_half_said_after_the_unit_is_half_of_one_more(text, value):
    assert conversion(text).value == value


@pytest.mark.parametrize("text, day", [
    ("오후에 비 와요? 우산 챙겨야 하나.", "오후"), ("저녁에 추워?", "저녁"), ("아침에 미세먼지 괜찮아?", "아침"),
    ("And what about over the weekend there?", "the weekend"), ("Is it nice at the weekend?", "the weekend"),
    ("오후반 수업 있어", None),
])
def test_the_day_asked_about_as_said_without_the_word_before_it(text, day):
    assert when(text) == day


@pytest.mark.parametrize("text, language, args", [
    ("모레는?", "ko", {"when": "모레"}),
    ("그럼 내일은?", "ko", {"when": "내일"}),
    ("And Friday?", "en", {"when": "Friday"}),
    ("How about tomorrow morning?", "en", {"when": "tomorrow morning"}),
    ("And what about over the weekend there?", "en", {"when": "the weekend"}),
])
def test_a_day_said_again_after_the_weather_is_the_weather_that_day(text, language, args):
    plan = lookup_again(text, language, "weather")
    assert plan is not None and plan.tool == "weather" and plan.args == args
    assert lookup_again(text, language, "timer_start") is None  # only right after the weather


@pytest.mark.parametrize("text", ["And set a timer for Friday?", "모레 타이머 맞춰 줘", "What about the shopping list?"])
def test_more_than_a_day_is_no_look_up_again(text):
    assert lookup_again(text, "ko" if any("가" <= c <= "힣" for c in text) else "en", "weather") is None


@pytest.mark.parametrize("text, move", [
    ("Hang on, back one, I didn't catch how much milk.", "back"),
    ("Wait, back one, I missed how long to beat it for.", "back"),
    ("Step back one, I lost my place.", "back"),
    ("Oh, next step, the butter is melted.", "next"),
    ("잠깐, 한 단계 전으로 가 줘.", "back"),
])
def test_a_move_with_what_was_missed_told_after_it(text, move):
    assert recipe_move(text, "ko" if any("가" <= c <= "힣" for c in text) else "en", True) == move


@pytest.mark.parametrize("text", ["Back one, how long do I beat it for?", "Next, and set a timer for five minutes."])
def test_a_move_with_a_question_or_a_request_after_it_is_left_to_the_rest(text):
    assert recipe_move(text, "en", True) is None


@pytest.mark.parametrize("text, timers", [
    ("Two timers, the rice for fifteen minutes and the carrots for ten.", [(900, "rice"), (600, "carrots")]),
    ("Two timers please, the farro for twenty-five minutes and the beets for forty.", [(1500, "farro"), (2400, "beets")]),
    ("Chicken for forty minutes and the potatoes for thirty-five, please.", [(2400, "chicken"), (2100, "potatoes")]),
])
def test_the_second_timer_keeps_the_unit_said_for_the_first(text, timers):
    assert [(t["duration_s"], t.get("label")) for t in timers_in(text)] == timers


@pytest.mark.parametrize("text, step", [
    ("Turn yourself up a bit, the tap is running and I can barely make you out.", 1),
    ("Louder please, the extractor fan is really noisy today and I can barely hear you", 1),
    ("Quieter please, the baby has only just gone down for her nap after a long day", -1),
])
def test_a_volume_request_with_its_reason_after_it(text, step):
    assert volume_command(text, "en") == {"step": step}


@pytest.mark.parametrize("text, label", [
    ("수육 삶을 거라서, 사십오 분짜리 타이머 걸어 줘.", "수육"),
    ("사골 국물 올렸어요. 한 시간 이십 분짜리 타이머 부탁해요.", "사골"),
    ("감자 찌고 있어, 이십 분 맞춰 줘.", "감자"),
    ("고구마 구울 거야, 사십 분 타이머.", "고구마"),
])
def test_the_korean_dish_cooked_names_the_timer(text, label):
    assert timer_label(text) == label


def test_no_dish_cooked_no_name():
    assert timer_label("오 분 타이머 맞춰 줘") is None


@pytest.mark.parametrize("text, seconds", [
    ("Add a couple of minutes to it.", [120]), ("Give it a couple of hours.", [7200]), ("A couple of seconds more.", [2]),
])
def test_a_couple_of_is_two(text, seconds):
    from agent.deciding.extract import timer_durations

    assert timer_durations(text, naming=True) == seconds


@pytest.mark.parametrize("text", ["Add a couple of minutes to it.", "Put two more minutes on.", "오 분 더 넣어 줘"])
def test_a_length_is_never_a_thing_to_buy(text):
    assert shopping_item(text) is None


@pytest.mark.parametrize("text, seconds", [
    ("Actually take five off instead.", [300]), ("Give it three more.", [180]), ("Knock two off the rice timer", [120]),
    ("Add 5 minutes to the rice", [300]), ("add five eggs to the list", []), ("take ninety-five off", []),
])
def test_a_bare_count_changing_a_timer_is_minutes(text, seconds):
    from agent.deciding.extract import adjusting_lengths

    assert adjusting_lengths(text) == seconds


@pytest.mark.parametrize("text, tool", [
    ("Pause it for a sec, I need to check the oven.", "timer_pause"),
    ("Add milk to the list, we're out and the kids need it for breakfast.", "shopping_add"),
    ("Set a timer for ten minutes, the rice is on.", "timer_start"),
])
def test_the_request_said_first_is_ranked_without_the_reason_after_it(text, tool):
    from agent.deciding.tool_examples import ExamplePicker

    ranked = ExamplePicker("en").ranked(text)
    assert ranked and ranked[0].entry[2] == tool


@pytest.mark.parametrize("text, reads", [
    ("What is on the list, I forget.", True), ("Read me the list, I'm heading out.", True), ("What is on the list, and add eggs", False),
])
def test_the_list_read_out_with_a_reason_after(text, reads):
    assert asks_to_read_the_list(text, "en") is reads


@pytest.mark.parametrize("text", ["우리 언니는 마늘을 너무 많이 넣어.", "엄마는 항상 설탕을 많이 넣어.", "옆집 아줌마는 간장을 자꾸 넣더라."])
def test_korean_said_of_someone_puts_nothing_on_the_list(text):
    assert shopping_item(text) is None


@pytest.mark.parametrize("text, language, move", [
    ("오케이 그다음", "ko", "next"), ("한 단계 뒤로", "ko", "back"), ("Say that last bit again?", "en", "repeat"),
    ("Just the last bit again please", "en", "repeat"),
])
def test_more_ways_to_move_through_a_recipe(text, language, move):
    assert recipe_move(text, language, True) == move


@pytest.mark.parametrize("text", ["cancel the last timer", "last week was rough", "다음 주에 보자"])
def test_words_of_moving_that_are_about_something_else(text):
    assert recipe_move(text, "ko" if any("가" <= c <= "힣" for c in text) else "en", True) is None


@pytest.mark.parametrize("text, asked", [
    ("The washing powder is nearly gone, put it on the list.", "The washing powder is nearly gone, put it on the list."),
    ("If it wants a cup of sugar, how many grams is that? I've only got scales.", "If it wants a cup of sugar, how many grams is that?"),
    ("What day are we on? I've been away so long I've lost track.", "What day are we on?"),
    ("Pause it for a sec, I need to check the oven.", "Pause it for a sec"),
    ("It's done. The pasta is ready.", "It's done. The pasta is ready."),  # nothing asks: the words as they are
    ("Set a timer for ten minutes.", "Set a timer for ten minutes."),
])
def test_the_part_that_asks_without_the_reasons_and_remarks_around_it(text, asked):
    from agent.deciding.corrections import asked_part

    assert asked_part(text, "en") == asked


@pytest.mark.parametrize("text, knowledge", [
    ("What day are we on? I've been away so long I've lost track.", False),
    ("What date is it today?", False),
    ("Which day should I bake the cake?", True),
    ("Which oil is best for frying?", True),
])
def test_the_date_asked_is_the_calendars_and_know_how_the_reasoners(text, knowledge):
    from agent.deciding.routing import route_by_words

    assert (route_by_words(text, "en") is not None) is knowledge
