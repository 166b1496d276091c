"""Taking the last act back: "undo that", "no, put it back", "아니 취소".

Every act hearth makes is remembered with what the tool reported (the timer it
started, the item it added), and the opposite call is worked out from that record,
never from the model: a timer started is cancelled, a timer cancelled is started
again with the time it had left, a pause is resumed, an added item is ticked off.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from agent.deciding.intents import speaks_korean, utterance_words

_UNDO_EN = re.compile(
    r"^(?:no,? )?(?:undo(?: that| it| the last one)?|take (?:that|it) back|put it back|reverse that|revert that)(?: please)?$"
)
_UNDO_KO = re.compile(r"^(?:아니,? ?취소|방금 (?:거|것) 취소(?:해 ?줘)?|되돌려(?: ?줘)?|원래대로(?: 해 ?줘| 돌려 ?줘)?|없던 걸로 해 ?줘)$")


def asks_to_undo(text: str, language: str) -> bool:
    """Whether the whole utterance asks to take the last act back."""
    words = utterance_words(text, keep=",").strip(" ,")
    korean = speaks_korean(words, language)
    return bool(words) and (_UNDO_KO if korean else _UNDO_EN).match(words) is not None


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
    return None


def cannot_undo(language: str) -> str:
    return "그건 되돌릴 수 없어요." if language == "ko" else "I can't take that back."


def nothing_to_undo(language: str) -> str:
    return "되돌릴 게 없어요." if language == "ko" else "There's nothing to take back."
