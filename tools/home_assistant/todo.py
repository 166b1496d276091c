"""One shopping list for the whole household: hearth's list kept in a Home Assistant to-do entity.

Every speaker in the house, and the family's Home Assistant app, see the same list, because Home
Assistant holds it; hearth keeps its own list as the working copy, so that the list works when
Home Assistant is down.  Each change made by voice is applied to the local list at once and
written to an outbox (SQLite, beside the list) in the same breath; the outbox is sent to Home
Assistant in order (``todo.add_item``, ``todo.update_item``) as soon as it answers, and a change
leaves the outbox only once Home Assistant has it.  Before the list is read or an item ticked off,
the outbox is sent and the local list made to match Home Assistant's (``todo.get_items``): what
another speaker or a phone added or ticked off is here too.

Sending is safe to repeat: an item already on Home Assistant's list is not added twice, and one
already gone is not an error, so a change sent just before a connection dropped costs nothing.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
from pathlib import Path
from typing import Any, Literal

from tools.home_assistant.client import HomeApi, HomeAssistantRefused, HomeAssistantUnavailable
from tools.db import connect
from tools.lists import ListStore, item_key

log = logging.getLogger(__name__)

Change = Literal["add", "complete"]

_OUTBOX = """
CREATE TABLE IF NOT EXISTS todo_outbox (
    id INTEGER PRIMARY KEY AUTOINCREMENT, entity TEXT NOT NULL, change TEXT NOT NULL,
    item TEXT NOT NULL, quantity TEXT, at REAL NOT NULL
);
"""


class SharedShoppingList:
    """hearth's list (``store``) kept in the to-do entity ``entity_id`` of a Home Assistant."""

    def __init__(self, api: HomeApi, entity_id: str, store: ListStore, outbox_path: Path, wait_s: float = 2.0) -> None:
        self.api = api
        self.wait_s = wait_s
        self._tasks: set[asyncio.Task] = set()
        self.entity_id = entity_id
        self.store = store
        self.outbox_path = outbox_path
        self._db: sqlite3.Connection | None = None
        self._lock = asyncio.Lock()
        self.reachable: bool | None = None

    def open(self) -> None:
        # synchronous=FULL, as the list's own store: a change hearth said it made survives a power cut.
        self._db = connect(self.outbox_path, _OUTBOX)

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    @property
    def db(self) -> sqlite3.Connection:
        if self._db is None:
            raise RuntimeError("the shared list's outbox is not open")
        return self._db

    def pending(self) -> list[tuple[int, Change, str, str | None]]:
        """The changes not yet in Home Assistant, oldest first."""
        rows = self.db.execute("SELECT id, change, item, quantity FROM todo_outbox WHERE entity = ? ORDER BY id", (self.entity_id,))
        return [(int(r[0]), r[1], r[2], r[3]) for r in rows]

    async def changed(self, change: Change, item: str, quantity: str | None = None) -> None:
        """A change made to the local list by voice: in the outbox before this returns, then sent
        in the background (the answer is spoken from the local list, not after Home Assistant)."""
        self.db.execute("INSERT INTO todo_outbox (entity, change, item, quantity, at) VALUES (?, ?, ?, ?, ?)",
                        (self.entity_id, change, item, quantity, time.time()))
        self._start(pull=False)

    async def refresh(self) -> None:
        """Send the outbox, then make the local list Home Assistant's; waits at most ``wait_s``,
        after which the list is read as it is here (the sync goes on)."""
        task = self._start(pull=True)
        try:
            await asyncio.wait_for(asyncio.shield(task), self.wait_s)
        except asyncio.TimeoutError:
            log.info("Home Assistant's list did not answer within %.1f s; reading hearth's own", self.wait_s)

    def _start(self, pull: bool) -> asyncio.Task:
        task = asyncio.create_task(self.sync(pull), name="shared-list-sync")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def aclose(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self.close()

    async def sync(self, pull: bool = True) -> bool:
        """Whether Home Assistant now has every change (and, with ``pull``, the local list is its)."""
        async with self._lock:
            try:
                remote = await self._items()
                for row_id, change, item, quantity in self.pending():
                    await self._send(change, item, quantity, remote)
                    self.db.execute("DELETE FROM todo_outbox WHERE id = ?", (row_id,))
                    remote = await self._items() if change == "complete" else remote
                if pull:
                    self._match(await self._items())
            except (HomeAssistantUnavailable, asyncio.CancelledError) as exc:
                if isinstance(exc, asyncio.CancelledError):
                    raise
                if self.reachable is not False:
                    log.warning("the shared shopping list waits for Home Assistant (%s); %d change(s) kept", exc, len(self.pending()))
                self.reachable = False
                return False
            if self.reachable is False:
                log.info("the shared shopping list is back in step with Home Assistant")
            self.reachable = True
            return True

    async def _items(self) -> dict[str, dict[str, Any]]:
        """Home Assistant's items still to buy, by key."""
        try:
            response = await self.api.call_service("todo", "get_items", [self.entity_id], {"status": ["needs_action"]}, response=True)
        except HomeAssistantRefused as exc:
            raise HomeAssistantUnavailable(f"{self.entity_id} could not be read ({exc})") from None
        items = ((response or {}).get(self.entity_id) or {}).get("items") or []
        return {item_key(str(i.get("summary", ""))): i for i in items if i.get("summary")}

    async def _send(self, change: Change, item: str, quantity: str | None, remote: dict[str, dict[str, Any]]) -> None:
        key = item_key(item)
        try:
            if change == "add":
                if key in remote:
                    if quantity and remote[key].get("description") != quantity:
                        await self.api.call_service("todo", "update_item", [self.entity_id],
                                                    {"item": remote[key]["summary"], "description": quantity})
                    return
                data = {"item": item, **({"description": quantity} if quantity else {})}
                await self.api.call_service("todo", "add_item", [self.entity_id], data)
                remote[key] = {"summary": item, "description": quantity}
            elif key in remote:
                await self.api.call_service("todo", "update_item", [self.entity_id],
                                            {"item": remote[key]["summary"], "status": "completed"})
        except HomeAssistantRefused as exc:
            # Refused for good (an item renamed or removed meanwhile): sending it again cannot help.
            log.warning("Home Assistant refused the list change %s %r: %s", change, item, exc)

    def _match(self, remote: dict[str, dict[str, Any]]) -> None:
        """The local list made Home Assistant's: added there, added here; gone there, ticked off here."""
        local = {item_key(e.item): e for e in self.store.items()}
        for key, entry in local.items():
            if key not in remote:
                self.store.complete(entry.item)
        for key, item in remote.items():
            quantity = item.get("description") or None
            if key not in local or (quantity and local[key].quantity != quantity):
                self.store.add(str(item["summary"]), quantity)
