"""Small values the device keeps across restarts (the volume, the place in a recipe), in SQLite.

Kept beside the timers and the list, in the same file and with the same durability: a
value is on disk when ``put`` returns.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from pathlib import Path
from typing import Any

from tools.db import connect

log = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS device_settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


class SettingsStore:
    """JSON values by key; call ``open()`` before use and ``close()`` after."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._conn: sqlite3.Connection | None = None

    def open(self) -> None:
        self._conn = connect(self.path, _SCHEMA)

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    @property
    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            raise RuntimeError("SettingsStore.open() has not been called")
        return self._conn

    def get(self, key: str, default: Any = None) -> Any:
        row = self.conn.execute("SELECT value FROM device_settings WHERE key = ?", (key,)).fetchone()
        if row is None:
            return default
        try:
            return json.loads(row[0])
        except ValueError:
            # A value written by hand and broken: the default serves, and the log says why.
            log.error("setting %r is not valid JSON (%r); using %r", key, row[0], default)
            return default

    def put(self, key: str, value: Any) -> None:
        self.conn.execute(
            "INSERT INTO device_settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, json.dumps(value, ensure_ascii=False)),
        )

    def delete(self, key: str) -> None:
        self.conn.execute("DELETE FROM device_settings WHERE key = ?", (key,))
