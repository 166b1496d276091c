"""A thermostat moved by some degrees from where it is set ("nudge the thermostat up two degrees",
"난방 온도 일 도만 올려 줘"), a level said with its way ("down to 19"), and a thing named within its
own clause: a reason said after a request names nothing to switch."""

from __future__ import annotations

import pytest

from agent.deciding.home_commands import home_command
from fakes import FakeHomeAssistant
from test_home_assistant_tools import household, run, tools_for
from tools.home_assistant.names import match, names_something


def refers(words: str, temperature: bool = False) -> bool:
    return names_something(words, household(), temperature)


def meant(plan) -> list[str]:
    return [e.entity_id for e in match(str(plan.args.get("target") or ""), household(), own_area="Kitchen").entities]


@pytest.mark.parametrize("text, language, step", [
    ("Brr, nudge the thermostat up two degrees.", "en", 2.0),
    ("Turn the heating down a degree.", "en", -1.0),
    ("Thermostat up by 3 degrees, please.", "en", 3.0),
    ("난방 온도 일 도만 올려 줘.", "ko", 1.0),
    ("난방 두 도 낮춰 줘", "ko", -2.0),
    ("난방 온도 삼 도 더 높여 줘요", "ko", 3.0),
])
def test_a_step_is_read_from_the_words(text, language, step):
    plan = home_command(text, language, refers)
    assert plan is not None and plan.tool == "home_control" and plan.args["action"] == "set" and plan.args["step"] == step
    assert "value" not in plan.args and meant(plan) == ["climate.thermostat"]


@pytest.mark.parametrize("text, value", [
    ("Living room thermostat down to 19.", 19.0), ("Heating up to twenty-one.", 21.0), ("The thermostat down to eighteen, please.", 18.0),
])
def test_a_level_said_with_its_way_is_set(text, value):
    plan = home_command(text, "en", refers)
    assert plan is not None and plan.args == {"action": "set", "target": plan.args["target"], "value": value}
    assert meant(plan) == ["climate.thermostat"]


@pytest.mark.parametrize("text, target", [
    ("Put the aircon on, the oven has made the whole flat hot.", None),
    ("Get the extractor running, the salmon skin is smoking and the oven's hot.", "the extractor"),
    ("The tart has finished, so turn the oven off.", "the oven"),
])
def test_a_thing_is_named_within_its_own_clause(text, target):
    plan = home_command(text, "en", refers)
    assert plan is not None
    if target is None:
        assert plan.tool is None and "aircon" in plan.say  # refused by its name, no oven switched
    else:
        assert plan.args["target"] == target


async def test_a_step_moves_the_set_temperature():
    fake = FakeHomeAssistant(household())
    tools = tools_for(fake)
    await run(tools, "home_control", action="set", target="the heating", value=20)
    out = await run(tools, "home_control", action="set", target="the thermostat", step=2)
    assert fake.calls[-1][:2] == ("climate", "set_temperature") and fake.calls[-1][3] == {"temperature": 22.0}
    assert out.text == "The Living Room Thermostat is set to 22 degrees."
    out = await run(tools, "home_control", action="set", target="the thermostat", step=-3)
    assert fake.calls[-1][3] == {"temperature": 19.0}


async def test_a_step_on_a_thing_with_no_set_temperature_cannot_be_done():
    fake = FakeHomeAssistant(household())
    out = await run(tools_for(fake), "home_control", action="set", target="the kitchen lights", step=2)
    assert out.data.get("error") == "unsupported" and not fake.calls


@pytest.mark.parametrize("text, action, entity", [
    ("We're finished in here, so the light can go off.", "off", "light.kitchen_lights"),
    ("The fan can be switched off now.", "off", "switch.hood_fan"),
    ("Dinner's served, the hood can go off.", "off", "switch.hood_fan"),
])
def test_what_a_thing_may_do_now_is_asked(text, action, entity):
    plan = home_command(text, "en", refers)
    assert plan is not None and plan.args["action"] == action and meant(plan) == [entity]


@pytest.mark.parametrize("text, entity", [
    ("Lights in here, please.", "light.kitchen_lights"),
    ("Lamps in the living room.", "light.living_room_light"),
    ("Lamp in here.", "light.kitchen_lights"),
])
def test_light_asked_for_where_it_is_wanted_is_switched_on(text, entity):
    plan = home_command(text, "en", refers)
    assert plan is not None and plan.args["action"] == "on" and meant(plan) == [entity]


@pytest.mark.parametrize("text, refused", [
    ("Hmm, there's too much glare on the telly, switch it off again.", False),
    ("Ugh, the steam is fogging up the microwave door, turn it off.", False),
    ("The dishwasher's packed, get it running.", True),
    ("The telly is too loud, turn it off.", True),
])
def test_it_after_a_device_was_switched_is_that_device_unless_an_appliance_is_the_subject(text, refused):
    plan = home_command(text, "en", refers, ["light.living_room_light"])
    assert plan is not None
    if refused:
        assert plan.tool is None
    else:
        assert plan.args == {"action": "off", "entity_ids": ["light.living_room_light"]}
