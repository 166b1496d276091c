"""Home requests read as classes, not sentences: a question only reads, a verb with kitchen meanings
acts only on the home's own things, a thing the home does not share is refused by name and never
guessed onto another device, "here" is the speaker's own room, the asking clause of a longer
request is the request, and a yes may go on ("yes, do it", "응 열어 줘").  Each class is shown by
varied sentences, in English and Korean."""

from __future__ import annotations

import pytest

from agent.deciding.confirm import answer_of
from agent.deciding.home_commands import home_command
from test_home_assistant_tools import household
from tools.home_assistant.names import match, names_something


def refers(words: str, temperature: bool = False) -> bool:
    return names_something(words, household(), temperature)


def meant(plan) -> list[str]:
    return [e.entity_id for e in match(str(plan.args.get("target") or ""), household(), own_area="Kitchen").entities]


@pytest.mark.parametrize("text, language, entity", [
    ("Did we leave the hood fan running?", "en", "switch.hood_fan"),
    ("Is the oven still running?", "en", "switch.oven"),
    ("Have we left the kitchen lights on?", "en", "light.kitchen_lights"),
    ("Did somebody switch off the hood fan?", "en", "switch.hood_fan"),
    ("Can you check if the garage door is still open?", "en", "cover.garage_door"),
    ("Any idea whether the front door is locked?", "en", "lock.front_door"),
    ("오븐 아직 켜져 있나요?", "ko", "switch.oven"),
    ("주방 불 껐어?", "ko", "light.kitchen_lights"),
    ("후드 돌아가고 있어?", "ko", "switch.hood_fan"),
    ("현관문 잠겼나?", "ko", "lock.front_door"),
])
def test_a_question_about_a_thing_reads_it_and_never_acts(text, language, entity):
    plan = home_command(text, language, refers)
    assert plan is not None and plan.tool == "home_state", plan
    assert meant(plan) == [entity]


@pytest.mark.parametrize("text, language", [
    ("Run the tap for a minute.", "en"), ("Start the rice.", "en"), ("Open the pot lid.", "en"), ("Stop the blender.", "en"),
    ("물 좀 틀어 줘", "ko"), ("냄비 뚜껑 열어 줘", "ko"), ("믹서기 멈춰", "ko"),
    ("Put the kettle on.", "en"),
])
def test_a_verb_with_kitchen_meanings_acts_only_on_a_thing_the_home_has(text, language):
    assert home_command(text, language, refers) is None


@pytest.mark.parametrize("text, language, action, entity", [
    ("Run the hood fan.", "en", "on", "switch.hood_fan"),
    ("Ugh, the fish is smoking, get the hood fan running real quick.", "en", "on", "switch.hood_fan"),
    ("Get the extractor going, the onions are burning.", "en", "on", "switch.hood_fan"),
    ("Could you get the fan started?", "en", "on", "switch.hood_fan"),
    ("Start the extractor fan, please.", "en", "on", "switch.hood_fan"),
    ("Stop the fan.", "en", "off", "switch.hood_fan"),
    ("Would you mind switching the oven off?", "en", "off", "switch.oven"),
    ("후드 좀 멈춰 줘", "ko", "off", "switch.hood_fan"),
    ("환풍기 돌려", "ko", "on", "switch.hood_fan"),
    ("오븐 꺼 버려", "ko", "off", "switch.oven"),
    # a verb with no thing acts on the thing another clause is about
    ("후드 소리 너무 시끄럽다, 그만 꺼 줘.", "ko", "off", "switch.hood_fan"), ("오븐 열기 장난 아니네, 이제 꺼 줘요.", "ko", "off", "switch.oven"),
    ("The hood fan is so loud, turn it off.", "en", "off", "switch.hood_fan"),
    ("The kitchen lights are way too bright, switch them off.", "en", "off", "light.kitchen_lights"),
])
def test_the_many_ways_to_switch_a_thing_the_home_has(text, language, action, entity):
    plan = home_command(text, language, refers)
    assert plan is not None and plan.tool == "home_control" and plan.args["action"] == action, plan
    assert meant(plan) == [entity]


