"""Reading Wyoming events off a socket with bounds, so one oversized event cannot exhaust memory.

The format is the library's (a JSON line, optional extra JSON data, optional payload); its own
reader trusts the lengths a client states.  Here a payload or data block over the limit is read
past in small pieces and reported as :class:`Oversize`, so the connection stays in step and the
client gets an ``error`` event instead of the server holding gigabytes.

Data and payloads are read in pieces, each piece telling ``progress``, so a connection can be
timed out when it stops sending rather than when an event takes long to arrive whole.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable

from wyoming.event import Event

_PIECE = 64 * 1024


class Oversize(Exception):
    """An event larger than the limits; it was read past and dropped."""

    def __init__(self, event_type: str, what: str, size: int, limit: int) -> None:
        super().__init__(f"{event_type}: {what} of {size} bytes is over the limit of {limit} bytes; dropped")
        self.event_type = event_type


class Garbled(Exception):
    """The stream is not Wyoming (a line that is not a JSON event); the connection cannot continue."""


def _nothing() -> None:
    pass


async def _read(reader: asyncio.StreamReader, size: int, progress: Callable[[], None], keep: bool = True) -> bytes:
    """``size`` bytes (or none kept, with ``keep`` False), read in pieces; ``progress`` after each."""
    pieces = []
    while size > 0:
        piece = await reader.readexactly(min(size, _PIECE))
        progress()
        size -= len(piece)
        if keep:
            pieces.append(piece)
    return b"".join(pieces)


async def read_event(
    reader: asyncio.StreamReader, max_data: int, max_payload: int, progress: Callable[[], None] = _nothing
) -> Event | None:
    """The next event, or None at the end of the stream (also when it ends inside an event).

    ``progress`` is called each time a part of the event (its header line, a piece of its data or
    payload) has arrived.  Raises :class:`Oversize` for an event over the limits (already read
    past) and :class:`Garbled` for a header that is not a JSON event.
    """
    try:
        line = await reader.readline()
    except ValueError as exc:  # a header line longer than the reader's limit
        raise Garbled(f"event header too long: {exc}") from None
    if not line:
        return None
    progress()
    try:
        header = json.loads(line)
        event_type = header["type"]
        data = header.get("data") or {}
        data_length = int(header.get("data_length") or 0)
        payload_length = int(header.get("payload_length") or 0)
        if not isinstance(event_type, str) or not isinstance(data, dict) or data_length < 0 or payload_length < 0:
            raise ValueError("bad field types")
    except (ValueError, KeyError, TypeError) as exc:
        raise Garbled(f"not a Wyoming event header ({exc.__class__.__name__})") from None
    try:
        if data_length > max_data:
            await _read(reader, data_length + payload_length, progress, keep=False)
            raise Oversize(event_type, "data", data_length, max_data)
        if data_length:
            extra = json.loads(await _read(reader, data_length, progress))
            if not isinstance(extra, dict):
                raise Garbled(f"{event_type}: extra data is not a JSON object")
            data.update(extra)
        if payload_length > max_payload:
            await _read(reader, payload_length, progress, keep=False)
            raise Oversize(event_type, "payload", payload_length, max_payload)
        payload = await _read(reader, payload_length, progress) if payload_length else None
    except asyncio.IncompleteReadError:
        return None
    except ValueError as exc:
        raise Garbled(f"{event_type}: extra data is not JSON ({exc})") from None
    return Event(type=event_type, data=data, payload=payload)
