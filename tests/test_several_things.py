"""One act on several things, stories of the past, and the tool whose whole call the words hold."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.deciding.arguments import act_asked_for
from agent.deciding.extract import shopping_item, timer_label
from agent.deciding.intents import tells_of_past
from agent.deciding.routing import route_by_words, several_acts
from agent.deciding.several import continued, each_thing, things_in, timers_in
from agent.deciding.undo import Act
from agent.deciding.tool_calls import ToolPlan
from agent.deciding.tool_examples import ExamplePicker, whole_call_in
from tools.clock import clock_tools
from tools.lists import ListStore, list_tools
from tools.registry import ToolRegistry
from tools.timers import TimerStore, timer_tools


@pytest.mark.parametrize(("text", "things"), [
    ("Put oat milk, bread and a dozen eggs on the grocery list.", [("oat milk", None), ("bread", None), ("eggs", "12")]),
    ("Can you add lemons and two limes to my shopping list?", [("lemons", None), ("limes", "2")]),
    ("Add rice to the list, and soy sauce as well.", [("rice", None), ("soy sauce", None)]),
    ("We need coffee filters and dish soap.", [("coffee filters", None), ("dish soap", None)]),
    ("양파랑 감자 장보기 목록에 넣어 줘.", [("양파", None), ("감자", None)]),
    ("쇼핑 리스트에 소금, 설탕, 식초 추가해 줘.", [("소금", None), ("설탕", None), ("식초", None)]),
    ("두부하고 콩나물 좀 사야 돼.", [("두부", None), ("콩나물", None)]),
])
def test_a_list_of_things_after_one_verb_is_one_addition_per_thing(text: str, things: list) -> None:
    found = things_in(text, "shopping_add")
    assert [(item, None if q is None else q.split()[0].rstrip("개")) for item, q in found] == things


@pytest.mark.parametrize("text", [
    "Add mac and cheese to the list.",
    "Put half and half on the shopping list.",
    "We need salt and vinegar crisps.",
])
def test_a_thing_whose_name_holds_and_stays_one_thing(text: str) -> None:
    assert len(things_in(text, "shopping_add")) == 1


@pytest.mark.parametrize("text", [
    "Tick the onions and the garlic off my list.",
    "Cross off apples, pears and plums.",
    "Remove yogurt and honey from the shopping list.",
])
def test_ticking_several_things_off_ticks_each(text: str) -> None:
    plans = each_thing(ToolPlan("", "shopping_complete", {"item": "x"}), text)
    assert len(plans) >= 2 and all(p.tool == "shopping_complete" and " and " not in p.args["item"] for p in plans)


def test_a_list_request_of_several_things_is_not_sent_to_the_reasoner_but_two_acts_are() -> None:
    assert route_by_words("Add flour, yeast and honey to the list.", "en") is None
    assert route_by_words("Add yeast to the list and set a timer for an hour.", "en") is not None
    assert route_by_words("빵가루랑 계란 장보기 목록에 추가해 줘.", "ko") is None


def test_other_tools_are_made_once() -> None:
    plan = ToolPlan("", "timer_start", {"duration_s": 600})
    assert each_thing(plan, "Set a timer for ten minutes for the rice and the beans.") == [plan]


@pytest.mark.parametrize(("text", "item"), [
    ("우유 좀 목록에 넣어 줘", "우유"),
    ("참기름 다 떨어졌어", "참기름"),
    ("고구마 좀 사 와야겠다", "고구마"),
    ("We're running low on olive oil.", "olive oil"),
    ("We need more paper towels.", "paper towels"),
])
def test_what_the_household_lacks_is_read_as_the_item(text: str, item: str) -> None:
    found = shopping_item(text)
    assert found is not None and found[0] == item


def test_we_need_to_do_something_names_no_item() -> None:
    assert shopping_item("We need to leave at five.") is None


@pytest.mark.parametrize(("text", "language"), [
    ("Last time I set a timer for the cake it sank in the middle.", "en"),
    ("I put chicken on the list yesterday but nobody bought it.", "en"),
    ("The other day I started a timer and forgot all about it.", "en"),
    ("어제 타이머 맞춰 놨는데 소리를 못 들었어.", "ko"),
    ("아까 계란 목록에 넣었는데 벌써 샀어.", "ko"),
    ("지난번에 라면 삼 분 끓였더니 너무 꼬들꼬들했어.", "ko"),
    ("Last year the oven timer broke in the middle of the party.", "en"),
    ("Last Sunday I burnt the roast because the timer never rang.", "en"),
    ("Years ago my gran set a timer for every single egg.", "en"),
    # what someone always did, or what was done growing up
    ("My mum always put lemon in her tea.", "en"), ("Growing up we had rice with every meal.", "en"),
    ("할머니는 항상 국에 설탕을 조금 넣으셨어.", "ko"),
])
def test_a_story_of_the_past_asks_for_no_act(text: str, language: str) -> None:
    assert tells_of_past(text, language)
    assert not act_asked_for("timer_start", text)


@pytest.mark.parametrize(("text", "language"), [
    ("Cancel the timer I set yesterday.", "en"),
    ("Can you put back the milk I crossed off yesterday?", "en"),
    ("Once the water boils, start an eight minute timer.", "en"),
    ("아까 맞춘 타이머 취소해", "ko"),
    ("어제 산 우유 목록에서 지워 줘", "ko"),
])
def test_a_request_that_mentions_the_past_is_still_a_request(text: str, language: str) -> None:
    assert not tells_of_past(text, language)


def test_having_bought_something_still_ticks_it_off() -> None:
    assert act_asked_for("shopping_complete", "I bought the eggs this morning.")


def kitchen_picker(folder: Path, language: str) -> ExamplePicker:
    """The example picker over the kitchen's timers, list and clock, its stores in ``folder``."""
    lists = ListStore(folder / "lists.db")
    lists.open()
    timers = TimerStore(folder / "timers.db")
    timers.open()
    return ExamplePicker(language, registry=ToolRegistry([*timer_tools(timers), *list_tools(lists), *clock_tools()]))


