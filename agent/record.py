"""The conversation record: every turn's words, spoken units and tool calls, kept in SQLite.

What the assistant heard, said (or meant to say but was cut off before) and did is the
evidence for every later question: what the model is given as history, what the bench
scores, what a person reads when the assistant did something odd.  Evidence that can be
edited afterwards is worth little, so the record is append-only: rows are only inserted,
and triggers in the database itself refuse UPDATE and DELETE, whoever issues them.

Each :meth:`ConversationRecord.append` writes its batch in one transaction, so a turn is
either recorded whole or not at all; a crash never leaves half a turn behind.
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

ROLES = ("user", "assistant", "tool")
"""The roles an entry may have; anything else is refused before it reaches the database."""

APPEND_ONLY = "the conversation record is append-only"
"""The message the triggers abort with, so a refused change says why."""

_SCHEMA = f"""
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
CREATE TRIGGER IF NOT EXISTS entries_no_update BEFORE UPDATE ON entries
BEGIN
    SELECT RAISE(ABORT, '{APPEND_ONLY}');
END;
CREATE TRIGGER IF NOT EXISTS entries_no_delete BEFORE DELETE ON entries
BEGIN
    SELECT RAISE(ABORT, '{APPEND_ONLY}');
END;
"""

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
    """User: ``"heard"``; assistant unit: ``"spoken"`` or ``"unspoken"``; tool: ``"ok"``, ``"error"`` or ``"refused"``."""
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
            conn.executescript(_SCHEMA)
        except BaseException:
            conn.close()
            raise
        log.debug("conversation record open at %s", path)
        return cls(conn)

    def next_turn(self) -> int:
        """The number the next turn should get: one past the highest recorded, 1 when empty."""
        (highest,) = self._conn.execute("SELECT COALESCE(MAX(turn), 0) FROM entries").fetchone()
        return int(highest) + 1

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

    def close(self) -> None:
        """Close the connection; every append is already committed, so nothing is lost."""
        self._conn.close()
