"""More of how households put kitchen requests, read as classes, each shown by varied sentences:

- a length in the past ("… ago"), "a sec", and "another couple of minutes";
- how far the timers are, asked in passing;
- a recipe brought up and read, a step back with what was read checked, a note opened;
- a temperature in plain degrees, a place said before its day with a comma, what is at hand without how much;
- one timer and its name said with "and";
- a paused timer let go on in the last sentence, the list read back after it changed;
- a length taken back beside the old one, or said twice;
- a Korean thing corrected before its verb, a tally after things;
- things needed then written down as "that", a counted thing in its container;
- praise for hearth, words that ask nothing, a Korean remark, wish or hearsay, a question with a command's words.
"""

from __future__ import annotations

import pytest

from agent.deciding.commands import local_command, note_opened, recipe_move, recipe_to_read
from agent.deciding.corrections import corrected
from agent.deciding.extract import shopping_item, timer_label
from agent.deciding.extract_lookup import place, recipe_query
from agent.deciding.extract_units import conversion
from agent.deciding.intents import asks_for_act, asks_nothing, asks_time_left, makes_a_remark, small_talk
from agent.deciding.routing import several_acts
from agent.deciding.several import continued, things_in
from agent.deciding.spoken_numbers import durations
from agent.deciding.undo import Act, amended


@pytest.mark.parametrize("text", [
    "Ten minutes ago this counter was clean.",
    "I put the stock on an hour ago, how long is left?",
    "Twenty minutes ago you told me the pasta was done.",
])
def test_a_length_gone_by_is_no_length_to_time(text):
    assert durations(text) == []


@pytest.mark.parametrize("text", ["Freeze the rice one for a sec.", "Hold it a second, the phone's ringing.", "Pause for a sec please."])
def test_a_sec_is_a_while_not_a_length(text):
    assert durations(text) == []


@pytest.mark.parametrize("text, seconds", [
    ("Throw another couple of minutes on.", 120), ("Another minute on the toast, please.", 60), ("Give it another half hour.", 1800),
])
def test_another_counts_as_a_does(text, seconds):
    assert [found.value for found in durations(text)] == [seconds]


@pytest.mark.parametrize("text", [
    "How's the lasagne looking, time-wise?", "What's it at now?", "Where are we on everything?", "Where's the rice at?",
])
def test_how_far_the_timers_are_is_asked_in_passing(text):
    assert asks_time_left(text, "en")


@pytest.mark.parametrize("text", ["How is the weather looking?", "What is the oven at?", "Where's the weather at?"])
def test_how_things_look_outside_the_timers_is_not(text):
    assert not asks_time_left(text, "en")


@pytest.mark.parametrize("text, dish", [
    ("Pull up the goulash and read it to me.", "goulash"),
    ("Bring up the flapjack recipe and read it out.", "flapjack"),
    ("Open the risotto recipe and talk me through it.", "risotto"),
])
def test_a_recipe_brought_up_and_read(text, dish):
    assert recipe_to_read(text, "en") == dish


@pytest.mark.parametrize("text", ["Open the fridge and get me the milk.", "I pulled up the recipe and read it twice."])
def test_other_bringing_up_reads_no_recipe(text):
    assert recipe_to_read(text, "en") is None


@pytest.mark.parametrize("text, move", [
    ("Hold on, back up a step, did it say baking soda?", "back"),
    ("Go back one, was it two cloves or three?", "back"),
    ("Which things go into it, the whole ingredient list?", "ingredients"),
])
def test_a_step_back_with_what_was_read_checked(text, move):
    assert recipe_move(text, "en", True) == move


@pytest.mark.parametrize("text, note", [
    ("Note to self. The blue pan scorches on high.", "The blue pan scorches on high"),
    ("Okay, memo to self, buy a new whisk before Friday.", "buy a new whisk before Friday"),
    ("Make a note: the freezer sits at minus twenty degrees.", "the freezer sits at minus twenty degrees"),
])
def test_a_note_opened_is_a_note_whatever_it_speaks_of(text, note):
    assert note_opened(text, "en") == note
    assert local_command(text, "en", {"note_add", "convert_units"}).args == {"text": note}


def test_a_note_spoken_of_is_no_note():
    assert note_opened("I should make a note of that some time.", "en") is None