@pytest.mark.parametrize("text, language, thing", [
    ("Turn on the dishwasher.", "en", "dishwasher"),
    ("Please switch off the boiler.", "en", "boiler"),
    ("Could you turn the air conditioner on?", "en", "air conditioner"),
    ("보일러 켜 줘", "ko", "보일러"),
    ("식기세척기 좀 꺼 줄래?", "ko", "식기세척기"),
    ("에어컨 켜 주세요", "ko", "에어컨"),
    # a thing of a kind the home has, in a room it has no area for: never another room's
    ("Switch on the bathroom light.", "en", "bathroom light"), ("Turn the bedroom lamp off, please.", "en", "bedroom lamp"),
    ("침실 불 켜 줘", "ko", "침실 불"), ("화장실 불 꺼 줄래?", "ko", "화장실 불"),
    ("작은방 불 켜 줄래요?", "ko", "작은방 불"), ("Turn on the spare room light.", "en", "spare room light"),
    ("다용도실 불 좀 꺼 줘.", "ko", "다용도실 불"),
    # a split verb too: never another tool's act on the thing's name
    ("Get the toaster going.", "en", "toaster"), ("Could you get the dishwasher running?", "en", "dishwasher"),
])
def test_a_thing_the_home_does_not_share_is_refused_by_name_never_another_device(text, language, thing):
    plan = home_command(text, language, refers)
    assert plan is not None and plan.tool is None and thing in plan.say, plan
    # Nothing in the home is found for it either, whoever asks the home tool.
    assert not refers(thing)


@pytest.mark.parametrize("text, language, action", [
    ("Could you turn on the light in here?", "en", "on"),
    ("Switch the lights off over here, please.", "en", "off"),
    ("Put the light on in this room.", "en", "on"),
    ("여기 불 좀 켜 줘", "ko", "on"),
    ("이 방 불 꺼 줄래요?", "ko", "off"),
])
def test_here_is_the_room_the_speaker_stands_in(text, language, action):
    plan = home_command(text, language, refers)
    assert plan is not None and plan.args["action"] == action
    assert meant(plan) == ["light.kitchen_lights"]  # two lights in the home; the speaker stands in the Kitchen


@pytest.mark.parametrize("text, language, action", [
    ("It's far too bright. Turn it off.", "en", "off"),
    ("Oh wait, actually, switch it back on.", "en", "on"),
    ("Hmm, that's not right, turn it off again", "en", "off"),
    ("아 눈부셔. 그거 꺼 줘", "ko", "off"),
    ("잠깐, 다시 켜 줘", "ko", "on"),
])
def test_the_clause_that_asks_is_the_request(text, language, action):
    plan = home_command(text, language, refers, last=["light.kitchen_lights"])
    assert plan is not None and plan.args == {"action": action, "entity_ids": ["light.kitchen_lights"]}


def test_a_request_with_thanks_after_it_is_still_the_request():
    for text in ("Turn off the fan, thanks.", "Switch on the kitchen lights. Thank you!", "Kill the oven please, cheers."):
        plan = home_command(text, "en", refers)
        assert plan is not None and plan.tool == "home_control", text


@pytest.mark.parametrize("text, language", [
    ("yes, do it", "en"), ("yeah go ahead", "en"), ("sure, go for it please", "en"),
    ("응 해 줘", "ko"), ("네 부탁해요", "ko"), ("그래 그렇게 해 줘", "ko"), ("응응", "ko"),
    # the yes said again before going on
    ("Yep, that's fine, go ahead.", "en"), ("Yes, sounds good.", "en"), ("네 괜찮아요, 해 주세요", "ko"),
])
def test_a_yes_that_goes_on_is_a_yes(text, language):
    assert answer_of(text, language) == "yes"