@pytest.fixture
def picker(tmp_path: Path) -> ExamplePicker:
    return kitchen_picker(tmp_path, "en")


@pytest.mark.parametrize("text", ["We need baking soda.", "We could use more napkins.", "We're nearly out of rice."])
def test_a_statement_that_holds_a_whole_addition_is_offered_the_addition(picker: ExamplePicker, text: str) -> None:
    assert picker.choices(text, 1, 3)[0] == ["shopping_add"]
    assert picker.registry is not None and whole_call_in(picker.registry, "shopping_add", text)


@pytest.mark.parametrize("text", ["And milk to the shopping list.", "Two lemons to the list, please.",
                                  "Oh, olive oil onto the grocery list."])
def test_a_thing_then_the_list_it_goes_to_is_an_addition_without_its_verb(picker: ExamplePicker, text: str) -> None:
    # "Add" clipped by the press or heard as "And": the thing and where it goes still say it.
    assert picker.choices(text, 1, 3)[0] == ["shopping_add"]


@pytest.mark.parametrize("text", ["Go back to the list.", "Listen to the list.", "Oh, what is on the list?"])
def test_words_before_the_list_that_name_no_thing_add_nothing(text: str) -> None:
    assert shopping_item(text) is None


def test_a_question_is_left_to_its_nearest_example(picker: ExamplePicker) -> None:
    tools, _ = picker.choices("Do we need anything else from the shop?", 1, 3)
    assert tools == ["shopping_list"]


