"""What hearth keeps, read from the stores as the page shows it: timers, the list, notes, the record.

Everything here only reads. The page never holds a copy: each read goes to the same SQLite stores
the tools write, so what the page shows is what "what's on my list?" reads aloud.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any, Protocol

from agent.record import ConversationRecord, RecordEntry
from agent.results import TurnResult
from tools.lists import ListStore
from tools.timers import TimerStore, spoken_names

log = logging.getLogger(__name__)

RECORD_TURNS = 8
"""How many of the latest turns the page shows from the conversation record."""

KEEP_TIMELINES = 16
"""How many turns' timeline pictures stay addressable (the assistant keeps as many results)."""


class HasResults(Protocol):
    """The assistant, as far as the page needs it: its latest turns' results, newest last."""

    @property
    def results(self) -> Sequence[TurnResult]: ...


def timers_view(store: TimerStore, now: float, language: str = "en") -> list[dict[str, Any]]:
    """Running and paused timers, in the order they end; ``ends_at`` is wall-clock so the page counts
    down on its own. ``name`` is its label ("pasta"), or for an unnamed timer how hearth speaks of it
    ("second 5 minute timer")."""
    timers = store.active()
    names = spoken_names(timers, "ko" if language == "ko" else "en")
    return [
        {
            "id": t.id,
            "label": t.label,
            "name": t.label or names[t.id],
            "state": t.state,
            "duration_s": t.duration_s,
            "ends_at": t.ends_at if t.state == "running" else None,
            # Only a paused timer's time left is sent: a running one's changes by the second and
            # would make every push look new; the page counts it down from ends_at.
            "remaining_s": t.remaining_s(now) if t.state == "paused" else None,
        }
        for t in timers
    ]


def list_view(store: ListStore) -> list[dict[str, Any]]:
    return [{"id": e.id, "item": e.item, "quantity": e.quantity} for e in store.items()]


def home_view(home: Any) -> list[dict[str, Any]]:
    """What hearth can control in the household's Home Assistant, as last read (``home`` is a
    :class:`tools.home_assistant.home.HomeAssistantHome`, or None): names, rooms and states."""
    if home is None:
        return []
    return [{"entity_id": e.entity_id, "name": e.name, "area": e.area, "state": e.state, "aliases": list(e.aliases)}
            for e in sorted(home.known(), key=lambda e: (e.area or "~", e.name))]


def notes_view(store: ListStore) -> list[dict[str, Any]]:
    return [{"id": n.id, "text": n.text, "created_at": n.created_at} for n in store.notes()]


def record_view(record: ConversationRecord, turns: int = RECORD_TURNS) -> list[dict[str, Any]]:
    """The latest ``turns`` turns of the record, oldest first, each with its entries in order."""
    grouped: dict[int, list[RecordEntry]] = {}
    for entry in record.recent(turns):
        grouped.setdefault(entry.turn, []).append(entry)
    return [
        {
            "turn": turn,
            "entries": [
                {"role": e.role, "text": e.text, "status": e.status, "kind": e.kind, "at": e.at,
                 "origin": e.data.get("origin"), "why": _why(e)}
                for e in entries
            ],
        }
        for turn, entries in grouped.items()
    ]


def _why(entry: RecordEntry) -> str | None:
    """Why a tool call failed or was refused, as its caller was told; None for one that went well.
    Turns written before the reason was kept have only the error's kind ("invalid_arguments")."""
    if entry.role != "tool" or entry.status not in ("error", "refused"):
        return None
    reason = entry.data.get("reason") or entry.data.get("error")
    return str(reason) if reason else None


class TimelineIndex:
    """Gives each turn result a stable number for the page, so a picture's address does not shift
    when the assistant's bounded deque drops its oldest result."""

    def __init__(self) -> None:
        self._next = 1
        self._known: dict[int, tuple[int, TurnResult]] = {}
        """id(result) -> (number, result); the result is held so its id cannot be reused."""

    def update(self, results: Sequence[TurnResult]) -> list[dict[str, Any]]:
        """Number the results not seen yet; the addressable turns, oldest first."""
        for result in list(results):
            if id(result) not in self._known:
                self._known[id(result)] = (self._next, result)
                self._next += 1
        if len(self._known) > KEEP_TIMELINES:
            for key, _ in sorted(self._known.items(), key=lambda kv: kv[1][0])[: len(self._known) - KEEP_TIMELINES]:
                del self._known[key]
        # "n" addresses the picture; "turn" is the record's number, which the card is titled with
        # (the record also numbers page changes, so the two differ).
        return [
            {"n": n, "turn": r.record_turn or None, "transcript": r.transcript, "outcome": r.outcome.value}
            for n, r in sorted(self._known.values(), key=lambda nr: nr[0])
        ]

    def get(self, number: int) -> TurnResult | None:
        for n, result in self._known.values():
            if n == number:
                return result
        return None


def timeline_title(result: TurnResult) -> str:
    """The card's title: the turn as the record and ``hearth history`` number it."""
    return f"turn {result.record_turn}" if result.record_turn else "a turn not in the record"


def timeline_dict(result: TurnResult) -> dict[str, Any]:
    """The turn's marks with its words beside them, as the bench's chart reads them."""
    return {**result.timeline.to_dict(), "transcript": result.transcript, "reply": result.reply,
            "outcome": result.outcome.value}