@pytest.mark.parametrize("text, language, act", [
    ("open it", "en", "open"), ("please lock it", "en", "lock"), ("go ahead and lock it", "en", "lock"),
    ("열어 줘", "ko", "open"), ("응 잠가 줘", "ko", "lock"), ("네 열어 주세요", "ko", "open"),
    ("Yep, that's fine, open it.", "en", "open"), ("Yeah, all good, lock it.", "en", "lock"), ("응 괜찮아, 열어 줘", "ko", "open"),
])
def test_the_offered_act_said_back_is_a_yes(text, language, act):
    assert answer_of(text, language, act) == "yes"
    if not text.startswith(("응", "네")):  # without a yes word, only the offered act's own verb answers
        assert answer_of(text, language, "close") is None


@pytest.mark.parametrize("text, language", [
    ("yes, don't", "en"), ("no, leave it closed", "en"), ("nah", "en"),
    ("응 아니 하지 마", "ko"), ("아니 그냥 둬", "ko"), ("아뇨 괜찮아요", "ko"),
])
def test_a_yes_taken_back_or_a_no_is_a_no(text, language):
    assert answer_of(text, language, "open") == "no"


@pytest.mark.parametrize("text, language", [
    ("yes and set a timer for ten minutes", "en"), ("sure, what's the weather tomorrow", "en"),
    ("stop the fan", "en"), ("응 근데 거실 불도 켜 줘", "ko"), ("네 그리고 라면 타이머 3분", "ko"),
])
def test_words_that_ask_something_new_are_no_answer(text, language):
    assert answer_of(text, language, "open") is None


@pytest.mark.parametrize("text", [
    "How can I get the oven hotter without burning the crust?",
    "What should I set the oven to for sourdough?",
    "How long should the fan run after frying fish?",
    "Why does the kitchen light flicker when the kettle is on?",
])
def test_a_question_for_know_how_is_no_home_request_though_it_names_a_thing(text):
    assert home_command(text, "en", refers) is None


@pytest.mark.parametrize("text, language, action, entity", [
    ("차고 문 열어 줘", "ko", "open", "cover.garage_door"),
    ("현관문 잠금 풀어 줘", "ko", "unlock", "lock.front_door"),
    ("현관문 좀 잠가 줄래?", "ko", "lock", "lock.front_door"),
    # 좀 inside the verb, 현관 for its door, 잠금 해제 said with 해
    ("현관 잠금 좀 풀어 줘.", "ko", "unlock", "lock.front_door"), ("현관 잠가 줘.", "ko", "lock", "lock.front_door"),
    ("현관문 잠금 해제 좀 해 줄래?", "ko", "unlock", "lock.front_door"),
    ("Could you open up the garage door?", "en", "open", "cover.garage_door"),
    ("Unlock the front door, please.", "en", "unlock", "lock.front_door"),
    # a door that rolls, got up or brought down
    ("Can you get the garage door up? I'm pulling in.", "en", "open", "cover.garage_door"),
    ("Bring the garage door down, we're in.", "en", "close", "cover.garage_door"), ("Put the garage up for me.", "en", "open", "cover.garage_door"),
])
def test_doors_open_close_lock_and_unlock_as_said(text, language, action, entity):
    plan = home_command(text, language, refers)
    assert plan is not None and plan.args["action"] == action and meant(plan) == [entity], plan


@pytest.mark.parametrize("text, room", [
    ("Make it 22 degrees in the living room.", "living room"),
    ("Keep it at twenty degrees please.", ""),
    ("Could you get the temperature up to 23 degrees in the living room?", "living room"),
])
def test_a_temperature_said_with_no_thing_is_the_heatings(text, room):
    plan = home_command(text, "en", refers)
    assert plan is not None and plan.args["action"] == "set" and plan.args["target"].startswith("the heating")
    assert room in plan.args["target"] and meant(plan) == ["climate.thermostat"]