@pytest.mark.parametrize(("text", "timers"), [
    # A length said without its unit takes the unit said before it.
    ("Start a timer for twelve minutes for the potatoes and six for the peas.",
     [{"duration_s": 720, "label": "potatoes"}, {"duration_s": 360, "label": "peas"}]),
    ("Two timers: salmon fifteen minutes and broccoli four.",
     [{"duration_s": 900, "label": "salmon"}, {"duration_s": 240, "label": "broccoli"}]),
    ("One hour for the ham, then two for the turkey.",
     [{"duration_s": 3600, "label": "ham"}, {"duration_s": 7200, "label": "turkey"}]),
    ("Bagels, ten minutes, and another one for the muffins, twenty-five.",
     [{"duration_s": 600, "label": "bagels"}, {"duration_s": 1500, "label": "muffins"}]),
    ("An hour and a half for the brisket and ten minutes for the greens.",
     [{"duration_s": 5400, "label": "brisket"}, {"duration_s": 600, "label": "greens"}]),
    ("Set eight minutes for the pasta and twenty minutes for the sauce.",
     [{"duration_s": 480, "label": "pasta"}, {"duration_s": 1200, "label": "sauce"}]),
    ("Timer for the bread, forty minutes, and one for the soup, fifteen minutes.",
     [{"duration_s": 2400, "label": "bread"}, {"duration_s": 900, "label": "soup"}]),
    ("만두 타이머 팔 분이랑 국 타이머 십오 분 맞춰 줘", [{"duration_s": 480, "label": "만두"}, {"duration_s": 900, "label": "국"}]),
    ("떡 삼 분, 어묵 오 분 타이머 맞춰 줘", [{"duration_s": 180, "label": "떡"}, {"duration_s": 300, "label": "어묵"}]),
    ("자 타이머 두 개, 수육 사십 분이랑 국수 사 분", [{"duration_s": 2400, "label": "수육"}, {"duration_s": 240, "label": "국수"}]),
])
def test_several_timers_each_with_its_length_are_one_start_each(text: str, timers: list) -> None:
    found = timers_in(text)
    assert found == timers
    assert route_by_words(text, "ko" if "분" in text else "en") is None


@pytest.mark.parametrize("text", [
    "Set eight minutes for the pasta and add two eggs to the list.",  # two acts: the reasoner's
    "Ten minutes for the rice, and then one for the beans.",  # "one" is no length
])
def test_a_timer_joined_to_another_act_or_to_no_length_is_not_several_timers(text: str) -> None:
    assert timers_in(text) == [] or route_by_words(text, "en") is not None


@pytest.mark.parametrize(("text", "label"), [
    ("Pasta, nine minutes.", "pasta"), ("Start a timer, thirty-five minutes, chicken.", "chicken"),
    ("Twelve minutes, garlic bread.", "garlic bread"), ("Cancel the potato one, they're done.", "potato"),
    ("How long has the lamb got left?", "lamb"), ("How long have the potatoes got?", "potatoes"),
])
def test_a_timer_named_beside_its_length_or_as_the_one(text: str, label: str) -> None:
    assert timer_label(text) == label


@pytest.mark.parametrize("text", ["Okay, five minutes.", "Ten minutes, thanks.", "No, five minutes.", "Set a timer, ten minutes, please."])
def test_a_word_of_no_name_beside_the_length_is_no_name(text: str) -> None:
    assert timer_label(text) is None


@pytest.mark.parametrize("text", [
    "I need an hour and twenty minutes on a timer.",
    "Set a timer for five minutes, no wait, ten minutes.",
    "한 시간 삼십 분 타이머 맞춰 줘",
])
def test_one_length_in_parts_or_corrected_is_one_timer(text: str) -> None:
    assert timers_in(text) == []


@pytest.mark.parametrize(("text", "complete", "thing"), [
    # "add" misheard as a word no thing begins with
    ("At tomatoes to the list.", False, ("tomatoes", None)), ("Ad two onions to the shopping list.", False, ("onions", "2")),
    # what to buy on the next trip
    ("Pick up limes when you're out.", False, ("limes", None)), ("Get more foil from the shop.", False, ("foil", None)),
    ("Grab a loaf of bread next time.", False, ("bread", "1 loaf")),
    # written down
    ("Put down two tins of tomatoes, please.", False, ("tomatoes", "2 tins")), ("Put down a litre of oat milk.", False, ("oat milk", "1 l")),
    ("Put down a bag of lentils.", False, ("lentils", "1 bag")),
    # in packs
    ("Add a 12-pack of eggs.", False, ("eggs", "12 pack")), ("Add a six pack of beer.", False, ("beer", "6 pack")),
    ("A four-pack of yoghurt on the list.", False, ("yoghurt", "4 pack")),
    # taken back off
    ("Scrap the cream.", True, ("cream", None)), ("Actually, scratch the yoghurt.", True, ("yoghurt", None)),
    ("Oh scratch the bacon, we have some.", True, ("bacon", None)),
])
def test_more_ways_of_putting_a_thing_on_the_list_or_off_it(text: str, complete: bool, thing: tuple) -> None:
    assert shopping_item(text, complete=complete) == thing


