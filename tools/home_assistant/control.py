"""The home tools: switch, set and read what Home Assistant exposes ("turn on the kitchen lights",
"거실 불 꺼 줘", "set the heating to 21", "is the hood fan on?").

Each answer is said from Home Assistant's state read after the call, not from what was asked, so
"The kitchen lights are on" is heard only when they are.  Locks, covers (garage doors, blinds)
and alarm panels are asked back first, as Home Assistant treats them: the answer is an offer
("Shall I open the garage door?") that a "yes" makes.  An act's result keeps what it changed
from, so "undo that" puts it back.
"""

from __future__ import annotations

import logging
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from tools.home_assistant.client import HomeAssistantRefused, HomeAssistantUnavailable, HomeEntity
from tools.home_assistant.home import HomeAssistantHome
from tools.home_assistant.names import Match, area_labels, match, normalize, reads_temperature, says
from tools.spec import ToolOutput, ToolSpec, optional_text_argument
from tools.spoken import Language, check_language, has_final_consonant, join_words, topic

log = logging.getLogger(__name__)

Action = Literal["on", "off", "toggle", "set", "open", "close", "lock", "unlock"]
Target = Annotated[str | None, optional_text_argument(120)]

ASKED_FIRST_DOMAINS = ("lock", "cover", "alarm_control_panel")
"""Acted on only after a yes, whatever was heard."""
SWITCHABLE = ("light", "switch", "fan", "input_boolean", "climate", "media_player", "humidifier", "water_heater")


class HomeControlArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    action: Action = Field(description="What to do.")
    target: Target = Field(default=None, description="The words naming the device and room, as said.")
    entity_ids: list[str] | None = Field(default=None, max_length=32, description="Exact entities (an undo, a yes).")
    value: float | None = Field(default=None, ge=0, le=100, description="Degrees for a thermostat, percent for a light or fan.")
    step: float | None = Field(default=None, ge=-10, le=10,
                               description="Degrees up (+) or down (-) from a thermostat's set temperature, with action set and no value.")
    confirmed: bool = Field(default=False, description="Asked back and agreed to.")


class HomeStateArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    target: Target = Field(default=None, description="The words naming the device or room, as said.")
    entity_ids: list[str] | None = Field(default=None, max_length=32, description="Exact entities (\"is it on?\" about the last one).")
    what: Literal["state", "temperature"] = "state"


_UNREACHABLE = {"en": "I can't reach Home Assistant right now.", "ko": "지금은 홈 어시스턴트에 연결할 수 없어요."}
_REFUSED = {"en": "Home Assistant couldn't do that.", "ko": "홈 어시스턴트가 그 요청을 처리하지 못했어요."}