@pytest.mark.parametrize("text, value", [
    ("Bump the heating up to twenty-two degrees.", 22), ("Could you put the thermostat on eighteen?", 18),
    ("Knock the heating down to nineteen.", 19), ("Push the thermostat up to 23.", 23),
])
def test_a_level_set_by_any_verb_of_setting_or_put_on_a_number(text, value):
    plan = home_command(text, "en", refers)
    assert plan is not None and plan.args["action"] == "set" and plan.args["value"] == value and meant(plan) == ["climate.thermostat"]


@pytest.mark.parametrize("text, language", [
    ("Kids, turn off the living room light when you leave.", "en"), ("Honey, switch the hood fan off when you're done.", "en"),
    ("여보, 거실 불 좀 꺼 줘.", "ko"),
])
def test_a_home_act_asked_of_someone_else_in_the_room_is_no_command(text, language):
    assert home_command(text, language, refers) is None


@pytest.mark.parametrize("text, tool, entity", [
    ("The hood fan, is it still running?", "home_state", "switch.hood_fan"),
    ("Oh, the kitchen lights, did we leave them on?", "home_state", "light.kitchen_lights"),
    ("The hood fan, turn it off.", "home_control", "switch.hood_fan"),
])
def test_it_is_the_thing_named_in_a_clause_of_its_own(text, tool, entity):
    plan = home_command(text, "en", refers)
    assert plan is not None and plan.tool == tool and meant(plan) == [entity], plan


@pytest.mark.parametrize("text", ["How many degrees is the living room at?", "How warm is the living room?"])
def test_how_many_degrees_a_room_is_reads_its_temperature(text):
    plan = home_command(text, "en", refers)
    assert plan is not None and plan.tool == "home_state" and plan.args == {"target": "the living room", "what": "temperature"}


def test_how_many_degrees_to_cook_at_is_know_how():
    assert home_command("How many degrees should the oven be for bread?", "en", refers) is None


def test_everything_in_a_room_is_what_switches_there_and_only_off():
    for words in ("everything in the kitchen", "all of it in the kitchen", "주방 전부"):
        off = match(words, household(), own_area="Kitchen", everything=True)
        assert {e.entity_id for e in off.entities} == {"light.kitchen_lights", "switch.hood_fan", "switch.oven"}, words
        assert not match(words, household(), own_area="Kitchen").found  # switching on: nothing by "everything"


def test_an_act_only_offered_is_no_act_until_the_yes():
    from agent.results import ToolCallRecord

    offered = ToolCallRecord("home_control", {"action": "open", "target": "the garage door"}, ran=True, acts=True, ok=True,
                             data={"asked": ["cover.garage_door"], "offer": {"tool": "home_control"}})
    made = ToolCallRecord("home_control", {"action": "open", "entity_ids": ["cover.garage_door"]}, ran=True, acts=True, ok=True,
                          data={"states": {"cover.garage_door": "open"}})
    assert not offered.acted and made.acted


def test_with_nothing_read_from_home_assistant_a_kind_of_thing_is_the_homes_and_not_refused():
    # Home Assistant not reached yet: the home tool is asked, and says it cannot reach it.
    for text in ("Turn on the kitchen lights.", "Switch the fan off.", "거실 불 켜 줘"):
        plan = home_command(text, "ko" if "불" in text else "en", lambda words, temperature=False: names_something(words, [], temperature))
        assert plan is not None and plan.tool == "home_control", text