@pytest.mark.parametrize(("text", "things"), [
    # a hesitation among the things is no thing
    ("Put milk, uh, bread and eggs on the list.", [("milk", None), ("bread", None), ("eggs", None)]),
    ("Add flour and, um, sugar to the list.", [("flour", None), ("sugar", None)]),
    ("Add rice, erm, noodles, and, uh, soy sauce to the shopping list.", [("rice", None), ("noodles", None), ("soy sauce", None)]),
    # where it goes, said after the verb as an afterthought
    ("두부 두 모랑 콩나물 좀 적어 줘, 장보기 목록에.", [("두부", "2모"), ("콩나물", None)]),
    ("계란 한 판 올려 놔, 목록에.", [("계란", "1판")]), ("식빵 넣어 줘, 장보기 리스트에다가.", [("식빵", None)]),
    # a word said before the thing that is no part of it
    ("우리 참기름 장보기에 넣어 줘.", [("참기름", None)]), ("일단 우유 두 개 장보기에 넣어 줘.", [("우유", "2개")]),
    ("그럼 대파 목록에 추가해.", [("대파", None)]),
])
def test_hesitations_afterthoughts_and_lead_words_are_no_thing(text: str, things: list) -> None:
    assert things_in(text, "shopping_add") == things


@pytest.mark.parametrize(("text", "thing"), [
    ("Can you add frozen spinach, like one bag, to the grocery list?", ("frozen spinach", "1 bag")),
    ("Put milk, say two cartons, on the list.", ("milk", "2 cartons")), ("Add eggs, a dozen, to the list.", ("eggs", "12")),
])
def test_an_amount_said_after_a_thing_is_its_amount(text: str, thing: tuple) -> None:
    assert things_in(text, "shopping_add") == [thing] and shopping_item(text) == thing


def test_an_amount_after_one_of_several_things_is_that_things() -> None:
    assert things_in("Add rice, maybe two kilos, and beans to the list.", "shopping_add") == [("rice", "2 kg"), ("beans", None)]


@pytest.mark.parametrize("text", ["Put down a note that the oven is broken.", "Oh, scratch that.", "I made it from scratch.",
                                  "Get the kids from school.", "Put down the knife.", "Put down your phone and eat."])
def test_words_that_put_nothing_on_the_list(text: str) -> None:
    assert shopping_item(text) is None and shopping_item(text, complete=True) is None


@pytest.mark.parametrize(("text", "tool", "things"), [
    ("Cross off eggs and flour, I got them today.", "shopping_complete", [("eggs", None), ("flour", None)]),
    ("Take the milk off, we've still got two.", "shopping_complete", [("milk", None)]),
    ("Add honey and jam, there's none left.", "shopping_add", [("honey", None), ("jam", None)]),
])
def test_a_remark_after_the_things_is_no_thing(text: str, tool: str, things: list) -> None:
    assert things_in(text, tool) == things


@pytest.mark.parametrize(("text", "items"), [
    ("And olives and capers.", ["olives", "capers"]), ("Oh and crackers, while you are at it.", ["crackers"]),
    ("Also foil and cling film.", ["foil", "cling film"]),
    # what the thing is for, said after it, is no thing
    ("Oh, and some crackers to go with it.", ["crackers"]), ("And buns for the burgers.", ["buns"]),
    ("And a lemon for the fish too.", ["lemon"]),
])
def test_things_joined_on_after_an_addition_are_each_added(text: str, items: list[str]) -> None:
    plan = continued(Act("shopping_add", {"item": "butter"}, {}), text, "en")
    assert plan is not None and [p.args["item"] for p in each_thing(plan, text)] == items


