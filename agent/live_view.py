"""The live view of the turn under way: what hearth hears, thinks, fetches and says, as it happens.

It is kept apart from the conversation record (:mod:`agent.record`). The record is the authority:
append-only, final words and what was heard. The live view is for a display: the partial
transcript as it changes, the Heartbeat's decisions on it and its early look-ups, who answers,
and each unit as it is spoken, heard or cut. It is revised as the turn goes (a newer partial
replaces the old, a look-up that comes back changes its status) and starts afresh with each turn.
It holds no data of its own beyond the turn: it is fed the assistant's events and nothing else.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agent.events import (
    Delegated,
    EarlyCall,
    Event,
    SpeechStarted,
    StateChanged,
    Thought,
    ToolCalled,
    TranscriptFinal,
    TranscriptPartial,
    TurnInterrupted,
    UnitSpoken,
)

log = logging.getLogger(__name__)


@dataclass
class LiveTurn:
    """One turn as a display shows it."""

    state: str = "idle"
    heard: str = ""
    """The latest partial transcript, then the final one."""
    final: bool = False
    typed: bool = False
    """The words came as text (a text turn), not heard; its units went to the asker, not the speaker."""
    thoughts: list[dict[str, Any]] = field(default_factory=list)
    """The Heartbeat's decisions on the partials, oldest first: what it heard and what it would call."""
    fetching: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Early look-ups by tool, with their status ("running", "ok", "error", "cancelled")."""
    answered_by: str = "talker"
    """"talker", or "reasoner (<reason>)"."""
    calls: list[dict[str, Any]] = field(default_factory=list)
    """The tool calls made for the final words, with their status."""
    units: list[dict[str, Any]] = field(default_factory=list)
    """Each unit said, with its kind and "heard" ("sent" in a text turn) or "cut"."""


class LiveView:
    """Folds the assistant's events into :class:`LiveTurn`; tells ``subscribers`` after each change."""

    def __init__(self) -> None:
        self.turn = LiveTurn()
        self._subscribers: list[Callable[[dict[str, Any]], None]] = []

    def subscribe(self, on_change: Callable[[dict[str, Any]], None]) -> Callable[[], None]:
        """Call ``on_change(snapshot)`` after every change; returns the unsubscribe function."""
        self._subscribers.append(on_change)
        return lambda: self._subscribers.remove(on_change)

    def snapshot(self) -> dict[str, Any]:
        t = self.turn
        return {
            "state": t.state, "heard": t.heard, "final": t.final, "typed": t.typed, "thoughts": list(t.thoughts),
            "fetching": {k: dict(v) for k, v in t.fetching.items()}, "answered_by": t.answered_by,
            "calls": list(t.calls), "units": list(t.units),
        }

    def apply(self, event: Event) -> bool:
        """Fold ``event`` in; True when the view changed."""
        t = self.turn
        if isinstance(event, SpeechStarted) and (t.final or t.units):
            self.turn = t = LiveTurn(state="listening")  # a new utterance: the view starts afresh
        elif isinstance(event, TranscriptFinal) and (t.units or event.typed):
            # Words given, not heard (a text turn): nothing was said yet in a turn whose final
            # words arrive, so units on view are the last turn's; a text turn starts only once the
            # turn before has ended, so all on view is that turn's.
            self.turn = t = LiveTurn()
        if isinstance(event, StateChanged):
            t.state = event.state.value
        elif isinstance(event, TranscriptPartial):
            if t.final:
                return False  # a late partial never revises the final words
            t.heard = event.text
        elif isinstance(event, TranscriptFinal):
            t.heard, t.final, t.typed = event.text, True, event.typed
        elif isinstance(event, Thought):
            t.thoughts.append({"heard": event.heard, "tool": event.tool, "args": dict(event.args)})
        elif isinstance(event, EarlyCall):
            t.fetching[event.tool] = {"args": dict(event.args), "status": event.status}
        elif isinstance(event, Delegated):
            t.answered_by = f"reasoner ({event.reason})"
        elif isinstance(event, ToolCalled):
            t.calls.append({"tool": event.name, "args": dict(event.args), "status": event.status})
        elif isinstance(event, UnitSpoken):
            t.units.append({"text": event.text, "kind": event.kind, "status": "sent" if t.typed else "heard"})
        elif isinstance(event, TurnInterrupted):
            t.units += [{"text": text, "kind": "answer", "status": "cut"} for text in event.unspoken]
        else:
            return False
        snapshot = self.snapshot()
        for on_change in list(self._subscribers):
            try:
                on_change(snapshot)
            except Exception:  # noqa: BLE001 - a display that fails must not stop the turn
                log.exception("a live view subscriber failed")
        return True

    def __call__(self, event: Event) -> None:
        """Usable as the assistant's ``on_event`` (or one of them)."""
        self.apply(event)
