"""Home control: which entity the words mean, the calls made, what is said, asked back and undone
(against a fake Home Assistant; tests/test_home_assistant_core.py runs the real one)."""

from __future__ import annotations

import logging

import pytest

from agent.deciding.home_commands import home_command
from agent.deciding.undo import Act, opposite
from fakes import FakeHomeAssistant
from tools.home_assistant.client import HomeAssistantClient, HomeEntity, entities_from, websocket_url
from tools.home_assistant.control import home_assistant_tools
from tools.home_assistant.home import HomeAssistantHome
from tools.home_assistant.names import match, names_something

HEAT = {"hvac_modes": ["heat", "off"], "temperature": 20.0, "current_temperature": 19.5}


def household() -> list[HomeEntity]:
    return [
        HomeEntity("light.kitchen_lights", "Kitchen Lights", area="Kitchen", state="off"),
        HomeEntity("light.living_room_light", "Living Room Light", area="Living Room", state="off"),
        HomeEntity("switch.hood_fan", "Hood Fan", ("후드", "환풍기"), "Kitchen", state="off"),
        HomeEntity("switch.oven", "Oven", ("오븐",), "Kitchen", state="on"),
        HomeEntity("climate.thermostat", "Living Room Thermostat", area="Living Room", state="off", attributes=HEAT),
        HomeEntity("sensor.living_room_temperature", "Living Room Temperature", area="Living Room", state="19.5",
                   attributes={"device_class": "temperature", "unit_of_measurement": "°C"}),
        HomeEntity("lock.front_door", "Front Door", ("현관문",), state="locked"),
        HomeEntity("cover.garage_door", "Garage Door", ("차고 문",), state="closed", attributes={"device_class": "garage"}),
    ]


def tools_for(fake: FakeHomeAssistant, language: str = "en", area: str | None = "Kitchen"):
    home = HomeAssistantHome(fake, own_area=area)
    return {spec.name: spec for spec in home_assistant_tools(home, language)}


async def run(tools, name: str, **args):
    spec = tools[name]
    return await spec.run(spec.args(**args))


@pytest.mark.parametrize("words, expected", [
    ("the kitchen lights", ["light.kitchen_lights"]),
    ("the light", ["light.kitchen_lights"]),  # the speaker's own area
    ("the living room light", ["light.living_room_light"]),
    ("hood fan", ["switch.hood_fan"]),
    ("the fan", ["switch.hood_fan"]),  # a switch named for what it powers
    ("all the lights", ["light.kitchen_lights", "light.living_room_light"]),
    ("주방 불", ["light.kitchen_lights"]),  # "Kitchen" is 주방 without an alias
    ("거실불을", ["light.living_room_light"]),  # particles and no space
    ("환풍기", ["switch.hood_fan"]),
    ("난방", ["climate.thermostat"]),
    ("the toaster", []),
])
def test_the_words_find_the_entity(words, expected):
    found = match(words, household(), own_area="Kitchen")
    assert [e.entity_id for e in found.entities] == expected


def test_a_misheard_korean_room_is_found_by_its_letters_and_an_unknown_one_is_not_here():
    # "거실" heard as "가슐": the nearest room by its letters.
    assert [e.entity_id for e in match("가슐불", household(), own_area="Kitchen").entities] == ["light.living_room_light"]
    # A room the home has no area for is no other room: neither this speaker's, nor asked among the others.
    found = match("the bedroom light", household(), own_area="Kitchen")
    assert not found.found and not found.candidates


def test_a_home_act_heard_doubtfully_is_asked_back_by_the_words_heard():
    from agent.deciding.confirm import question

    assert question("home_control", {"action": "on", "target": "the kitchen lights"}, "en") == "Turn on the kitchen lights?"
    assert question("home_control", {"action": "on", "target": "가슐불"}, "ko") == "가슐불 켤까요?"
    assert question("home_control", {"action": "set", "target": "난방", "value": 21.0}, "ko") == "난방 21도로 맞출까요?"


def test_a_kind_in_no_named_room_with_several_fitting_is_asked_about():
    found = match("the light", household(), own_area=None)
    assert not found.found and {e.entity_id for e in found.candidates} == {"light.kitchen_lights", "light.living_room_light"}


def test_food_is_no_light():
    for words in ("불고기 레시피", "등심 굽는 시간", "set a timer for the pasta"):
        assert not names_something(words, household()), words