@pytest.mark.parametrize(("text", "label"), [
    # the name said first, right before the length
    ("만두 팔 분.", "만두"), ("국수, 사 분 맞춰 줘.", "국수"), ("그리고 수육 사십 분도.", "수육"), ("보리차 끓이는 거 십 분만.", "보리차"),
    # how long the named one has
    ("만두 얼마 남았어?", "만두"), ("수육은 몇 분 남았지?", "수육"), ("국수 언제 다 돼?", "국수"),
    # the one of that name
    ("만두 거 꺼 줘.", "만두"), ("수육 거에서 삼 분 빼 줘.", "수육"), ("국수 거는 멈춰 줘.", "국수"),
    # what to be reminded of
    ("이십 분 뒤에 빨래 꺼내라고 알려 줘.", "빨래"), ("십 분 있다가 불 줄이라고 말해 줘.", "불"),
    ("삼십 분 후에 고기 뒤집으라고 알려 줘.", "고기"),
])
def test_a_korean_timer_named_as_people_say_it(text: str, label: str) -> None:
    assert timer_label(text) == label


@pytest.mark.parametrize("text", ["음 삼 분.", "타이머 삼 분 맞춰 줘.", "이 분 있다가 알려 줘.", "오 분 더 해 줘."])
def test_a_korean_length_alone_names_no_timer(text: str) -> None:
    assert timer_label(text) is None


@pytest.mark.parametrize(("text", "complete", "thing"), [
    # the trip said first
    ("다음에 장 볼 때 두부 사 와.", False, ("두부", None)), ("마트 갈 때 깻잎 좀 사 와.", False, ("깻잎", None)),
    ("장 보러 가면 식빵 사 오게 넣어 줘.", False, ("식빵", None)),
    # the verb left off, or a counted thing written down
    ("두부 한 모 장바구니에.", False, ("두부", "1모")), ("콩나물 두 봉지 목록에.", False, ("콩나물", "2봉지")),
    ("소고기 반 근 적어 줘.", False, None), ("삼겹살 한 근 적어 줘.", False, ("삼겹살", "1근")),
    ("맥주 여섯 캔 적어 둬.", False, ("맥주", "6캔")),
    # nearly gone
    ("간장 거의 없네.", False, ("간장", None)), ("식용유 떨어져 가.", False, ("식용유", None)), ("설탕 거의 다 썼어.", False, ("설탕", None)),
    # bought, so off the list; a thing of one syllable loses its particle too
    ("두부 사 왔어.", True, ("두부", None)), ("깻잎 샀으니까 지워.", True, ("깻잎", None)), ("무는 체크해 줘.", True, ("무", None)),
])
def test_korean_things_for_the_list_as_people_say_them(text: str, complete: bool, thing: tuple | None) -> None:
    assert shopping_item(text, complete=complete) == thing


@pytest.mark.parametrize("text", ["시간이 없네.", "회의 내용 적어 줘.", "돈이 거의 없네."])
def test_korean_words_that_put_nothing_on_the_list(text: str) -> None:
    assert shopping_item(text) is None


@pytest.mark.parametrize(("text", "language"), [
    ("Right, carry on with it.", "en"), ("Okay, keep going.", "en"), ("Go on then, start it again.", "en"),
    ("됐어, 계속해 줘.", "ko"), ("멈춘 거 이어서 다시 돌려 줘.", "ko"), ("응 다시 켜 줘", "ko"),
])
def test_right_after_a_pause_a_word_to_go_on_lets_that_timer_go_on(text: str, language: str) -> None:
    plan = continued(Act("timer_pause", {"label": "rice"}, {}), text, language)
    assert plan is not None and (plan.tool, plan.args) == ("timer_resume", {"label": "rice"})


@pytest.mark.parametrize(("text", "language", "act"), [
    ("Carry on with the recipe.", "en", "timer_pause"), ("계속 읽어 줘", "ko", "timer_pause"),
    ("Okay, keep going.", "en", "timer_start"),  # nothing was paused
])
def test_a_word_to_go_on_with_something_else_or_after_no_pause_resumes_nothing(text: str, language: str, act: str) -> None:
    assert continued(Act(act, {"label": "rice", "duration_s": 60}, {}), text, language) is None


