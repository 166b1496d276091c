"""The SQLite database the tools keep their state in."""

from __future__ import annotations

import sqlite3
from pathlib import Path


def connect(path: Path, schema: str) -> sqlite3.Connection:
    """Open (creating if needed) the database at ``path`` and make sure ``schema`` exists.

    Autocommit, so every change is on disk when the call returns (a timer must survive a
    power cut); WAL, so that a reader never waits on the writer.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA journal_mode=WAL")
    conn.executescript(schema)
    return conn
