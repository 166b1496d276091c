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

PIECE_BYTES = 64 * 1024
"""Data and payloads are read in pieces of this size; each one arriving counts as the client sending."""

MAX_DEPTH = 32
"""Deepest nesting of objects and lists an event's JSON may have.  Real events nest a few levels
(``info`` about five); thousands of "[" fit in a header line and would take the decoder, and later
anything that walks or writes the data back, past Python's recursion limit."""


class Oversize(Exception):
    """An event larger than the limits; it was read past and dropped."""

    def __init__(self, event_type: str, what: str, size: int, limit: int) -> None:
        super().__init__(f"{event_type}: {what} of {size} bytes is over the limit of {limit} bytes; dropped")
        self.event_type = event_type


class Garbled(Exception):
    """The stream is not Wyoming (a line that is not a JSON event); the connection cannot continue."""


def _nested_within(value: object, limit: int) -> bool:
    """Whether ``value``'s lists and objects nest at most ``limit`` deep (walked without recursion)."""
    todo: list[tuple[object, int]] = [(value, 0)]
    while todo:
        node, depth = todo.pop()
        if isinstance(node, dict):
            node = list(node.values())
        elif not isinstance(node, list):
            continue
        if depth >= limit:
            return False
        todo.extend((child, depth + 1) for child in node)
    return True


def _json(text: bytes | str, what: str) -> object:
    """``text`` decoded, or :class:`Garbled` when it nests deeper than :data:`MAX_DEPTH`."""
    try:
        value = json.loads(text)
    except RecursionError:
        value = None
    else:
        if _nested_within(value, MAX_DEPTH):
            return value
    raise Garbled(f"{what} is nested more than {MAX_DEPTH} deep")


def _nothing() -> None:
    pass


async def _read(reader: asyncio.StreamReader, size: int, progress: Callable[[], None], keep: bool = True) -> bytes:
    """``size`` bytes (or none kept, with ``keep`` False), read in pieces; ``progress`` after each."""
    pieces = []
    while size > 0:
        piece = await reader.readexactly(min(size, PIECE_BYTES))
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
        header = _json(line, "event header")
        if not isinstance(header, dict):
            raise TypeError("not an object")
        event_type = header["type"]
        data = header.get("data") or {}
        data_length = int(header.get("data_length") or 0)
        payload_length = int(header.get("payload_length") or 0)
        if not isinstance(event_type, str) or not isinstance(data, dict) or data_length < 0 or payload_length < 0:
            raise ValueError("bad field types")
    except (ValueError, KeyError, TypeError):
        # The client's own words: what a header is, not which Python exception reading it raised.
        raise Garbled('not a Wyoming event header (one line of JSON: an object with a "type" and '
                      'optional "data", "data_length" and "payload_length")') from None
    try:
        if data_length > max_data:
            await _read(reader, data_length + payload_length, progress, keep=False)
            raise Oversize(event_type, "data", data_length, max_data)
        if data_length:
            extra = _json(await _read(reader, data_length, progress), f"{event_type}: extra data")
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
