"""Changes made on the page, made by the tools themselves through the executor.

A tick on the page is the same ``shopping_complete`` call a spoken "got the milk" makes, with the
origin ``"page"`` (a person acting on the page): the tool's own checks apply, and its spoken answer
is what the page shows. Each change is written to the conversation record as its own short turn
(the call before it runs, then how it settled), so the record still accounts for every change in
the stores.  A change that could never be made (arguments the tool refuses, such as a quantity sent
as an object) is answered 422 and is no turn: nothing was tried, and the append-only record would
otherwise keep the refused value for ever.  A change that was tried and failed is kept with the
tool's words for why.
"""

from __future__ import annotations

import logging
import sqlite3
from dataclasses import dataclass
from typing import Any

from agent.record import ConversationRecord, RecordEntry
from tools.executor import ToolExecutor, ToolResult
from tools.timers import TimerStore

log = logging.getLogger(__name__)

PAGE_TURN = "page"
"""How a turn made on the page ends in the record."""

_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth")
"""The timer tool's own words for "the n-th timer started", which address an unnamed timer."""


@dataclass(frozen=True)
class WriteOutcome:
    """What a change from the page came to."""

    ok: bool
    """The tool made the change."""
    text: str
    """The tool's spoken answer (or its error), shown on the page as the confirmation."""
    status: int = 200
    """The HTTP status to answer with."""


class WriteError(ValueError):
    """A request the page should not have sent (a timer that is gone): answered with a 4xx."""

    def __init__(self, message: str, status: int = 404) -> None:
        super().__init__(message)
        self.status = status


def timer_label(store: TimerStore, timer_id: int) -> str | None:
    """The label the timer tool resolves to timer ``timer_id``: its name, or its place in order."""
    timers = sorted(store.active(), key=lambda t: t.id)
    ids = [t.id for t in timers]
    if timer_id not in ids:
        raise WriteError(f"timer {timer_id} is not running any more")
    timer = timers[ids.index(timer_id)]
    if len(timers) == 1:
        return None
    if timer.label and timer.label not in _ORDINALS and timer.label not in ("last", "latest", "newest"):
        return timer.label
    index = ids.index(timer_id)
    if index == len(ids) - 1:
        return "last"
    if index < len(_ORDINALS):
        return _ORDINALS[index]
    raise WriteError("that timer can only be cancelled by voice (too many unnamed timers)", 409)


async def call_from_page(
    executor: ToolExecutor, record: ConversationRecord | None, tool: str, args: dict[str, Any]
) -> tuple[WriteOutcome, ToolResult]:
    """Run one acting call with the origin ``"page"``, on record as its own turn (none when the call
    is refused before it could run)."""
    refused = executor.refusal(tool, args, origin="page")
    if refused is not None:
        log.info("page: %s refused before it ran: %s", tool, refused.message)
        code = 422 if refused.kind == "invalid_arguments" else 403
        result = ToolResult(tool, False, None, refused, 0.0)
        return WriteOutcome(False, refused.message, code), result
    number = _begin(record)
    _append(record, number, [RecordEntry(number, "tool", tool, "started", tool, data={"args": args, "origin": PAGE_TURN})])
    result = await executor.call(tool, args, origin="page")
    if result.output is not None:
        failed = "error" in result.output.data
        outcome = WriteOutcome(not failed, result.output.text, 409 if failed else 200)
        status, data = ("error" if failed else "ok"), dict(result.output.data)
    else:
        assert result.error is not None
        kind = result.error.kind
        code = 422 if kind == "invalid_arguments" else 403 if kind.startswith("refused") else 503
        outcome = WriteOutcome(False, result.error.message, code)
        status, data = ("refused" if kind.startswith("refused") else "error"), {"error": kind}
    if not outcome.ok:
        data["reason"] = outcome.text  # what the page was told, so the record says why too
    _append(record, number, [
        RecordEntry(number, "tool", tool, status, tool, data={"args": args, **data, "origin": PAGE_TURN}),
        RecordEntry(number, "turn", "", PAGE_TURN),
    ])
    log.info("page: %s %s -> %s", tool, args, outcome.text)
    return outcome, result


def _begin(record: ConversationRecord | None) -> int:
    if record is None:
        return 0
    try:
        return record.begin_turn()
    except sqlite3.Error as exc:
        log.error("could not start a page turn in the conversation record: %s", exc)
        return 0


def _append(record: ConversationRecord | None, number: int, entries: list[RecordEntry]) -> None:
    if record is None or number == 0:
        return
    try:
        record.append(entries)
    except sqlite3.Error as exc:
        log.error("could not write a page change to the conversation record: %s", exc)
