"""The page's push channel: live snapshots and kept data, fanned out to each open page.

The voice loop tells the feed of a change by a plain function call that only formats one message and
puts it in each page's queue without waiting. Each queue is bounded: a page that reads slowly, or has
gone without saying so, loses its oldest messages (every message carries the whole state of its part,
so the newest one is enough) and never holds up a turn.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import time
from collections import deque
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)

CLIENT_QUEUE = 32
"""Messages waiting per page before the oldest are dropped."""


class Client:
    """One open page's waiting messages."""

    def __init__(self, limit: int = CLIENT_QUEUE) -> None:
        self._messages: deque[str] = deque(maxlen=limit)
        self._ready = asyncio.Event()
        self.dropped = 0
        """Messages dropped because the page read too slowly."""
        self.closed = False
        """The server is stopping: the stream ends once what is waiting has been sent."""

    def put(self, message: str) -> None:
        if len(self._messages) == self._messages.maxlen:
            self.dropped += 1
        self._messages.append(message)
        self._ready.set()

    def close(self) -> None:
        self.closed = True
        self._ready.set()

    async def next(self, timeout: float) -> str | None:
        """The oldest waiting message, or None after ``timeout`` s with none (time for a keep-alive)
        or once closed with nothing left."""
        if not self._messages and not self.closed:
            self._ready.clear()
            try:
                await asyncio.wait_for(self._ready.wait(), timeout)
            except TimeoutError:
                return None
        return self._messages.popleft() if self._messages else None


class Feed:
    """Formats each change once as a server-sent event and hands it to every open page."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._ids = itertools.count(1)
        self._clients: set[Client] = set()
        self._closed = False

    def message(self, kind: str, body: dict[str, Any]) -> str:
        """One server-sent event: its id, its kind, and JSON with the id and the server's time ``t``."""
        event_id = next(self._ids)
        data = json.dumps({"id": event_id, "t": self._clock(), **body}, ensure_ascii=False, default=str)
        return f"id: {event_id}\nevent: {kind}\ndata: {data}\n\n"

    def publish(self, kind: str, body: dict[str, Any]) -> None:
        text = self.message(kind, body)
        for client in list(self._clients):
            client.put(text)

    def join(self) -> Client:
        """A new page's client; one that joins while the server is stopping is closed at once."""
        client = Client()
        self._clients.add(client)
        if self._closed:
            client.close()
        return client

    def leave(self, client: Client) -> None:
        self._clients.discard(client)

    def close(self) -> None:
        """End every open stream, and any opened from now on (the server is stopping)."""
        self._closed = True
        for client in list(self._clients):
            client.close()

    def open(self) -> None:
        """Streams opened from now on stay open (the server is serving again)."""
        self._closed = False

    @property
    def clients(self) -> int:
        return len(self._clients)