@pytest.mark.parametrize("text, value, from_unit, to_unit", [
    ("This old cookbook says 375 degrees. How much is it in Celsius?", 375, "F", "C"),
    ("What is 180 degrees in Fahrenheit?", 180, "C", "F"),
    ("350 degrees, what is that for us in Celsius?", 350, "F", "C"),
])
def test_plain_degrees_are_the_scale_not_asked_for(text, value, from_unit, to_unit):
    found = conversion(text)
    assert (found.value, found.from_unit, found.to_unit) == (value, from_unit, to_unit)


@pytest.mark.parametrize("text, named", [
    ("Daegu, tonight. Any rain?", "Daegu"), ("Okay, Gwangju, this weekend, cold or not?", "Gwangju"), ("Busan tomorrow, umbrella?", "Busan"),
])
def test_a_place_said_before_its_day(text, named):
    assert place(text) == named


@pytest.mark.parametrize("text, query", [
    ("What could I make with leftover pasta and a couple of tomatoes?", "leftover pasta and tomatoes"),
    ("What can I cook with two chicken thighs and some spinach?", "chicken thighs and spinach"),
    ("How do I make one pot chili?", "one pot chili"),
])
def test_what_is_at_hand_without_how_much(text, query):
    assert recipe_query(text) == query


@pytest.mark.parametrize("text, query", [
    ("냉장고에 두부랑 김치밖에 없는데, 이걸로 뭐 해 먹지?", "두부 김치"),
    ("감자만 남았는데 뭐 만들 수 있어?", "감자"),
    ("계란이랑 파밖에 없는데, 뭐 해 먹을까?", "계란 파"),
])
def test_only_what_is_at_hand_in_korean(text, query):
    assert recipe_query(text) == query


@pytest.mark.parametrize("text", [
    "Forty minutes, and call it stew.", "Set a timer for ten minutes and name it rice.", "The cake's in, thirty-five minutes, and label it cake.",
])
def test_one_timer_and_its_name_are_one_act(text):
    assert not several_acts(text, "en")


def test_two_acts_still_go_to_the_reasoner():
    assert several_acts("Set a timer for ten minutes and add milk to the list.", "en")


@pytest.mark.parametrize("text", [
    "Okay, only the postman. Carry on with the soup timer.", "It was nothing. Keep going.", "Right, sorted. Resume it please.",
])
def test_a_paused_timer_goes_on_from_the_last_sentence(text):
    plan = continued(Act("timer_pause", {}, {"label": "soup"}), text, "en")
    assert plan is not None and plan.tool == "timer_resume" and plan.args == {"label": "soup"}


@pytest.mark.parametrize("text, language", [
    ("Okay, read the whole thing back to me, I'm off to the shops.", "en"), ("Read it back, please.", "en"),
    ("Can you read them back out?", "en"), ("지금까지 뭐뭐 적혔어?", "ko"), ("그럼 뭐 들어갔는지 읽어 줘", "ko"), ("목록에 뭐 있어?", "ko"),
])
def test_the_list_read_back_right_after_it_changed(text, language):
    plan = continued(Act("shopping_add", {"item": "x"}, {}), text, language)
    assert plan is not None and plan.tool == "shopping_list"


@pytest.mark.parametrize("text, delta", [
    ("Ah, sorry, I misspoke, that should have been twenty-five, not eighteen.", 420),
    ("Sorry, not eighteen, twenty.", 120),
    ("My mistake, it was supposed to be fifteen.", -180),
])
def test_a_length_taken_back_beside_the_old_one(text, delta):
    act = Act("timer_start", {"duration_s": 1080, "label": "rice"}, {"duration_s": 1080, "label": "rice"})
    assert amended(act, text, "en") == ("timer_adjust", {"label": "rice", "delta_s": delta})


@pytest.mark.parametrize("text, language, delta", [
    ("아 잘못 말했다. 육 분이야, 육 분.", "ko", -120), ("Sorry, twelve minutes, twelve minutes.", "en", 240), ("아니 십 분, 십 분.", "ko", 120),
])
def test_a_new_length_said_twice_is_one(text, language, delta):
    act = Act("timer_start", {"duration_s": 480}, {"duration_s": 480, "label": "x"})
    assert amended(act, text, language) == ("timer_adjust", {"label": "x", "delta_s": delta})


