"""The conversation record: every turn's words, spoken units and tool calls, kept in SQLite.

What the assistant heard, said (or meant to say but was cut off before) and did is the
evidence for every later question: what the model is given as history, what the bench
scores, what a person reads when the assistant did something odd.  Evidence that can be
edited afterwards is worth little, so the record is append-only: rows are only inserted,
and triggers in the database itself refuse UPDATE, DELETE and a REPLACE of a row, whoever issues them.

It is written as things happen: a turn's number when it starts, the user's words when final,
an acting tool call just before it runs (``"started"``) and again when it has settled, each unit
when it has been heard, and at the end the units that were cut or never heard and how the turn
ended.  A crash loses at most what was under way, and never leaves a change in the tools' stores
that no turn in the record made: the call is on record before the store can change.
Each :meth:`ConversationRecord.append` writes its batch in one transaction.

The record is also where the conversation's history comes from (:meth:`history`), so a restart
keeps the conversation, and a turn started by speaking over a reply sees the exchange it cut.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

log = logging.getLogger(__name__)

ROLES = ("user", "assistant", "tool", "turn")
"""The roles an entry may have; anything else is refused before it reaches the database.  A
``"turn"`` entry closes a turn: its status is how the turn ended (``"answered"``, ``"interrupted"``…)."""

IN_HISTORY = ("answered", "interrupted")
"""How a turn must have ended for its exchange to be history (one still under way counts too)."""

APPEND_ONLY = "the conversation record is append-only"
"""The message the triggers abort with, so a refused change says why."""


def _append_only(table: str, key: str) -> str:
    """Triggers that refuse an update, a delete, and an insert over a row already there (what
    REPLACE does) on ``table``, whose rows ``key`` names."""
    refuse = f"BEGIN\n    SELECT RAISE(ABORT, '{APPEND_ONLY}');\nEND;"
    return f"""
CREATE TRIGGER IF NOT EXISTS {table}_no_update BEFORE UPDATE ON {table}
{refuse}
CREATE TRIGGER IF NOT EXISTS {table}_no_delete BEFORE DELETE ON {table}
{refuse}
CREATE TRIGGER IF NOT EXISTS {table}_no_replace BEFORE INSERT ON {table}
WHEN NEW.{key} IS NOT NULL AND EXISTS (SELECT 1 FROM {table} WHERE {key} = NEW.{key})
{refuse}
"""


_SCHEMA = (
    """
