"""What a Wyoming client is told when its input is refused: one plain line, and one log line."""

from __future__ import annotations

import asyncio
import json

import pytest
from wyoming.error import Error
from wyoming.event import Event
from wyoming.info import Describe

from firmware_py.wyoming import WyomingLimits, offer_from
from tests.wyoming_kit import ScriptedAnswers, client, read_until, serving


def _offer(**kwargs):
    return offer_from(answers=ScriptedAnswers(), answer_languages=["en"], **kwargs)


async def _closed(reader: asyncio.StreamReader) -> bytes:
    """Everything the server sends until it closes the connection (a reset counts as closed)."""
    got = b""
    try:
        while piece := await asyncio.wait_for(reader.read(65536), 10):
            got += piece
    except ConnectionResetError:
        pass
    return got


_DEEP = 10_000
_IN_DATA = b"[" * _DEEP + b"]" * _DEEP
_IN_HEADER = b'{"type": "transcript", "data": {"text": ' + b"[" * 20_000 + b"]" * 20_000 + b"}}\n"


@pytest.mark.parametrize("sent", [
    b'{"type": "transcript", "data_length": %d}\n' % len(_IN_DATA) + _IN_DATA,
    _IN_HEADER,
], ids=["in-data", "in-header"])
async def test_an_event_nested_ten_thousand_deep_gets_one_error_event_and_one_log_line(sent: bytes, caplog) -> None:
    assert len(_IN_HEADER) < 64 * 1024  # within the header line's own limit: the decoder has to refuse it
    caplog.set_level("DEBUG")
    async with serving(_offer()) as (_, host, port):
        reader, writer = await asyncio.open_connection(host, port)
        writer.write(sent)
        await writer.drain()
        reply = await _closed(reader)
        writer.close()
        # The server goes on serving others.
        async with client(host, port) as c:
            await c.write_event(Describe().event())
            assert (await read_until(c, "info"))[-1].type == "info"
    lines = reply.decode().splitlines()
    error = json.loads(lines[0])
    assert error["type"] == "error", reply[:200]
    text = error.get("data", {}).get("text") or json.loads(lines[1])["text"]
    assert "nested" in text and "\n" not in text
    ours = [r for r in caplog.records if r.name.startswith("firmware_py.wyoming") and r.levelname != "DEBUG"
            and "refused" in r.getMessage()]
    assert len(ours) == 1, [r.getMessage() for r in ours]
    assert all(r.exc_info is None for r in caplog.records), [r.getMessage() for r in caplog.records if r.exc_info]
    assert "Traceback" not in caplog.text and "RecursionError" not in caplog.text


@pytest.mark.parametrize(("event", "says"), [
    (Event(type="transcript", data={"text": 5}), "transcript: 'text' must be a string, not a number"),
    (Event(type="transcript", data={}), "transcript: 'text' is missing"),
    (Event(type="synthesize", data={"text": ["a"]}), "synthesize: 'text' must be a string, not a list"),
    (Event(type="synthesize", data={"text": "hi", "voice": "joe"}), "synthesize: 'voice' must be an object, not a string"),
    (Event(type="synthesize", data={"text": "hi", "voice": {"name": 3}}), "synthesize: 'voice.name' must be a string, not a number"),
    (Event(type="transcribe", data={"language": True}), "transcribe: 'language' must be a string, not true or false"),
    (Event(type="transcribe", data={"transcript_names": "pasta"}), "transcribe: 'transcript_names' must be a list, not a string"),
    (Event(type="transcript", data={"text": "hi", "context": [1]}), "transcript: 'context' must be an object, not a list"),
])
async def test_a_field_of_the_wrong_kind_is_named_in_the_clients_words(event: Event, says: str) -> None:
    async with serving(_offer()) as (_, host, port):
        async with client(host, port) as c:
            await c.write_event(event)
            error = Error.from_event((await read_until(c, "error"))[-1])
            assert (error.code, error.text) == ("bad-event", says)
            assert "Error" not in error.text and "len()" not in error.text
            await c.write_event(Describe().event())
            assert (await read_until(c, "info"))[-1].type == "info"


async def test_the_idle_error_says_what_did_not_arrive_to_a_client_still_sending_bytes() -> None:
    async with serving(_offer(limits=WyomingLimits(client_idle_s=0.3))) as (_, host, port):
        reader, writer = await asyncio.open_connection(host, port)
        writer.write(b'{"type": "desc')
        await writer.drain()
        reply = await _closed(reader)
        writer.close()
    error = json.loads(reply.decode().splitlines()[0])
    text = error.get("data", {}).get("text") or json.loads(reply.decode().splitlines()[1])["text"]
    # The client did send something; it did not finish the event.
    assert "nothing received" not in text
    assert "0.3 s" in text and "event" in text and "whole" in text