@pytest.mark.parametrize("text, fixed", [
    ("목록에 콜라 넣어, 아 아니 사이다.", "목록에 사이다 넣어"),
    ("우유 목록에 넣어, 아니 두유.", "두유 목록에 넣어"),
    ("콩나물 좀 담아, 아니 숙주.", "숙주 좀 담아"),
])
def test_a_korean_thing_corrected_after_its_verb_keeps_the_verb(text, fixed):
    assert corrected(text) == fixed


@pytest.mark.parametrize("text, things", [
    ("대파랑 두부, 콩나물, 이렇게 세 개 목록에 넣어 줘.", ["대파", "두부", "콩나물"]),
    ("양파, 마늘, 총 두 가지 목록에 넣어 줘", ["양파", "마늘"]),
    ("우유랑 계란, 다 해서 두 개 장보기에 넣어 줘", ["우유", "계란"]),
])
def test_a_tally_after_the_things_is_no_thing(text, things):
    assert [item for item, _ in things_in(text, "shopping_add")] == things


@pytest.mark.parametrize("text, item, quantity", [
    ("We'll need a dozen eggs for the bake sale, put that down.", "eggs", "12"),
    ("I'll need some ginger for the curry, jot it down.", "ginger", None),
    ("We need two lemons for tomorrow, stick them on.", "lemons", "2"),
])
def test_what_is_needed_then_written_down_as_that(text, item, quantity):
    assert shopping_item(text) == (item, quantity)


@pytest.mark.parametrize("text, item, quantity", [
    ("3 cans of butter beans.", "butter beans", "3 cans"), ("Two bags of frozen sweetcorn.", "frozen sweetcorn", "2 bags"),
    ("Oh, and a jar of honey.", "honey", "1 jar"),
])
def test_a_counted_thing_in_its_container_said_alone(text, item, quantity):
    assert shopping_item(text) == (item, quantity)


@pytest.mark.parametrize("text, language", [
    ("You're doing great today, you know that?", "en"), ("Good job, thanks.", "en"), ("You're a lifesaver.", "en"),
    ("오늘 진짜 잘하네.", "ko"), ("최고야!", "ko"), ("똑똑하네 우리 스피커", "ko"),
])
def test_praise_for_hearth_is_thanked_for(text, language):
    assert small_talk(text, language) == "praise"


@pytest.mark.parametrize("text, language", [
    ("Well done steak, how long per side?", "en"), ("The chef did a good job, set a timer for five minutes.", "en"),
    ("잘했어, 타이머 오 분 맞춰 줘", "ko"),
])
def test_praise_with_a_request_is_the_request(text, language):
    assert small_talk(text, language) != "praise"


@pytest.mark.parametrize("text, language", [
    ("I've written oats on the fridge whiteboard, so no need for you to do anything.", "en"),
    ("Ignore me, talking to myself.", "en"), ("Just thinking out loud about dinner.", "en"),
    ("타이머가 왜 이렇게 많아, 혼잣말이야.", "ko"), ("너한테 한 말 아니야.", "ko"), ("아무것도 안 해도 돼.", "ko"),
])
def test_words_that_say_nothing_is_asked(text, language):
    assert asks_nothing(text, language)


def test_another_clause_that_asks_is_asked():
    assert not asks_nothing("Ignore that, set a timer for five minutes.", "en")


@pytest.mark.parametrize("text", [
    "비 오니까 부침개 생각나네.", "국물이 진하네요.", "옆집은 김장을 벌써 했대.", "아랫집은 에어컨을 새로 샀대요.",
    "오 분만 더 누워 있고 싶다.", "오늘은 그냥 라면 먹고 싶어.",
])
def test_a_korean_thing_noticed_heard_or_wished_is_a_remark(text):
    assert makes_a_remark(text, "ko")


@pytest.mark.parametrize("text", [
    "Grandma's recipes never give you times, she just writes until it's done.", "Mum's oven runs really hot.",
    "Those little jars in the window look so pretty in the evening.",
])
def test_a_remark_about_someone_elses_or_with_so_pretty(text):
    assert makes_a_remark(text, "en")


@pytest.mark.parametrize("text", ["The cream has run out. Pop it on the list?", "Add oat milk too?", "Set a timer for five minutes?"])
def test_a_command_said_as_a_question_asks_for_the_act(text):
    assert asks_for_act(text, "en")