CREATE TABLE IF NOT EXISTS entries (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    turn INTEGER NOT NULL,
    role TEXT NOT NULL,
    text TEXT NOT NULL,
    status TEXT NOT NULL,
    kind TEXT NOT NULL,
    at REAL NOT NULL,
    data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS entries_turn ON entries(turn);
CREATE TABLE IF NOT EXISTS turns (
    turn INTEGER PRIMARY KEY,
    started_at REAL NOT NULL
);
"""
    + _append_only("entries", "id")
    + _append_only("turns", "turn")
)

_COLUMNS = "turn, role, text, status, kind, at, data"


@dataclass(frozen=True)
class RecordEntry:
    """One thing that happened in a turn: a user utterance, an assistant unit or a tool call."""

    turn: int
    """Turn number, 1-based, increasing through the conversation."""
    role: str
    """Who: ``"user"``, ``"assistant"`` or ``"tool"``."""
    text: str
    """What was said, or a one-line summary of the tool call."""
    status: str
    """User: ``"heard"``, ``"typed"`` (words given as text, Home Assistant's handle), or ``"stop"`` for a
    stop word said over the reply (not history); assistant unit: ``"spoken"``, ``"told"``
    (a text turn's unit, sent as text to whoever asked; nothing played), ``"cut"`` or ``"unspoken"``; tool: ``"started"``
    (an acting call about to run; its settled entry follows unless hearth died first), ``"ok"``,
    ``"error"`` or ``"refused"`` (asked back, never made); turn: how it ended."""
    kind: str = ""
    """Assistant unit kind (``"answer"``, ``"pretool"``, ``"phrase"``), or the tool's name."""
    at: float = 0.0
    """Wall-clock time (:func:`time.time`) it was appended; 0.0 means "stamp it when appended"."""
    data: dict[str, object] = field(default_factory=dict)
    """Anything else worth keeping (tool arguments, outcome), stored as JSON text."""


class ConversationRecord:
    """Append-only: rows are never updated or deleted (SQLite triggers refuse it)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        # Takes a ready connection so tests and callers decide where it lives; open() builds one.
        self._conn = conn

    @classmethod
    def open(cls, path: Path | str) -> ConversationRecord:
        """Open (creating if needed) the record at ``path``; ``":memory:"`` gives a throwaway one."""
        in_memory = str(path) == ":memory:"
        if not in_memory:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        # Autocommit, so the only transactions are the explicit BEGIN/COMMIT in append().
        conn = sqlite3.connect(str(path), isolation_level=None)
        try:
            if not in_memory:
                # WAL lets a reader (the bench, a person with the sqlite3 shell) look while a turn is written.
                conn.execute("PRAGMA journal_mode=WAL")
                # FULL: in WAL mode each commit syncs the log, so an entry appended is on disk, power
                # cut or not. NORMAL would sync only at checkpoints: a turn hearth answered aloud
                # could vanish from the record while the timer it set survives in the tools' store.
                conn.execute("PRAGMA synchronous=FULL")
            # REPLACE deletes the row it replaces without firing delete triggers unless this is on;
            # the no_replace triggers refuse it from any connection, this one or another.
            conn.execute("PRAGMA recursive_triggers=ON")
            conn.executescript(_SCHEMA)
        except BaseException:
            conn.close()
            raise
        log.debug("conversation record open at %s", path)
        return cls(conn)

    def next_turn(self) -> int:
        """The number the next turn will get: one past the highest started or recorded, 1 when empty."""
        (highest,) = self._conn.execute(
            "SELECT MAX(COALESCE((SELECT MAX(turn) FROM entries), 0), COALESCE((SELECT MAX(turn) FROM turns), 0))"
        ).fetchone()
        return int(highest) + 1

    def begin_turn(self) -> int:
        """Give a turn its number as it starts (kept even if nothing of the turn is ever written)."""
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            turn = self.next_turn()
            self._conn.execute("INSERT INTO turns (turn, started_at) VALUES (?, ?)", (turn, time.time()))
            self._conn.execute("COMMIT")
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        return turn

    def history(self, turns: int, since: int = 0) -> list[tuple[str, str]]:
        """The last ``turns`` exchanges from turn ``since`` on, as (user words, what the listener
        heard of the reply): turns that ended answered or interrupted, and one still under way.
        What was never heard is not history: the model must not believe it said it."""
        if turns <= 0:
            return []
        # Only the latest turns with words heard are read (a few spare for failed ones), so a turn's
        # cost does not grow with months of record.
        recent = self._conn.execute(
            "SELECT turn FROM entries WHERE turn >= ? AND role = 'user' GROUP BY turn ORDER BY turn DESC LIMIT ?",
            (since, 2 * turns + 8),
        ).fetchall()
        if not recent:
            return []
        rows = self._conn.execute(
            "SELECT turn, role, text, status, kind FROM entries WHERE turn >= ? ORDER BY id", (max(since, recent[-1][0]),)
        ).fetchall()
        heard: dict[int, str] = {}
        said: dict[int, list[str]] = {}
        ended: dict[int, str] = {}
        for turn, role, text, status, kind in rows:
            if role == "user" and status in ("heard", "typed"):
                heard[turn] = text  # an utterance that went on after an early end: the last words
            elif role == "assistant" and status in ("spoken", "told", "cut") and kind != "phrase":
                said.setdefault(turn, []).append(text)
            elif role == "turn":
                ended[turn] = status
        exchanges = [
            (heard[turn], " ".join(said.get(turn, [])))
            for turn in sorted(heard)
            if heard[turn] and ended.get(turn, "interrupted") in IN_HISTORY
        ]
        return exchanges[-turns:]

    def append(self, entries: Sequence[RecordEntry]) -> None:
        """Write ``entries`` in one transaction, in order; all of them are written or none is."""
        # Check everything before BEGIN, so a bad entry costs nothing and names itself clearly.
        for entry in entries:
            if entry.role not in ROLES:
                raise ValueError(f"unknown role {entry.role!r} in turn {entry.turn}; expected one of {', '.join(ROLES)}")
        if not entries:
            return
        now = time.time()
        rows = [
            (
                entry.turn,
                entry.role,
                entry.text,
                entry.status,
                entry.kind,
                entry.at or now,
                json.dumps(entry.data, ensure_ascii=False, default=str),
            )
            for entry in entries
        ]
        self._conn.execute("BEGIN")
        try:
            self._conn.executemany(f"INSERT INTO entries ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
            self._conn.execute("COMMIT")
        except BaseException:
            # Roll back on anything, cancellation included: half a turn is worse than none.
            self._conn.execute("ROLLBACK")
            raise
        log.debug("recorded %d entries", len(rows))

    def entries(self, turn: int | None = None) -> list[RecordEntry]:
        """Every entry in the order it was appended, or only those of ``turn``."""
        # Ordered by id, not by `at`: the clock can step backwards, the id cannot.
        if turn is None:
            cursor = self._conn.execute(f"SELECT {_COLUMNS} FROM entries ORDER BY id")
        else:
            cursor = self._conn.execute(f"SELECT {_COLUMNS} FROM entries WHERE turn = ? ORDER BY id", (turn,))
        return [
            RecordEntry(turn=turn_, role=role, text=text, status=status, kind=kind, at=at, data=json.loads(data))
            for turn_, role, text, status, kind, at, data in cursor
        ]

    def recent(self, turns: int) -> list[RecordEntry]:
        """Every entry of the latest ``turns`` turns that have any, in the order they were appended."""
        if turns <= 0:
            return []
        # Only the latest turns are read, so a display's cost does not grow with months of record.
        newest = self._conn.execute(
            "SELECT turn FROM entries GROUP BY turn ORDER BY turn DESC LIMIT ?", (turns,)
        ).fetchall()
        if not newest:
            return []
        cursor = self._conn.execute(f"SELECT {_COLUMNS} FROM entries WHERE turn >= ? ORDER BY id", (newest[-1][0],))
        return [
            RecordEntry(turn=turn_, role=role, text=text, status=status, kind=kind, at=at, data=json.loads(data))
            for turn_, role, text, status, kind, at, data in cursor
        ]

    def close(self) -> None:
        """Close the connection; every append is already committed, so nothing is lost."""
        self._conn.close()