def _number(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


def _object(word: str) -> str:
    return f"{word}{'을' if has_final_consonant(word) else '를'}"


_KO_KIND = {"light": "불", "fan": "팬", "climate": "난방", "cover": "블라인드", "lock": "도어락"}


def spoken_name(entity: HomeEntity, language: Language, said: str = "") -> str:
    """How the entity is said: the alias the user said, if one; in Korean a Korean alias, else
    its room and kind ("주방 불"), else its name; in English its name."""
    words = normalize(said)
    named = [a for a in sorted(entity.aliases, key=lambda a: (-len(a), a)) if words and says(normalize(a), words)]
    if named and (language == "ko") == any("가" <= c <= "힣" for c in named[0]):
        return named[0]
    if language == "en":
        return entity.name
    korean = sorted(a for a in entity.aliases if any("가" <= c <= "힣" for c in a))
    if korean:
        return korean[0]
    if any("가" <= c <= "힣" for c in entity.name):
        return entity.name
    rooms = [a for a in area_labels(entity.area, entity.area_aliases) if any("가" <= c <= "힣" for c in a)]
    kind = _KO_KIND.get(entity.domain)
    if rooms and kind:
        return f"{rooms[0]} {kind}"
    return entity.name


def _the(name: str) -> str:
    return name if name.lower().startswith("the ") else f"the {name}"


def _The(name: str) -> str:
    text = _the(name)
    return text[:1].upper() + text[1:]


def _is(name: str) -> str:
    last = name.split()[-1].lower() if name.split() else ""
    return "are" if last.endswith("s") and not last.endswith("ss") else "is"


_EN_STATE = {"on": "on", "off": "off", "open": "open", "closed": "closed", "opening": "opening", "closing": "closing",
             "locked": "locked", "unlocked": "unlocked", "heat": "heating", "cool": "cooling", "auto": "on auto"}
_KO_STATE = {"on": "켜져 있어요", "off": "꺼져 있어요", "open": "열려 있어요", "closed": "닫혀 있어요",
             "opening": "열리는 중이에요", "closing": "닫히는 중이에요", "locked": "잠겨 있어요", "unlocked": "잠겨 있지 않아요",
             "heat": "난방 중이에요", "cool": "냉방 중이에요", "auto": "자동으로 켜져 있어요"}


def say_state(entity: HomeEntity, language: Language, said: str = "") -> str:
    """One sentence on the entity's state now."""
    name = spoken_name(entity, language, said)
    state = entity.state
    if state in ("unavailable", "unknown"):
        return f"{topic(name)} 지금 응답이 없어요." if language == "ko" else f"{_The(name)} isn't responding."
    unit = str(entity.attributes.get("unit_of_measurement") or "")
    if entity.domain in ("sensor", "input_number") or (state not in _EN_STATE and _is_number(state)):
        if language == "ko":
            return f"{topic(name)} {state}{_ko_unit(unit)}예요."
        return f"{_The(name)} reads {state}{' ' + _en_unit(unit) if unit else ''}."
    if entity.domain == "climate":
        target = entity.attributes.get("temperature")
        current = entity.attributes.get("current_temperature")
        if language == "ko":
            parts = [f"{topic(name)} {_KO_STATE.get(state, state)}"]
            if isinstance(target, (int, float)) and state != "off":
                parts.append(f"설정 온도는 {_number(target)}도예요")
            return ". ".join(parts) + "."
        text = f"{_The(name)} is {_EN_STATE.get(state, state)}"
        if isinstance(target, (int, float)) and state != "off":
            text += f", set to {_number(target)} degrees"
        if isinstance(current, (int, float)):
            text += f"; it's {_number(current)} degrees now"
        return text + "."
    if language == "ko":
        return f"{topic(name)} {_KO_STATE.get(state, state + '이에요')}."
    return f"{_The(name)} {_is(name)} {_EN_STATE.get(state, state)}."


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _en_unit(unit: str) -> str:
    return {"°C": "degrees", "°F": "degrees Fahrenheit", "%": "percent"}.get(unit, unit)


def _ko_unit(unit: str) -> str:
    return {"°C": "도", "°F": "도", "%": "퍼센트"}.get(unit, f" {unit}" if unit else "")


Call = tuple[str, str, dict[str, Any]]


def _stepped(entity: HomeEntity, value: float | None, step: float | None) -> float | None:
    """The value to set: ``value``, or a thermostat's set temperature moved by ``step`` ("nudge
    the thermostat up two degrees": 20 → 22); None when neither can be had."""
    if value is not None or step is None or entity.domain != "climate":
        return value
    now = entity.attributes.get("temperature")
    return float(now) + step if isinstance(now, (int, float)) and not isinstance(now, bool) else None


def _service(entity: HomeEntity, action: Action, value: float | None, step: float | None = None) -> tuple[Call, ...] | None:
    """The service calls that do ``action`` to ``entity``, in order, or None when it cannot."""
    value = _stepped(entity, value, step)
    domain = entity.domain
    if action == "toggle":
        action = "off" if entity.state in ("on", "open", "heat", "cool", "auto", "unlocked") else "on"
    if domain == "cover":
        call = {"on": ("cover", "open_cover", {}), "open": ("cover", "open_cover", {}),
                "off": ("cover", "close_cover", {}), "close": ("cover", "close_cover", {})}.get(action)
        return (call,) if call else None
    if domain == "lock":
        call = {"lock": ("lock", "lock", {}), "close": ("lock", "lock", {}),
                "unlock": ("lock", "unlock", {}), "open": ("lock", "unlock", {})}.get(action)
        return (call,) if call else None
    if action == "set":
        if value is None:
            return None
        if domain == "climate":
            # Set while off, a thermostat keeps its new target and stays off; "set the heating
            # to 21" means warm the room to 21.
            # (Not every thermostat heeds set_temperature's own hvac_mode: the mode is set first.)
            if entity.state == "off" and "heat" in (entity.attributes.get("hvac_modes") or ()):
                return ("climate", "set_hvac_mode", {"hvac_mode": "heat"}), ("climate", "set_temperature", {"temperature": value})
            return ("climate", "set_temperature", {"temperature": value}),
        if domain == "light":
            return ("light", "turn_on", {"brightness_pct": round(value)}),
        if domain == "fan":
            return ("fan", "set_percentage", {"percentage": round(value)}),
        return None
    if action in ("on", "off") and domain in SWITCHABLE:
        return (domain, "turn_on" if action == "on" else "turn_off", {}),
    return None


_ACTED = {  # the state an act leaves, and how it is said when it did
    "on": ("on", "켰어요"), "off": ("off", "껐어요"), "open": ("open", "열었어요"), "close": ("closed", "닫았어요"),
    "lock": ("locked", "잠갔어요"), "unlock": ("unlocked", "잠금을 풀었어요"),
}


def _done(entity: HomeEntity, action: Action, language: Language, said: str = "") -> str:
    """What an act left, from the state read back: "주방 불을 켰어요" when it is as asked, else the
    state as it is ("The oven isn't responding")."""
    name = spoken_name(entity, language, said)
    if action == "set" and entity.domain == "climate" and entity.state != "off":
        target = entity.attributes.get("temperature")
        if isinstance(target, (int, float)):
            if language == "ko":
                return f"{_object(name)} {_number(target)}도로 맞췄어요."
            return f"{_The(name)} {_is(name)} set to {_number(target)} degrees."
    wanted = _ACTED.get(action)
    state = {"heat": "on", "cool": "on", "auto": "on", "heat_cool": "on"}.get(entity.state, entity.state)
    if wanted is not None and state == wanted[0] and language == "ko":
        if action == "unlock":
            return f"{name} {wanted[1]}."
        return f"{_object(name)} {wanted[1]}."
    return say_state(entity, language, said)


def _asking(entities: list[HomeEntity], action: Action, language: Language) -> str:
    names = join_words([spoken_name(e, language) for e in entities], language)
    if language == "ko":
        verb = {"unlock": "잠금을 풀까요", "open": "열까요", "on": "열까요", "close": "닫을까요", "off": "닫을까요",
                "lock": "잠글까요"}.get(action, "바꿀까요")
        return f"{names} {verb}?" if action == "unlock" else f"{_object(names)} {verb}?"
    verb = {"on": "open", "off": "close"}.get(action, action)
    return f"Shall I {verb} {_the(names)}?"


def _which(candidates: tuple[HomeEntity, ...], language: Language) -> str:
    names = [spoken_name(e, language) for e in candidates[:4]]
    if language == "ko":
        return f"{', '.join(names)} 중에 어느 거 말씀이세요?"
    return f"Which one: {join_words(names, 'en').replace(' and ', ' or ')}?"


def _not_found(target: str | None, language: Language) -> str:
    if language == "ko":
        return f"홈 어시스턴트에서 {topic(target)} 못 찾았어요." if target else "어느 기기 말씀이세요?"
    return f"I can't find {target!r} in Home Assistant." if target else "Which device do you mean?"


def home_assistant_tools(home: HomeAssistantHome, language: str = "en") -> list[ToolSpec]:
    """``home_control`` and ``home_state``, bound to ``home``, answering in ``language``.  Both are
    called by hearth's own home command words (never guessed by the model)."""
    lang = check_language(language)

    async def resolve(target: str | None, entity_ids: list[str] | None, everything: bool = False) -> Match:
        entities = await home.entities(fresh=True)
        if entity_ids:
            chosen = tuple(e for e in entities if e.entity_id in set(entity_ids))
            return Match(chosen)  # only exposed ones: an id Home Assistant no longer exposes is not touched
        return match(target or "", entities, home.own_area, everything=everything)

    async def control(args: HomeControlArgs) -> ToolOutput:
        try:
            found = await resolve(args.target, args.entity_ids, everything=args.action == "off")
            if found.candidates:
                able = tuple(e for e in found.candidates if _service(e, args.action, args.value, args.step) is not None)
                if len(able) == 1:
                    found = Match((able[0],))
                else:
                    return ToolOutput(_which(able or found.candidates, lang), {"error": "ambiguous",
                                      "candidates": [e.entity_id for e in found.candidates]})
            if not found.found:
                return ToolOutput(_not_found(args.target, lang), {"error": "not_found", "target": args.target})
            plans = [(e, _service(e, args.action, args.value, args.step)) for e in found.entities]
            doable = [(e, s) for e, s in plans if s is not None]
            if not doable:
                text = "그건 할 수 없는 기기예요." if lang == "ko" else f"{_The(found.entities[0].name)} can't do that."
                return ToolOutput(text, {"error": "unsupported", "entities": [e.entity_id for e in found.entities]})
            risky = [e for e, _ in doable if e.domain in ASKED_FIRST_DOMAINS]
            if risky and not args.confirmed:
                ids = [e.entity_id for e, _ in doable]
                offer = {"tool": "home_control", "args": {"action": args.action, "entity_ids": ids, "value": args.value, "step": args.step,
                                                          "confirmed": True}}
                return ToolOutput(_asking([e for e, _ in doable], args.action, lang), {"asked": ids, "offer": offer})
            previous = {e.entity_id: {"state": e.state, "temperature": e.attributes.get("temperature"),
                                      "brightness": e.attributes.get("brightness")} for e, _ in doable}
            for entity, calls in doable:
                for domain, service, data in calls:
                    await home.api.call_service(domain, service, [entity.entity_id], data)
            after = {e.entity_id: e for e in await home.entities(fresh=True)}
        except HomeAssistantUnavailable as exc:
            home.unreachable(exc)  # logged once an outage, there
            return ToolOutput(_UNREACHABLE[lang], {"error": "unreachable"})
        except HomeAssistantRefused as exc:
            log.warning("home_control refused: %s", exc)
            return ToolOutput(_REFUSED[lang], {"error": "refused"})
        changed = [after.get(e.entity_id, e) for e, _ in doable]
        text = " ".join(_done(e, args.action, lang, args.target or "") for e in changed[:3])
        if len(changed) > 3:
            text += f" 그 밖에 {len(changed) - 3}개도요." if lang == "ko" else f" And {len(changed) - 3} more."
        data = {"action": args.action, "entity_ids": [e.entity_id for e in changed], "value": args.value,
                "previous": previous, "states": {e.entity_id: e.state for e in changed}}
        return ToolOutput(text, data)

    async def state(args: HomeStateArgs) -> ToolOutput:
        try:
            entities = await home.entities(fresh=True)
        except HomeAssistantUnavailable as exc:
            home.unreachable(exc)  # logged once an outage, there
            return ToolOutput(_UNREACHABLE[lang], {"error": "unreachable"})
        if args.what == "temperature":
            return _temperature(args.target, entities)
        found = await resolve(args.target, args.entity_ids)
        if found.candidates and not found.entities:
            return ToolOutput(_which(found.candidates, lang), {"error": "ambiguous", "candidates": [e.entity_id for e in found.candidates]})
        if not found.found:
            return ToolOutput(_not_found(args.target, lang), {"error": "not_found", "target": args.target})
        text = " ".join(say_state(e, lang, args.target or "") for e in found.entities[:3])
        return ToolOutput(text, {"states": {e.entity_id: e.state for e in found.entities}})

    def _temperature(target: str | None, entities: list[HomeEntity]) -> ToolOutput:
        # A room's temperature: its temperature sensor, else its thermostat's reading.
        readers = [e for e in entities if reads_temperature(e)]
        said = normalize(target or "")
        rooms = [e for e in readers if any(says(a, said) for a in area_labels(e.area, e.area_aliases))]
        found = match(target or "", readers, home.own_area)
        chosen = list(found.entities) or rooms or (list(found.candidates[:1]))
        if not chosen and len(readers) == 1:
            chosen = readers
        if not chosen:
            return ToolOutput(_not_found(target, lang), {"error": "not_found", "target": target})
        sensors = [e for e in chosen if e.domain == "sensor"] or chosen
        entity = sensors[0]
        value = entity.state if entity.domain == "sensor" else entity.attributes.get("current_temperature")
        if not _is_number(str(value)):
            return ToolOutput(say_state(entity, lang), {"states": {entity.entity_id: entity.state}})
        degrees = _number(float(value))
        room = entity.area
        if lang == "ko":
            place = next((a for a in area_labels(room, entity.area_aliases) if any("가" <= c <= "힣" for c in a)), None)
            text = f"{topic(place)} 지금 {degrees}도예요." if place else f"지금 {degrees}도예요."
        else:
            text = f"It's {degrees} degrees in the {room.lower()}." if room else f"It's {degrees} degrees."
        return ToolOutput(text, {"temperature": float(value), "entity_id": entity.entity_id})

    return [
        ToolSpec("home_control", "Switch, set, open or lock a device in the home through Home Assistant.",
                 HomeControlArgs, control, "act", expected_s=0.3, timeout_s=12.0, model_calls=False),
        ToolSpec("home_state", "Say whether a device in the home is on, or a room's temperature.",
                 HomeStateArgs, state, "read", expected_s=0.2, timeout_s=12.0, speculable=True, stale_after_s=2.0,
                 model_calls=False),
    ]