@pytest.mark.parametrize("text, value", [
    ("Living room thermostat, twenty degrees please.", 20), ("Thermostat, 19 degrees.", 19),
    ("Heating at twenty-one degrees, ta.", 21),
    # the thing its subject, then a verb of going to the number
    ("Brr, could the heating go up to 22?", 22), ("The thermostat can come down to eighteen.", 18),
    ("I'm cold, can the heating be at twenty-three?", 23),
])
def test_a_thing_and_a_temperature_with_no_verb_of_setting_sets_it(text, value):
    plan = home_command(text, "en", refers)
    assert plan is not None and plan.args["action"] == "set" and plan.args["value"] == value and meant(plan) == ["climate.thermostat"], plan


@pytest.mark.parametrize("text", ["The pasta needs ten minutes.", "The kids are 8 and 10.", "The oven light is out again, twenty years old."])
def test_a_number_beside_a_thing_is_no_setting_without_degrees_or_a_verb(text):
    plan = home_command(text, "en", refers)
    assert plan is None or plan.args.get("action") != "set", plan


@pytest.mark.parametrize("text, action, entity", [
    ("Front door needs locking, can you do that?", "lock", "lock.front_door"),
    ("The hood fan needs switching off.", "off", "switch.hood_fan"),
    ("The garage needs to be closed before the rain.", "close", "cover.garage_door"),
    ("Kitchen lights need turning on, it's dark.", "on", "light.kitchen_lights"),
])
def test_what_a_thing_needs_is_the_act(text, action, entity):
    plan = home_command(text, "en", refers)
    assert plan is not None and plan.args["action"] == action and meant(plan) == [entity], plan


@pytest.mark.parametrize("text", ["Get the heating up a bit.", "Bring the soup up to a boil.", "Put the living room blinds up."])
def test_up_and_down_open_and_close_only_a_cover(text):
    plan = home_command(text, "en", refers)
    assert plan is None or plan.args.get("action") not in ("open", "close"), plan


@pytest.mark.parametrize("text, entity", [
    ("Has anybody remembered to lock our front door?", "lock.front_door"), ("Did you forget to turn off the oven?", "switch.oven"),
    ("Has someone remembered to close the garage door?", "cover.garage_door"),
])
def test_whether_someone_remembered_an_act_reads_the_thing(text, entity):
    plan = home_command(text, "en", refers)
    assert plan is not None and plan.tool == "home_state" and meant(plan) == [entity], plan


@pytest.mark.parametrize("text, thing", [
    ("Could you fire up the boiler? I want a bath.", "boiler"), ("Run the dishwasher please.", "dishwasher"),
    ("Start the washing machine.", "washing machine"),
])
def test_an_appliance_the_home_does_not_share_is_refused_after_any_verb(text, thing):
    plan = home_command(text, "en", refers)
    assert plan is not None and plan.tool is None and thing in plan.say, plan


@pytest.mark.parametrize("tool, data, things", [
    ("home_control", {"entity_ids": ["switch.hood_fan"]}, ("switch.hood_fan",)),
    ("home_state", {"states": {"switch.oven": "on"}}, ("switch.oven",)),
    ("home_state", {"states": {f"light.l{i}": "on" for i in range(5)}}, ()),
    ("timer_status", {"timers": []}, ()),
])
def test_it_is_what_the_turn_before_switched_or_asked_about(tool, data, things):
    from agent.deciding.home_commands import home_things

    assert home_things(tool, data) == things
    if things:
        plan = home_command("Turn it off then.", "en", refers, list(things))
        assert plan is not None and plan.args["entity_ids"] == list(things)


@pytest.mark.parametrize("text, entity", [
    ("현관문 잠겨 있는 거 맞지?", "lock.front_door"), ("오븐 꺼져 있는 거죠?", "switch.oven"), ("차고 문 닫혀 있겠지?", "cover.garage_door"),
    ("후드 돌아가고 있는 거 맞아?", "switch.hood_fan"),
])
def test_a_korean_state_asked_to_be_confirmed_reads_it(text, entity):
    plan = home_command(text, "ko", refers)
    assert plan is not None and plan.tool == "home_state" and meant(plan) == [entity], plan