@pytest.mark.parametrize("text, language, tool, args", [
    ("Turn on the kitchen lights.", "en", "home_control", {"action": "on", "target": "the kitchen lights"}),
    ("Switch off the hood fan", "en", "home_control", {"action": "off", "target": "the hood fan"}),
    ("turn the lights off please", "en", "home_control", {"action": "off", "target": "the lights"}),
    ("Is the oven on?", "en", "home_state", {"target": "the oven"}),
    ("Set the heating to twenty one degrees", "en", "home_control", {"action": "set", "target": "the heating", "value": 21.0}),
    ("What's the temperature in the living room?", "en", "home_state", {"target": "the living room", "what": "temperature"}),
    ("Open the garage door", "en", "home_control", {"action": "open", "target": "the garage door"}),
    ("불 꺼 줘", "ko", "home_control", {"action": "off", "target": "불"}),
    ("거실 불 켜 줘", "ko", "home_control", {"action": "on", "target": "거실 불"}),
    ("오븐 켜져 있어?", "ko", "home_state", {"target": "오븐"}),
    ("난방 이십일 도로 맞춰 줘", "ko", "home_control", {"action": "set", "target": "난방", "value": 21.0}),
    ("거실 몇 도야?", "ko", "home_state", {"target": "거실", "what": "temperature"}),
    ("현관문 잠가 줘", "ko", "home_control", {"action": "lock", "target": "현관문"}),
    ("Kitchen lights on.", "en", "home_control", {"action": "on", "target": "kitchen lights"}),
    ("Can you turn the lights on in the living room?", "en", "home_control", {"action": "on", "target": "the lights in the living room"}),
])
def test_home_commands_are_heard_without_the_model(text, language, tool, args):
    plan = home_command(text, language, lambda words, temperature=False: names_something(words, household(), temperature))
    assert plan is not None and plan.tool == tool and plan.args == args


@pytest.mark.parametrize("text, language", [
    ("Turn off the timer", "en"), ("turn up the heat on the sauce", "en"), ("run the tap for a minute", "en"),
    ("타이머 꺼 줘", "ko"), ("라면 타이머 꺼줘", "ko"), ("소리 꺼 줘", "ko"), ("불고기 레시피 알려줘", "ko"),
    ("서울 몇 도야?", "ko"), ("what's the temperature in Seoul", "en"), ("the oven is on", "en"),
    ("오븐 몇 도로 해야 돼?", "ko"),
])
def test_other_requests_are_no_home_commands(text, language):
    assert home_command(text, language, lambda words, temperature=False: names_something(words, household(), temperature)) is None


async def test_an_act_is_said_from_the_state_read_back():
    fake = FakeHomeAssistant(household())
    tools = tools_for(fake)
    out = await run(tools, "home_control", action="on", target="the kitchen lights")
    assert fake.entities_now["light.kitchen_lights"].state == "on"
    assert out.text == "The Kitchen Lights are on." and out.data["previous"]["light.kitchen_lights"]["state"] == "off"
    ko = tools_for(fake, "ko")
    out = await run(ko, "home_control", action="off", target="주방 불")
    assert out.text == "주방 불을 껐어요." and fake.entities_now["light.kitchen_lights"].state == "off"


async def test_setting_a_thermostat_that_is_off_turns_it_to_heat_first():
    fake = FakeHomeAssistant(household())
    out = await run(tools_for(fake), "home_control", action="set", target="the heating", value=21)
    assert [c[:2] for c in fake.calls] == [("climate", "set_hvac_mode"), ("climate", "set_temperature")]
    assert out.text == "The Living Room Thermostat is set to 21 degrees."


async def test_locks_and_garage_doors_are_asked_back_and_a_yes_makes_it():
    fake = FakeHomeAssistant(household())
    tools = tools_for(fake)
    out = await run(tools, "home_control", action="open", target="the garage door")
    assert fake.calls == [] and out.text == "Shall I open the Garage Door?"
    offer = out.data["offer"]
    assert offer["tool"] == "home_control" and offer["args"]["confirmed"] is True
    out = await run(tools, "home_control", **offer["args"])
    assert fake.entities_now["cover.garage_door"].state == "open"


async def test_state_and_temperature_questions_are_read_only():
    fake = FakeHomeAssistant(household())
    tools = tools_for(fake)
    assert (await run(tools, "home_state", target="the oven")).text == "The Oven is on."
    assert (await run(tools, "home_state", target="the living room", what="temperature")).text == "It's 19.5 degrees in the living room."
    ko = tools_for(fake, "ko")
    assert (await run(ko, "home_state", target="거실", what="temperature")).text == "거실은 지금 19.5도예요."
    assert (await run(ko, "home_state", target="오븐")).text == "오븐은 켜져 있어요."
    assert fake.calls == []


