"""The Wyoming server as a whole: describe, bad input, dropped connections, many clients at once."""

from __future__ import annotations

import asyncio
import importlib.metadata
from collections.abc import AsyncIterator

import pytest
from wyoming.asr import Transcribe, Transcript
from wyoming.handle import Handled
from wyoming.audio import AudioChunk, AudioStart
from wyoming.client import AsyncUnixClient
from wyoming.error import Error
from wyoming.event import Event
from wyoming.info import Describe, Info
from wyoming.ping import Ping
from wyoming.tts import Synthesize, SynthesizeVoice

from firmware_py.wyoming import WyomingLimits, WyomingServer, offer_from
from tests.fakes import ToneSynthesizer
from tests.wyoming_kit import (
    GrowingRecognizer,
    ScriptedAnswers,
    audio_events,
    client,
    no_wyoming_tasks_left,
    read_until,
    serving,
    tone,
)


def _offer(**kwargs):
    english = ToneSynthesizer(seconds_per_char=0.005, sample_rate=22050, delay_s=0.002)
    korean = ToneSynthesizer(seconds_per_char=0.005, sample_rate=16000, delay_s=0.002)
    korean.language = "ko"
    return offer_from(
        {"en": GrowingRecognizer("hello there"), "ko": GrowingRecognizer("안녕하세요", language="ko")},
        {"en": english, "ko": korean},
        answers=ScriptedAnswers(),
        answer_languages=["en", "ko"],
        **kwargs,
    )


async def test_describe_lists_asr_tts_and_handle_in_english_and_korean() -> None:
    async with serving(_offer()) as (_, host, port):
        async with client(host, port) as c:
            await c.write_event(Describe().event())
            info = Info.from_event((await read_until(c, "info"))[-1])
    version = importlib.metadata.version("hearth")
    (asr,) = info.asr
    assert asr.supports_transcript_streaming and asr.installed and asr.version == version
    assert sorted(lang for m in asr.models for lang in m.languages) == ["en", "ko"]
    (tts,) = info.tts
    assert tts.supports_synthesize_streaming and tts.version == version
    assert [(v.name, v.languages) for v in tts.voices] == [("tonesynthesizer-en", ["en"]), ("tonesynthesizer-ko", ["ko"])]
    (handle,) = info.handle
    assert handle.supports_handled_streaming and handle.installed and handle.version == version
    assert handle.models[0].languages == ["en", "ko"]
    assert not handle.supports_home_control


async def test_programs_switched_off_are_neither_listed_nor_served() -> None:
    async with serving(_offer(programs=("tts",))) as (_, host, port):
        async with client(host, port) as c:
            await c.write_event(Describe().event())
            info = Info.from_event((await read_until(c, "info"))[-1])
            assert (len(info.asr), len(info.tts), len(info.handle)) == (0, 1, 0)
            await c.write_event(Transcribe(language="en").event())
            assert Error.from_event((await read_until(c, "error"))[-1]).code == "not-offered"
            await c.write_event(Transcript("hello").event())
            assert Error.from_event((await read_until(c, "error"))[-1]).code == "not-offered"
            await c.write_event(Synthesize("Still speaking.").event())
            assert (await read_until(c, "audio-stop"))[0].type == "audio-start"


async def test_an_unknown_event_is_an_error_and_the_next_request_is_answered() -> None:
    async with serving(_offer()) as (_, host, port):
        async with client(host, port) as c:
            await c.write_event(Event(type="make-coffee", data={"sugar": 2}))
            error = Error.from_event((await read_until(c, "error"))[-1])
            assert error.code == "unknown-event" and "make-coffee" in error.text
            await c.write_event(Event(type="synthesize", data={}))  # no text
            assert Error.from_event((await read_until(c, "error"))[-1]).code == "bad-event"
            await c.write_event(Ping(text="x").event())
            assert (await read_until(c, "pong"))[-1].data["text"] == "x"
            for event in audio_events(tone(0.5)):
                await c.write_event(event)
            got = await read_until(c, "transcript-stop")
            assert Transcript.from_event(got[-2]).text == "hello there"


async def test_an_oversized_event_is_read_past_and_refused() -> None:
    async with serving(_offer(limits=WyomingLimits(max_payload_bytes=4000))) as (_, host, port):
        async with client(host, port) as c:
            await c.write_event(AudioStart(rate=16000, width=2, channels=1).event())
            await c.write_event(AudioChunk(rate=16000, width=2, channels=1, audio=b"\1" * 100_000).event())
            error = Error.from_event((await read_until(c, "error"))[-1])
            assert error.code == "too-large" and "100000" in error.text
            for event in audio_events(tone(0.4)):
                await c.write_event(event)
            got = await read_until(c, "transcript-stop")
            assert Transcript.from_event(got[-2]).text == "hello there"


