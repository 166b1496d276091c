"""The SQLite databases the tools keep their state in, and how durable their writes are."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path
from typing import Literal

log = logging.getLogger(__name__)

Synchronous = Literal["FULL", "NORMAL"]


def use_wal(conn: sqlite3.Connection, synchronous: Synchronous) -> None:
    """Put ``conn`` in WAL mode at the ``synchronous`` level.

    WAL lets a reader (the bench, a person with the sqlite3 shell) look while hearth writes.
    In WAL mode FULL syncs the log to the disk at every commit; NORMAL syncs it only at a
    checkpoint, so a commit survives the process being killed but the last ones can be lost
    to a power cut.  A kitchen speaker is unplugged more often than it crashes: every store
    whose writes hearth confirms aloud uses FULL.  The level is set, never left to the
    build's default, because it is a per-connection setting that builds differ on.
    """
    mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
    if str(mode).lower() != "wal":
        # A file system without shared memory (some network mounts) refuses WAL; the rollback
        # journal is slower for readers but just as durable.
        log.warning("SQLite kept journal mode %r (WAL refused)", mode)
    conn.execute(f"PRAGMA synchronous={synchronous}")


def connect(path: Path, schema: str) -> sqlite3.Connection:
    """Open (creating if needed) the database at ``path`` and make sure ``schema`` exists.

    Autocommit and ``synchronous=FULL``, so every change is on disk when the call returns:
    a timer hearth said it set must survive a power cut, not only a crash.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.row_factory = sqlite3.Row
    use_wal(conn, "FULL")
    conn.executescript(schema)
    return conn