@pytest.mark.parametrize("text, value", [("좀 덥네, 난방 18도로 낮춰 줘요.", 18), ("거실 온도 이십이 도로 높여 줘.", 22), ("난방 20도로 맞춰 둬.", 20)])
def test_a_korean_temperature_lowered_or_raised_to_a_number_sets_it(text, value):
    plan = home_command(text, "ko", refers)
    assert plan is not None and plan.args["action"] == "set" and plan.args["value"] == value and meant(plan) == ["climate.thermostat"], plan


@pytest.mark.parametrize("text", ["That's fine.", "That's okay.", "That works."])
def test_a_word_of_content_alone_is_no_yes(text):
    # alone, "that's fine" may decline ("Shall I add more? That's fine."): only after a yes is it one
    assert answer_of(text, "en", "open") is None


@pytest.mark.parametrize("text, language, entity", [
    ("Quick question, kitchen lights, on or off?", "en", "light.kitchen_lights"),
    ("The hood fan, is it on or off right now?", "en", "switch.hood_fan"),
    ("Front door, locked or unlocked?", "en", "lock.front_door"),
    ("I've a feeling we left the oven on, is it?", "en", "switch.oven"),
    ("I think I left the garage door open, didn't I?", "en", "cover.garage_door"),
    ("Pretty sure someone left the hood fan running, is it still?", "en", "switch.hood_fan"),
    ("현관문 잠갔나 모르겠네, 확인 좀 해 줄래?", "ko", "lock.front_door"),
    ("오븐 껐는지 모르겠어, 봐 줄래?", "ko", "switch.oven"),
    ("차고 문 닫았나?", "ko", "cover.garage_door"),
])
def test_a_doubt_or_a_choice_of_two_states_reads_the_thing_and_never_acts(text, language, entity):
    plan = home_command(text, language, refers)
    assert plan is not None and plan.tool == "home_state", plan
    assert meant(plan) == [entity]


@pytest.mark.parametrize("text, language, tool, action", [
    ("Is it actually on now? I can't hear it.", "en", "home_state", None),
    ("Is it really off?", "en", "home_state", None),
    ("Is it definitely on?", "en", "home_state", None),
    ("Great, now turn it off again.", "en", "home_control", "off"),
    ("그럼 그거 이제 필요 없어, 꺼 줄래요?", "ko", "home_control", "off"),
    ("아 이제 됐어, 꺼 줘.", "ko", "home_control", "off"),
    ("다시 켜 줘.", "ko", "home_control", "on"),
])
def test_it_or_a_verb_alone_is_the_thing_the_turn_before_was_about(text, language, tool, action):
    plan = home_command(text, language, refers, ["switch.hood_fan"])
    assert plan is not None and plan.tool == tool and plan.args["entity_ids"] == ["switch.hood_fan"], plan
    assert plan.args.get("action") == action
    assert home_command(text, language, refers) is None  # with nothing just switched or asked, "it" is no device


@pytest.mark.parametrize("text, language, action, entity", [
    ("Pop the kitchen lights on for Grandad, he wants to read.", "en", "on", "light.kitchen_lights"),
    ("Flick the kitchen lights off so the baby can sleep.", "en", "off", "light.kitchen_lights"),
    ("Stick the hood fan on for a while, it's smoky.", "en", "on", "switch.hood_fan"),
    ("Garage door up, please.", "en", "open", "cover.garage_door"),
    ("The garage door down, thanks.", "en", "close", "cover.garage_door"),
    ("오븐 전원 좀 넣어 줘.", "ko", "on", "switch.oven"),
    ("후드 전원 꺼 줘.", "ko", "off", "switch.hood_fan"),
])
def test_more_ways_to_switch_and_what_the_act_is_for_said_after_it(text, language, action, entity):
    plan = home_command(text, language, refers)
    assert plan is not None and plan.tool == "home_control" and plan.args["action"] == action, plan
    assert meant(plan) == [entity]