async def test_home_assistant_down_is_one_sentence_and_back_is_served(caplog):
    fake = FakeHomeAssistant(household())
    tools = tools_for(fake)
    fake.down = True
    with caplog.at_level(logging.WARNING):
        out = await run(tools, "home_control", action="on", target="the kitchen lights")
    assert out.text == "I can't reach Home Assistant right now." and out.data == {"error": "unreachable"}
    assert (await run(tools_for(fake, "ko"), "home_state", target="오븐")).text == "지금은 홈 어시스턴트에 연결할 수 없어요."
    fake.down = False
    out = await run(tools, "home_control", action="on", target="the kitchen lights")
    assert out.text == "The Kitchen Lights are on."


async def test_ambiguous_and_unknown_names_are_asked_about():
    fake = FakeHomeAssistant(household())
    tools = tools_for(fake, area=None)
    out = await run(tools, "home_control", action="on", target="the light")
    assert out.text == "Which one: Kitchen Lights or Living Room Light?" and fake.calls == []
    out = await run(tools, "home_control", action="on", target="the toaster")
    assert out.data["error"] == "not_found" and "toaster" in out.text


async def test_undo_puts_back_only_what_changed():
    fake = FakeHomeAssistant(household())
    tools = tools_for(fake)
    out = await run(tools, "home_control", action="on", target="all the lights")
    back = opposite(Act("home_control", {}, out.data))
    assert back == ("home_control", {"action": "off", "entity_ids": ["light.kitchen_lights", "light.living_room_light"]})
    await run(tools, back[0], **back[1])
    assert fake.entities_now["light.kitchen_lights"].state == "off"
    # Already on: turning it on changed nothing, so there is nothing to put back.
    out = await run(tools, "home_control", action="on", target="the oven")
    assert opposite(Act("home_control", {}, out.data)) is None
    out = await run(tools, "home_control", action="set", target="the heating", value=23)
    assert opposite(Act("home_control", {}, out.data)) == ("home_control", {"action": "off", "entity_ids": ["climate.thermostat"]})


def test_only_exposed_entities_are_listed_with_their_areas_and_aliases():
    states = [{"entity_id": "light.a", "state": "on", "attributes": {"friendly_name": "Lamp"}},
              {"entity_id": "switch.b", "state": "off", "attributes": {"friendly_name": "Boiler"}}]
    entries = {"light.a": {"aliases": ["램프"], "area_id": None, "device_id": "d1", "name": None}}
    devices = [{"id": "d1", "area_id": "kitchen"}]
    areas = [{"area_id": "kitchen", "name": "Kitchen", "aliases": ["부엌"]}]
    (lamp,) = entities_from(["light.a"], entries, devices, areas, states)
    assert (lamp.name, lamp.aliases, lamp.area, lamp.area_aliases) == ("Lamp", ("램프",), "Kitchen", ("부엌",))


def test_the_token_is_never_shown():
    client = HomeAssistantClient("http://192.168.1.10:8123/", "secret-token-value")
    assert "secret-token-value" not in repr(client) and client.url == "ws://192.168.1.10:8123/api/websocket"
    assert websocket_url("https://ha.local") == "wss://ha.local/api/websocket"
    with pytest.raises(ValueError):
        websocket_url("ftp://x")


async def test_the_page_lists_what_hearth_can_control():
    from firmware_py.web.kept import home_view

    home = HomeAssistantHome(FakeHomeAssistant(household()), own_area="Kitchen")
    assert home_view(home) == [] and home_view(None) == []  # nothing read yet; no Home Assistant
    await home.entities()
    view = home_view(home)
    assert [(d["name"], d["area"]) for d in view[:2]] == [("Hood Fan", "Kitchen"), ("Kitchen Lights", "Kitchen")]
    assert {d["entity_id"]: d["state"] for d in view}["switch.oven"] == "on" and len(view) == len(household())


@pytest.mark.parametrize("text, language", [("Turn it off.", "en"), ("switch them off", "en"), ("그거 꺼 줘", "ko"), ("다시 꺼 줘", "ko")])
def test_it_is_the_device_the_turn_before_switched_and_nothing_without_one(text, language):
    refers = lambda words, temperature=False: names_something(words, household(), temperature)  # noqa: E731
    plan = home_command(text, language, refers, last=["light.kitchen_lights"])
    assert plan is not None and plan.args == {"action": "off", "entity_ids": ["light.kitchen_lights"]}
    assert home_command(text, language, refers) is None