async def test_a_stream_that_is_not_wyoming_gets_an_error_and_is_closed() -> None:
    async with serving(_offer()) as (server, host, port):
        reader, writer = await asyncio.open_connection(host, port)
        writer.write(b"GET / HTTP/1.1\r\n\r\n")
        await writer.drain()
        reply = await asyncio.wait_for(reader.read(), 5)
        writer.close()
        assert b'"type": "error"' in reply and b"garbled" in reply
        async with client(host, port) as c:
            await c.write_event(Describe().event())
            assert (await read_until(c, "info"))[-1].type == "info"


class EndlessAnswers:
    """Answers forever, one unit every 50 ms, and notes when it is stopped."""

    def __init__(self) -> None:
        self.stopped = asyncio.Event()

    async def answer_text(self, text: str) -> AsyncIterator[str]:
        try:
            while True:
                await asyncio.sleep(0.05)
                yield "and more. "
        finally:
            self.stopped.set()


@pytest.mark.parametrize("where", ["mid-audio", "mid-answer", "mid-text"])
async def test_a_dropped_connection_stops_its_work_and_leaves_nothing_running(where: str) -> None:
    recognizer = GrowingRecognizer("never finished")
    answers = EndlessAnswers()
    synth = ToneSynthesizer(seconds_per_char=0.005, sample_rate=22050)
    offer = offer_from({"en": recognizer}, {"en": synth}, answers=answers, answer_languages=["en"])
    async with serving(offer) as (server, host, port):
        async with client(host, port) as c:
            if where == "mid-audio":
                for event in audio_events(tone(1.0))[:-3]:
                    await c.write_event(event)
                await read_until(c, "transcript-chunk")
            elif where == "mid-answer":
                await c.write_event(Transcript("tell me everything").event())
                await read_until(c, "handled-chunk")
            else:
                await c.write_event(Event(type="synthesize-start", data={}))
                await c.write_event(Event(type="synthesize-chunk", data={"text": "One sentence. And half of"}))
                await read_until(c, "audio-stop")
        # The client is gone: everything it started stops.
        await no_wyoming_tasks_left()
        assert server.connections == 0
        if where == "mid-audio":
            assert recognizer.closed == recognizer.started == 1 and recognizer.finished == 0
        elif where == "mid-answer":
            assert answers.stopped.is_set()
        else:
            assert synth.texts == ["One sentence. "]
        # And the server serves the next client.
        async with client(host, port) as c:
            await c.write_event(Synthesize("Next.").event())
            assert (await read_until(c, "audio-stop"))[-1].type == "audio-stop"


async def test_twenty_clients_at_once_each_get_their_own_answers() -> None:
    recognizer = GrowingRecognizer(report_length=True)
    synth = ToneSynthesizer(seconds_per_char=0.005, sample_rate=22050, delay_s=0.005)
    answers = ScriptedAnswers(["Done. "])
    offer = offer_from({"en": recognizer}, {"en": synth}, answers=answers, answer_languages=["en"])

    async def one(i: int, host: str, port: int) -> tuple[str, int, str]:
        async with client(host, port) as c:
            for event in audio_events(tone(0.3 + 0.05 * i), chunk_s=0.05):
                await c.write_event(event)
            heard = Transcript.from_event((await read_until(c, "transcript-stop"))[-2]).text
            text = "Item " + "x" * i + "."
            await c.write_event(Synthesize(text, voice=SynthesizeVoice(language="en")).event())
            audio = await read_until(c, "audio-stop")
            samples = sum(AudioChunk.from_event(e).samples for e in audio if e.type == "audio-chunk")
            await c.write_event(Transcript(f"request {i}").event())
            handled = (await read_until(c, "handled-stop"))[-2].data["text"]
            return heard, samples, handled

    async with serving(offer) as (server, host, port):
        results = await asyncio.gather(*(one(i, host, port) for i in range(20)))
        await no_wyoming_tasks_left()
        assert server.connections == 0
    for i, (heard, samples, handled) in enumerate(results):
        assert heard == f"{round((0.3 + 0.05 * i) * 1000)} ms"
        assert samples == int(len("Item " + "x" * i + ".") * 0.005 * 22050)
        assert handled == "Done."
    assert recognizer.started == recognizer.finished == recognizer.closed == 20
    assert recognizer.most_active == WyomingLimits().utterances_per_recognizer  # the rest queued their audio
    assert sorted(answers.asked) == sorted(f"request {i}" for i in range(20))