@pytest.mark.parametrize("text, label", [
    ("국은 이십 분, 밥은 삼십 분 맞춰 줘.", "국"), ("떡은 십 분이면 돼, 타이머 맞춰.", "떡"), ("오븐에 고구마 넣었어, 사십 분 해 줘.", "고구마"),
    ("찜기에다 만두 올렸어, 십이 분 맞춰 줘.", "만두"), ("음, 수정과 끓이는 거, 한 시간으로 해 줘. 이름은 수정과.", "수정과"),
])
def test_a_korean_label_without_its_particle_or_its_place(text, label):
    assert timer_label(text) == label


@pytest.mark.parametrize("text, label", [
    ("The buns need to prove for ninety minutes, so set something for the buns or I'll forget.", "buns"),
    ("Set a timer for the stew or it will burn, forty minutes.", "stew"),
    ("Twenty minutes for the rice but check it at fifteen.", "rice"),
])
def test_an_english_label_ends_where_the_clause_joins_another(text, label):
    assert timer_label(text) == label


@pytest.mark.parametrize("text", ["오 분만 더 자고 싶다.", "오늘은 떡볶이 먹고 싶네", "이십 분만 쉬고 싶어요."])
def test_a_korean_wish_asks_nothing(text):
    from agent.deciding.intents import tells_a_wish
    assert tells_a_wish(text, "ko")


@pytest.mark.parametrize("text", ["김치찌개 끓이고 싶은데 레시피 찾아 줘", "라면 먹고 싶어?", "오 분 타이머 맞춰 줘"])
def test_a_wish_with_a_request_or_a_question_is_not_only_a_wish(text):
    from agent.deciding.intents import tells_a_wish
    assert not tells_a_wish(text, "ko")


@pytest.mark.parametrize("text", [
    "Take the butter back off actually, Mum's bringing some over.",
    "Cross the rice off actually, we've got a bag in the cupboard.",
    "Leave the timer on actually, my oven runs slow.",
])
def test_actually_before_a_reason_takes_nothing_back(text):
    assert corrected(text) == text


def test_actually_before_a_value_still_corrects():
    assert corrected("Set it for ten minutes, actually, twelve.") == "Set it for twelve minutes"


@pytest.mark.parametrize("text", [
    "So the potatoes want twenty and the carrots only need eight, can you run both?",
    "The rice needs twelve, the fish needs eight.",
    "The stock wants forty and then it's done.",
])
def test_what_cooks_needing_a_bare_count_asks_nothing_bought(text):
    from agent.deciding.intents import cued_tools
    assert "shopping_add" not in cued_tools(text, "en")


@pytest.mark.parametrize("text", ["We need two onions.", "I need 6 eggs for the cake.", "We want three lemons, add them."])
def test_needing_a_counted_thing_still_asks_it_bought(text):
    from agent.deciding.intents import cued_tools
    assert "shopping_add" in cued_tools(text, "en")


@pytest.mark.parametrize("text", [
    "Grill for six minutes, it says, then turn them. Seems short.",
    "Simmer for ten minutes, says here, then rest it.",
    "Bake at 180, apparently, for forty minutes.",
])
def test_what_is_read_out_with_it_says_between_is_told_not_asked(text):
    from agent.deciding.intents import tells_what_is_written
    assert tells_what_is_written(text, "en")


@pytest.mark.parametrize("text", ["Bake for half an hour, it says, so set a timer for that.", "Apparently it needs twenty minutes, time it please."])
def test_what_is_read_out_then_asked_for_is_asked(text):
    from agent.deciding.intents import tells_what_is_written
    assert not tells_what_is_written(text, "en")


@pytest.mark.parametrize("text, seconds", [
    ("Give me a nine minute one and call it eggs.", 540), ("A twelve minute one for the rice, please.", 720), ("Start an hour one and label it stock.", 3600),
])
def test_a_length_said_of_one_is_the_length_alone(text, seconds):
    assert [found.value for found in durations(text)] == [seconds]


@pytest.mark.parametrize("text", ["내일 비 온대? 빨래 널어도 되나 모르겠네.", "미세먼지 어때? 창문 열까 하는데 모르겠네.", "지금 몇 시야? 늦은 것 같네."])
def test_a_korean_question_asked_first_is_no_remark(text):
    assert not makes_a_remark(text, "ko")
