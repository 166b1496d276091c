"""Every SQLite store hearth writes is in WAL mode at a synchronous level chosen in the code."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

from agent.record import ConversationRecord
from firmware_py.config import parse_config
from firmware_py.home_tools import open_home_tools
from tools.db import use_wal

FULL, NORMAL = 2, 1
"""What ``PRAGMA synchronous`` reads back as."""

ROOT = Path(__file__).resolve().parent.parent


def _pragmas(conn: sqlite3.Connection) -> tuple[str, int]:
    return conn.execute("PRAGMA journal_mode").fetchone()[0], conn.execute("PRAGMA synchronous").fetchone()[0]


async def test_each_store_reads_back_wal_and_its_synchronous_level(tmp_path: Path):
    config = parse_config({"tools": {"data_dir": str(tmp_path)}})
    home = await open_home_tools(config)
    record = ConversationRecord.open(tmp_path / "conversation.sqlite3")
    try:
        got = {
            "timers": _pragmas(home.timers.conn),
            "lists": _pragmas(home.lists.conn),
            "settings": _pragmas(home.settings.conn),
            "recipes": _pragmas(home.recipes.conn),
            "record": _pragmas(record._conn),
        }
    finally:
        record.close()
        await home.close()
    # What hearth confirms aloud (timers, the list, notes, settings, the record) is synced at every
    # commit; the recipe index is rebuilt from the files, so a commit lost to a power cut costs nothing.
    assert got == {
        "timers": ("wal", FULL),
        "lists": ("wal", FULL),
        "settings": ("wal", FULL),
        "recipes": ("wal", NORMAL),
        "record": ("wal", FULL),
    }


def test_the_level_is_set_whatever_the_connection_had(tmp_path: Path):
    conn = sqlite3.connect(tmp_path / "x.db")
    try:
        conn.execute("PRAGMA synchronous=OFF")
        use_wal(conn, "FULL")
        assert _pragmas(conn) == ("wal", FULL)
        use_wal(conn, "NORMAL")
        assert _pragmas(conn) == ("wal", NORMAL)
    finally:
        conn.close()


def test_every_connection_in_the_code_chooses_its_level():
    # A store added later must not fall back to the SQLite build's default without anyone deciding;
    # a connection that only reads opens the file read-only.
    chosen = re.compile(r"PRAGMA synchronous=|use_wal\(|mode=ro")
    opened = {}
    for path in sorted(ROOT.glob("*/**/*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith(("tests/", ".")):  # the tests, and the virtualenv's packages in their own encodings
            continue
        text = path.read_text(encoding="utf-8")
        if "sqlite3.connect(" in text:
            opened[rel] = bool(chosen.search(text))
    assert {"agent/record.py", "tools/db.py", "tools/recipes.py"} <= set(opened), opened
    assert all(opened.values()), opened