async def test_stop_ends_connections_and_what_they_started() -> None:
    recognizer = GrowingRecognizer()
    server = WyomingServer(offer_from({"en": recognizer}))
    uri = await server.start("tcp://127.0.0.1:0")
    host, port = uri.removeprefix("tcp://").rsplit(":", 1)
    async with client(host, int(port)) as c:
        for event in audio_events(tone(0.6))[:-1]:
            await c.write_event(event)
        await read_until(c, "transcript-chunk")
        await server.stop()
        assert await c.read_event() is None
    await no_wyoming_tasks_left()
    assert recognizer.closed == 1
    await server.stop()  # twice is fine


async def test_start_reports_the_port_it_bound_and_refuses_other_schemes(tmp_path) -> None:
    server = WyomingServer(_offer())
    with pytest.raises(ValueError, match="tcp://HOST:PORT"):
        await server.start("http://127.0.0.1:10700")
    uri = await server.start("tcp://127.0.0.1:0")
    try:
        assert uri.startswith("tcp://127.0.0.1:") and not uri.endswith(":0")
        with pytest.raises(RuntimeError):
            await server.start("tcp://127.0.0.1:0")
    finally:
        await server.stop()
    unix = WyomingServer(_offer())
    path = tmp_path / "hearth.sock"
    assert await unix.start(f"unix://{path}") == f"unix://{path}"
    try:
        async with AsyncUnixClient(path) as c:
            await c.write_event(Describe().event())
            assert (await read_until(c, "info"))[-1].type == "info"
    finally:
        await unix.stop()


async def _closed(reader: asyncio.StreamReader) -> bytes:
    """Everything the server sends until it closes the connection (a reset counts as closed)."""
    got = b""
    try:
        while piece := await asyncio.wait_for(reader.read(65536), 10):
            got += piece
    except ConnectionResetError:
        pass
    return got


async def test_a_half_sent_header_or_a_silent_client_is_closed_after_the_idle_time() -> None:
    async with serving(_offer(limits=WyomingLimits(client_idle_s=0.3))) as (server, host, port):
        half_reader, half = await asyncio.open_connection(host, port)
        half.write(b'{"type": "describe", "da')
        await half.drain()
        silent_reader, silent = await asyncio.open_connection(host, port)
        # Each is closed once it has sent nothing for the idle time; the test waits for the close,
        # however late, rather than timing it.
        for reader in (half_reader, silent_reader):
            assert b"idle" in await _closed(reader)
        for writer in (half, silent):
            writer.close()
        await no_wyoming_tasks_left()
        assert server.connections == 0
        # A client that waits longer than the idle time for its answer is not idle: hearth owes it.
        slow = ScriptedAnswers(["Thinking. ", "Done."], unit_s=0.4)
        async with serving(offer_from(answers=slow, answer_languages=["en"], limits=WyomingLimits(client_idle_s=0.3))) as (_, h, p):
            async with client(h, p) as c:
                await c.write_event(Transcript("take your time").event())
                got = await read_until(c, "handled-stop")
                assert Handled.from_event(got[-2]).text == "Thinking. Done."
                await c.write_event(Describe().event())
                assert (await read_until(c, "info"))[-1].type == "info"


async def test_a_connection_over_the_cap_is_refused_and_the_others_keep_working() -> None:
    async with serving(_offer(limits=WyomingLimits(max_connections=2))) as (server, host, port):
        async with client(host, port) as first, client(host, port) as second:
            for c in (first, second):
                await c.write_event(Describe().event())
                assert (await read_until(c, "info"))[-1].type == "info"
            reader, writer = await asyncio.open_connection(host, port)
            writer.write(b'{"type": "describe"}\n')  # unread when it is refused: the error must still arrive
            refused = await _closed(reader)
            writer.close()
            assert b'"type": "error"' in refused and b"busy" in refused
            for c in (first, second):
                await c.write_event(Ping(text="still here").event())
                assert (await read_until(c, "pong"))[-1].data["text"] == "still here"
        # Once they have gone, a new client is served.
        await no_wyoming_tasks_left()
        async with client(host, port) as c:
            await c.write_event(Describe().event())
            assert (await read_until(c, "info"))[-1].type == "info"


async def test_control_characters_from_a_client_are_escaped_in_the_log(caplog) -> None:
    caplog.set_level("INFO", logger="firmware_py.wyoming")
    async with serving(_offer()) as (_, host, port):
        reader, writer = await asyncio.open_connection(host, port)
        writer.write(b'{"type": "\\u001b[2J\\u001b]0;pwned\\u0007", "data_length": 3}\n[1]')
        await writer.drain()
        reply = await _closed(reader)
        writer.close()
    assert b"garbled" in reply and b"\x1b" not in reply
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "\\x1b[2J" in logged and "\x1b" not in logged and "\x07" not in logged