@pytest.mark.parametrize("text, language, thing", [
    ("Open the kitchen window a crack, it's steamy in here.", "en", "the kitchen window"),
    ("Stick the telly on for the football, the living room one.", "en", "the telly"),
    ("Switch the kettle on, would you?", "en", "the kettle"),
    ("베란다 창문 닫아 주세요.", "ko", "베란다 창문"),
    ("거실 티비 좀 켜 줘.", "ko", "거실 티비"),
    ("냉장고 꺼 줘.", "ko", "냉장고"),
])
def test_a_thing_in_a_room_the_home_has_no_such_thing_of_is_refused(text, language, thing):
    plan = home_command(text, language, refers)
    assert plan is not None and plan.tool is None, plan
    assert thing.split()[-1] in plan.say


@pytest.mark.parametrize("text, language, act, answer", [
    ("아 잠깐, 하지 마. 비 오기 시작했어.", "ko", "open", "no"),
    ("Wait, no, leave it, it's started raining.", "en", "open", "no"),
    ("아니, 그냥 둬, 내가 나갈게.", "ko", "open", "no"),
    ("응, 풀어 줘, 빨리.", "ko", "unlock", "yes"),
    ("Yes, unlock it, quick.", "en", "unlock", "yes"),
    ("네, 열어 주세요, 장 봐 왔어요.", "ko", "open", "yes"),
    ("Yeah, go ahead, the car is outside.", "en", "open", "yes"),
    ("Yes, and set a timer for five minutes.", "en", "open", None),
    ("응, 그리고 불 꺼 줘.", "ko", "open", None),
])
def test_an_answer_in_a_clause_of_its_own_with_the_reason_after_it(text, language, act, answer):
    assert answer_of(text, language, act) == answer


@pytest.mark.parametrize("text, language, thing", [
    ("식기세척기에 그릇 꽉 찼어, 작동시켜 줘요.", "ko", "식기세척기"),
    ("The dishwasher is full, run it please.", "en", "dishwasher"),
    ("세탁기 다 됐나? 그럼 꺼 줘.", "ko", "세탁기"),
    ("That boiler again, switch it on.", "en", "boiler"),
    ("The washing machine's finished, switch it off.", "en", "washing machine"),
    ("The dishwasher's full to the brim, start it.", "en", "dishwasher"),
])
def test_it_is_never_the_last_thing_when_the_words_name_an_appliance_the_home_lacks(text, language, thing):
    plan = home_command(text, language, refers, ["light.living_room_light"])
    assert plan is not None and plan.tool is None and thing in plan.say, plan


def test_it_is_the_thing_of_the_turn_just_before_and_only_soon_after():
    from agent.assistant import THINGS_WINDOW_S, things_after

    fan = ("switch.hood_fan",)
    # "Turn on the hood fan.", then the next turn: "turn it off" is the fan
    assert things_after(fan, (), 0.0, 10.0) == (fan, 10.0)
    assert things_after(None, fan, 10.0, 30.0) == (fan, 10.0)
    # a timer set, or nothing called, in between: "turn it off" is no longer the fan's
    assert things_after((), fan, 10.0, 40.0) == ((), 40.0)
    # long after: forgotten
    assert things_after(None, fan, 10.0, 10.0 + THINGS_WINDOW_S + 1) == ((), 10.0)


@pytest.mark.parametrize("text, language", [
    ("Turn on the kitchen whites.", "en"), ("Switch the living room thing off.", "en"), ("거실 그거 켜 줘", "ko"),
])
def test_with_nothing_read_from_home_assistant_a_room_said_goes_to_the_home_tool(text, language):
    # The tool then says it cannot reach Home Assistant, not that it cannot control a thing it was never told of.
    plan = home_command(text, language, lambda words, temperature=False: names_something(words, [], temperature))
    assert plan is not None and plan.tool == "home_control", plan
