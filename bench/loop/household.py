"""What a scenario finds in the household, the same for every arm that plays it.

The bench keeps the shopping list and the notes from one scenario to the next, as a household
does. Its arms play each scenario in turn, so without this the first arm would add "milk" and
every other arm find it already there: another reply, and one the voice made ahead cannot
foretell. Each scenario's household is taken before its first arm and put back before each arm.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

from tools.executor import ToolExecutor
from tools.lists import ListStore


@dataclass
class HouseholdState:
    """The shopping list, the notes and the recent tool calls at one moment, and where they go back."""

    store: ListStore
    executor: ToolExecutor
    lists: sqlite3.Connection
    """An in-memory copy of the list store's database."""
    recent: list[tuple[str, dict[str, Any]]]
    """The executor's recent calls (their arguments name things the recognizer is told to expect)."""

    @classmethod
    def take(cls, store: ListStore, executor: ToolExecutor) -> HouseholdState:
        copy = sqlite3.connect(":memory:")
        copy.execute("PRAGMA synchronous=OFF")  # a copy in memory, gone with the scenario: nothing to make durable
        store.conn.backup(copy)
        return cls(store, executor, copy, [(name, dict(args)) for name, args in executor.recent])

    def restore(self) -> None:
        """Put the list store and the recent calls back as they were taken."""
        self.lists.backup(self.store.conn)
        self.executor.recent.clear()
        self.executor.recent.extend((name, dict(args)) for name, args in self.recent)

    def close(self) -> None:
        self.lists.close()
