"""Taking the last act back ("undo that", "no, put it back", "아니 취소"), or changing it
("Actually, make that fifteen minutes", "아니, 십오 분으로 해 줘").

Every act hearth makes is remembered with what the tool reported (the timer it
started, the item it added), and the opposite call is worked out from that record,
never from the model: a timer started is cancelled, a timer cancelled is started
again with the time it had left, a pause is resumed, an added item is ticked off.
A new length for the timer just set or changed is worked out the same way: the
difference, added to that timer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from agent.deciding.intents import asks_for_act, is_question, opens_with_a_command, speaks_korean, utterance_words
from agent.deciding.lexicon import lexicon
from agent.deciding.corrections import without_reason
from agent.deciding.spoken_numbers import durations, numbers, prepare
from agent.deciding.utterance import found_once

_UNDO_EN = re.compile(
    r"^(?:no,? )?(?:undo(?: that| it| the last one)?|take (?:that|it) back|put it back|reverse that|revert that)(?: please)?$"
)
_UNDO_KO = re.compile(r"^(?:아니,? ?취소|방금 (?:거|것) 취소(?:해(?: ?줘| ?주세요)?)?|되돌려(?: ?줘)?|원래대로(?: 해 ?줘| 돌려 ?줘)?|없던 걸로 해 ?줘)$")


@found_once
def asks_to_undo(text: str, language: str) -> bool:
    """Whether the whole utterance asks to take the last act back."""
    words = utterance_words(text, keep=",").strip(" ,")
    korean = speaks_korean(words, language)
    # "Oops, no, undo that", "아 잘못 말했다, 방금 거 취소해": the regret said first is no other request
    regret = lexicon("ko" if korean else "en").alternation("undo_lead")
    words = re.sub(rf"^(?:{regret}(?:\s*,\s*|\s+))+", "", words).strip(" ,")
    undo = _UNDO_KO if korean else _UNDO_EN
    if not words:
        return False
    if undo.match(words) is not None:
        return True
    # "Undo that, we have a spare bottle", "방금 거 취소해, 아직 있더라": the reason said after asks nothing more
    parts = words.split(",")
    return any(undo.match(",".join(parts[:i]).strip()) is not None and not _asks_more(",".join(parts[i:]), language)
               for i in range(1, len(parts)))


def _asks_more(reason: str, language: str) -> bool:
    """Whether words said after an undo ask for something of their own (a request or a question)."""
    return any(asks(clause, language) for clause in reason.split(",") if clause.strip()
               for asks in (asks_for_act, is_question, opens_with_a_command))


@dataclass(frozen=True)
class Act:
    """An act that was made: the call and what the tool reported."""

    tool: str
    args: dict[str, Any]
    data: dict[str, Any]


def opposite(act: Act) -> tuple[str, dict[str, Any]] | None:
    """The call that takes ``act`` back, or None when it cannot be taken back."""
    args, data = act.args, act.data
    label = data.get("label", args.get("label"))
    if act.tool == "timer_start":
        # The timer just started is the newest, so "last" finds it even among timers of one length.
        return "timer_cancel", {"label": label or "last"}
    if act.tool == "timer_cancel":
        cancelled = data.get("cancelled") or []
        if len(cancelled) == 1 and cancelled[0].get("remaining_s"):
            timer = cancelled[0]
            return "timer_start", {"duration_s": int(timer["remaining_s"]), **({"label": timer["label"]} if timer.get("label") else {})}
        return None
    if act.tool == "timer_pause":
        return "timer_resume", {"label": label} if label else {}
    if act.tool == "timer_resume":
        return "timer_pause", {"label": label} if label else {}
    if act.tool == "timer_adjust" and isinstance(args.get("delta_s"), int):
        return "timer_adjust", {"delta_s": -args["delta_s"], **({"label": label} if label else {})}
    if act.tool == "note_add" and isinstance(data.get("id"), int):
        return "note_remove", {"id": data["id"]}
    if act.tool == "note_remove" and data.get("text"):
        return "note_add", {"text": data["text"]}
    if act.tool == "volume_set" and isinstance(data.get("previous"), int):
        return "volume_set", {"level": data["previous"]}
    if act.tool == "shopping_add" and args.get("item"):
        return "shopping_complete", {"item": args["item"]}
    if act.tool == "shopping_complete" and args.get("item"):
        return "shopping_add", {"item": args["item"]}
    if act.tool == "home_control":
        return _home_undo(data)
    return None


_HOME_OPPOSITE = {"on": "off", "off": "on", "open": "close", "close": "open", "lock": "unlock", "unlock": "lock"}
_HOME_WAS = {"on": "on", "off": "off", "heat": "on", "cool": "on", "auto": "on", "heat_cool": "on", "open": "open",
             "closed": "close", "locked": "lock", "unlocked": "unlock"}


def _home_undo(data: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """The home call that puts back what a home act changed: only the entities it changed, each
    as it was (a light already on when "turn on the lights" was said stays on)."""
    previous = data.get("previous")
    action = data.get("action")
    if not isinstance(previous, dict) or not previous:
        return None
    if action == "set":
        # A thermostat set back to its old target, or off if it was off.
        entity_id, was = next(iter(previous.items()))
        if len(previous) != 1 or not isinstance(was, dict):
            return None
        if was.get("state") == "off":
            return "home_control", {"action": "off", "entity_ids": [entity_id]}
        if isinstance(was.get("temperature"), (int, float)):
            return "home_control", {"action": "set", "entity_ids": [entity_id], "value": was["temperature"]}
        return None
    back = _HOME_OPPOSITE.get(str(action))
    if back is None:
        return None
    changed = [e for e, was in previous.items() if isinstance(was, dict) and _HOME_WAS.get(str(was.get("state"))) == back]
    return ("home_control", {"action": back, "entity_ids": changed}) if changed else None


def cannot_undo(language: str) -> str:
    return "그건 되돌릴 수 없어요." if language == "ko" else "I can't take that back."


def nothing_to_undo(language: str) -> str:
    return "되돌릴 게 없어요." if language == "ko" else "There's nothing to take back."


_AMEND_EN = re.compile(
    r"^(?:(?:oh|oops|sorry|wait|hmm|um|uh|ok|okay|no|nope|actually)\s+)*"
    r"(?:(?:make|change) (?:it|that|the timer|that timer)(?: to| for)?|set (?:it|that) (?:to|for)|(?:it|that) should be|i meant|i mean|actually)\s+"
    r"(?P<x>.+?)(?:\s+(?:instead|please|then|actually))*$"
    r"|^(?:no|nope)\s+(?P<y>.+?)(?:\s+(?:instead|please))*$"
)
_AMEND_KO = re.compile(
    r"^(?:(?:아니|아니다|아니요|아뇨|아 ?참|그게 아니라|정정할게|잠깐)\s+)+(?P<x>.+?)\s*(?:으로|로)?\s*"
    r"(?:해|바꿔|고쳐|변경해|맞춰)?\s*(?:줘|주세요|줄래|요)?$"
    r"|^(?P<y>.+?)\s*(?:으로|로)\s*(?:바꿔|고쳐|변경해)\s*(?:줘|주세요|줄래|요)?$"
)


def amended(act: Act | None, text: str, language: str) -> tuple[str, dict[str, Any]] | None:
    """The call that gives the timer just set or changed the length the words now say, or None.

    "Set a timer for ten minutes for the rice" then "Actually, make that fifteen minutes": the rice
    timer gets the five minutes it lacks (its time already run stays run), worked out from what
    the act did, not asked back as an adjustment of fifteen minutes. Only the whole utterance
    counts, with a word that changes what was said ("actually", "make it", "no", "아니", "바꿔")
    and one length and nothing else ("…fifteen minutes for the pasta" is another timer).
    """
    if act is None or act.tool not in ("timer_start", "timer_adjust"):
        return None
    text = _without_length_said_again(text)
    words = utterance_words(text)
    korean = speaks_korean(words, language)
    started = act.data.get("duration_s", act.args.get("duration_s")) if act.tool == "timer_start" else None
    length = _amended_length(words, korean)
    if length is None:
        said = without_reason(text, korean)
        before = started if act.tool == "timer_start" else act.args.get("delta_s")
        length = _length_taken_back(said, korean, started, _unit_of(before))
    if length is None:
        return None
    wanted = int(round(length))
    label = act.data.get("label", act.args.get("label")) or "last"
    if act.tool == "timer_start":
        before = started
    else:
        before = act.args.get("delta_s")
        wanted = wanted if isinstance(before, int) and before >= 0 else -wanted
    if not isinstance(before, int) or isinstance(before, bool) or wanted == before:
        return None
    return "timer_adjust", {"label": label, "delta_s": wanted - before}


def _amended_length(words: str, korean: bool) -> float | None:
    """The one length of words in the amending forms ("actually, make that fifteen minutes",
    "아니, 십오 분으로 해 줘"), or None."""
    match = (_AMEND_KO if korean else _AMEND_EN).match(words)
    if match is None:
        return None
    said = match["x"] if match["x"] is not None else match["y"]
    found = durations(said)
    if len(found) != 1 or _other_words(said, found[0].start, found[0].end, korean):
        return None
    return found[0].value


def _unit_of(length: object) -> int | None:
    """The unit a length was most likely said in, in seconds: what a bare number said for it again
    counts in ("ten minutes" then "no, I meant twenty")."""
    if not isinstance(length, int) or isinstance(length, bool) or not length:
        return None
    length = abs(length)
    return 3600 if length % 3600 == 0 else 60 if length % 60 == 0 else 1


def _length_taken_back(text: str, korean: bool, started: object, unit: int | None = None) -> float | None:
    """The new length, when the words take the last one back in other ways and say only the new
    one: a word of the class ``relength`` and nothing but fillers around the length ("Oh wait,
    let's say ten minutes instead.", "그냥 칠 분으로 바꿔 줘", "아 잘못 말했다, 십오 분이야"); the old
    length may be named first ("팔 분 말고 구 분으로 해", "not eight minutes, seven minutes"); a bare
    number counts in ``unit``, the unit of the length it takes back ("No, I meant twenty")."""
    text = _without_length_said_again(text)
    said, lengths = prepare(text), durations(text)
    if len(lengths) == 2 and lengths[0].value == started:
        first, lengths = lengths[0], lengths[1:]
        said = said[: first.start] + " " * (first.end - first.start) + said[first.end :]
    bare = numbers(text) if not lengths and unit is not None else []
    if len(bare) == 2 and isinstance(started, (int, float)) and unit:
        # "that should have been twenty-two, not eighteen": the old count named beside the new
        old = [b for b in bare if b.value * unit == started]
        if len(old) == 1:
            said = said[: old[0].start] + " " * (old[0].end - old[0].start) + said[old[0].end :]
            bare = [b for b in bare if b is not old[0]]
    if len(bare) == 1 and unit is not None:
        lengths = [replace(bare[0], value=bare[0].value * unit)]
    if len(lengths) != 1:
        return None
    lex = lexicon("ko" if korean else "en")
    rest = " ".join(re.sub(r"[^\w'가-힣\s]", " ", f" {said[: lengths[0].start]} {said[lengths[0].end :]} ").split())
    took_back = False
    for name in ("relength", "relength_filler"):
        for phrase in sorted(lex.phrases(name), key=len, reverse=True):
            pattern = re.escape(phrase) if korean else rf"(?<![\w']){re.escape(phrase)}(?![\w'])"
            if re.search(pattern, rest):
                took_back |= name == "relength"
                rest = re.sub(pattern, " ", rest)
    if not took_back or rest.split():
        return None  # "and another ten minutes for the rice": something more than a new length
    return lengths[0].value


def _without_length_said_again(text: str) -> str:
    """``text`` without a last part that only says again the length before it ("육 분이야, 육 분",
    "twelve minutes, twelve minutes"): said twice to be heard, it is one length."""
    head, comma, last = text.rstrip(" .!?").rpartition(",")
    if not comma:
        return text
    again = durations(last)
    before = durations(head)
    if len(again) != 1 or not before or before[-1].value != again[0].value:
        return text
    if prepare(last).replace(prepare(last)[again[0].start : again[0].end], " ").strip(" .!?요"):
        return text  # more than the length: "육 분, 육 분 더"
    return head


def _other_words(said: str, start: int, end: int, korean: bool) -> bool:
    """Whether ``said`` holds words besides the length at ``start:end`` (filler aside)."""
    rest = (said[:start] + " " + said[end:]).split()
    filler = lexicon("ko" if korean else "en").phrases("amend_filler")
    return any(word not in filler for word in rest)