@pytest.mark.parametrize("text", ["Actually, scratch the yoghurt, we have two.", "Oh scratch the bacon, we have some.",
                                  "Actually, scrap the cream."])
def test_a_tick_off_nearer_a_no_tool_example_is_still_offered_when_it_names_the_thing(picker: ExamplePicker, text: str) -> None:
    assert picker.choices(text, 1, 3)[0] == ["shopping_complete"]


@pytest.mark.parametrize("text", ["Last year the oven timer broke in the middle of the party.",
                                  "Last Sunday I burnt the roast because the timer never rang."])
def test_a_story_that_asks_nothing_is_offered_no_look_up(picker: ExamplePicker, text: str) -> None:
    assert picker.choices(text, 1, 3)[0] == []


@pytest.mark.parametrize(("text", "tool"), [
    # a pause after the verb, written as a comma
    ("Add, sour cream to my shopping list.", "shopping_add"), ("Put, uh, couscous on the shopping list.", "shopping_add"),
    ("Remove, um, the eggs from the list.", "shopping_complete"),
    # a whole act beside a look-up named by a noun
    ("Take milk off my shopping list.", "shopping_complete"), ("Cross the butter off my shopping list.", "shopping_complete"),
    ("Tick lemons off the grocery list.", "shopping_complete"),
])
def test_a_whole_list_act_said_with_a_pause_or_beside_the_list_s_name(picker: ExamplePicker, text: str, tool: str) -> None:
    assert picker.choices(text, 1, 3)[0] == [tool]


@pytest.mark.parametrize(("text", "complete", "thing"), [
    ("Remove, um, the eggs from the list.", True, ("eggs", None)), ("Put, uh, couscous on the shopping list.", False, ("couscous", None)),
    ("Add, um, two bags of flour to the list.", False, ("flour", "2 bags")),
])
def test_a_pause_s_filler_is_no_part_of_the_thing(text: str, complete: bool, thing: tuple) -> None:
    assert shopping_item(text, complete=complete) == thing


@pytest.mark.parametrize("text", [
    "Two timers please, the rice gets fifteen minutes and the beans eight.",
    "Timers for the rice, fifteen minutes, and the beans, eight.",
    "Noodles get four minutes, the eggs seven.",
])
def test_each_of_several_timers_with_the_unit_said_once_is_borne_out_by_the_words(text: str) -> None:
    from agent.deciding.arguments import grounded

    timers = timers_in(text)
    assert len(timers) == 2 and all(grounded("timer_start", timer, text) for timer in timers), timers


@pytest.mark.parametrize(("text", "items"), [
    ("양파, 마늘, 대파 목록에 넣어 줘.", ["양파", "마늘", "대파"]), ("두부, 애호박이랑 버섯 장보기 목록에 추가해 줘.", ["두부", "애호박", "버섯"]),
    ("우유 두 팩이랑 식빵, 잼도 목록에 적어 줘요.", ["우유", "식빵", "잼"]), ("음, 두유 목록에 넣어 줘.", ["두유"]),
])
def test_korean_things_with_commas_before_the_list_are_each_added(text: str, items: list[str]) -> None:
    assert [item for item, _ in things_in(text, "shopping_add")] == items
    assert not several_acts(text, "ko")  # one act on several things, never the reasoner's


@pytest.mark.parametrize(("text", "items"), [
    ("우유 다 떨어졌네, 목록에 추가해 줄래?", ["우유"]), ("두부 사야 돼, 장보기 목록에 추가해 줘.", ["두부"]),
    ("계란이 없어, 목록에 넣어 줘.", []),  # what is said of a thing before the comma is no thing; the model reads it
])
def test_a_korean_clause_said_of_a_thing_before_the_comma_is_no_thing_itself(text: str, items: list[str]) -> None:
    assert [item for item, _ in things_in(text, "shopping_add")] == items
