"""``hearth history``: the conversation record, turn by turn, as a person reads it.

Every line is printed through :func:`~firmware_py.safe_text.printable`: records written before
text from outside was cleaned may hold escape sequences that would clear or retitle the terminal.
"""

from __future__ import annotations

import json
import sqlite3
import sys
import time
from collections.abc import Iterable
from pathlib import Path

from agent.record import ConversationRecord, RecordEntry
from firmware_py.safe_text import printable

_WHO = {"user": "you", "assistant": "hearth", "tool": "tool"}
_SHOWN = {"told": "sent as text"}
"""A unit's status as the history says it: a text turn's units went back to whoever asked in
words (Home Assistant's conversation agent), and nothing was played."""


def format_turns(entries: Iterable[RecordEntry], last: int) -> str:
    """The last ``last`` turns: a header with the number, when and how the turn ended, then each
    entry in the order it was written."""
    turns: dict[int, list[RecordEntry]] = {}
    for entry in entries:
        turns.setdefault(entry.turn, []).append(entry)
    lines: list[str] = []
    for number in sorted(turns)[-last:] if last > 0 else []:
        rows = turns[number]
        ended = next((e.status for e in rows if e.role == "turn"), "not finished")
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(rows[0].at))
        lines.append(f"#{number}  {when}  {ended}")
        for i, e in enumerate(rows):
            if e.role == "turn" or (e.role == "tool" and e.status == "started" and _settled_later(e, rows[i + 1 :])):
                continue  # a call that settled is shown once, as it settled
            if e.role == "tool":
                args = json.dumps(e.data.get("args", {}), ensure_ascii=False)
                # Entries recorded before calls carried an origin have none to show.
                origin = f" ({e.data['origin']})" if e.data.get("origin") else ""
                lines.append(f"  tool:   {e.text} {args} -> {e.status}{origin}")
            elif e.role == "user":
                lines.append(f"  you:    {e.text}" + ("  (sent as text)" if e.status == "typed" else ""))
            else:
                kind = f", {e.kind}" if e.kind and e.kind != "answer" else ""
                lines.append(f"  hearth: {e.text}  ({_SHOWN.get(e.status, e.status)}{kind})")
    return "\n".join(printable(line) for line in lines)


def _settled_later(started: RecordEntry, later: list[RecordEntry]) -> bool:
    args = started.data.get("args")
    return any(e.role == "tool" and e.status != "started" and e.text == started.text and e.data.get("args") == args for e in later)


def print_history(path: Path, last: int) -> int:
    """Print the last ``last`` turns of the record at ``path``; 0, or 2 (one line on stderr) when
    the file there is no conversation record."""
    if not path.exists():
        print(f"no conversation is recorded yet at {path}")
        return 0
    try:
        record = ConversationRecord.open(path)
        try:
            text = format_turns(record.entries(), last)
        finally:
            record.close()
    except (OSError, sqlite3.Error) as exc:
        print(printable(f"hearth: {path}: not a conversation record ({exc})"), file=sys.stderr)
        return 2
    print(text or f"no turns in {path} yet")
    return 0
