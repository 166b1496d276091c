"""Audio in, transcript out, over Wyoming on loopback with a scripted recognizer."""

from __future__ import annotations

import numpy as np
from wyoming.asr import Transcribe, Transcript, TranscriptChunk, TranscriptStart
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.error import Error

from firmware_py.wyoming import WyomingLimits, offer_from
from tests.wyoming_kit import GrowingRecognizer, audio_events, client, read_until, serving, tone


def _types(events):
    return [e.type for e in events]


async def test_partials_arrive_while_audio_streams_and_join_into_the_transcript() -> None:
    recognizer = GrowingRecognizer("set a timer for five minutes", step_s=0.2)
    async with serving(offer_from({"en": recognizer}, speech_context={"en": lambda: "timer, list"})) as (_, host, port):
        async with client(host, port) as c:
            events = audio_events(tone(1.6))
            await c.write_event(Transcribe(language="en").event())
            half = len(events) // 2
            for event in events[:half]:
                await c.write_event(event)
            # Before audio-stop: the stream has begun and the first stable words are out.
            early = await read_until(c, "transcript-chunk")
            for event in events[half:]:
                await c.write_event(event)
            rest = await read_until(c, "transcript-stop")
    got = early + rest
    kinds = _types(got)
    assert kinds[0] == "transcript-start"
    assert TranscriptStart.from_event(got[0]).language == "en"
    assert kinds[-2:] == ["transcript", "transcript-stop"]
    chunks = [TranscriptChunk.from_event(e).text for e in got if TranscriptChunk.is_type(e.type)]
    assert len(chunks) >= 3
    assert chunks[0] == "set"
    final = Transcript.from_event(got[-2])
    assert final.text == "set a timer for five minutes"
    assert final.language == "en"
    assert "".join(chunks) == final.text
    assert recognizer.contexts == ["timer, list"]


async def test_other_rates_widths_and_channels_are_resampled_to_16k_mono() -> None:
    recognizer = GrowingRecognizer("hello")
    async with serving(offer_from({"en": recognizer})) as (_, host, port):
        async with client(host, port) as c:
            for event in audio_events(tone(1.0, rate=44100, channels=2), rate=44100, width=4):
                await c.write_event(event)
            got = await read_until(c, "transcript-stop")
    assert Transcript.from_event(got[-2]).text == "hello"
    assert recognizer.rates == {16000}
    heard = recognizer.heard[0]
    assert abs(len(heard) - 16000) <= 16  # one second, within a millisecond
    spectrum = np.abs(np.fft.rfft(heard))
    assert abs(np.argmax(spectrum) * 16000 / len(heard) - 220) < 3  # the same tone, not sped up or slowed


async def test_nonsense_audio_formats_are_refused_and_the_connection_goes_on() -> None:
    recognizer = GrowingRecognizer("still here")
    async with serving(offer_from({"en": recognizer})) as (_, host, port):
        async with client(host, port) as c:
            for rate, width, channels in [(0, 2, 1), (1_000_000, 2, 1), (16000, 3, 1), (16000, 2, 0), (16000, 2, 64)]:
                await c.write_event(AudioStart(rate=rate, width=width, channels=channels).event())
                # The stream's audio is dropped without an error per chunk.
                for _ in range(3):
                    await c.write_event(AudioChunk(rate=rate, width=width, channels=channels, audio=b"\0" * 960).event())
                await c.write_event(AudioStop().event())
                error = Error.from_event((await read_until(c, "error"))[-1])
                assert error.code == "bad-audio-format"
                assert "audio-start" in error.text
            for event in audio_events(tone(0.5)):
                await c.write_event(event)
            got = await read_until(c, "transcript-stop")
    assert "error" not in _types(got)
    assert Transcript.from_event(got[-2]).text == "still here"
    assert recognizer.started == 1


async def test_a_chunk_in_another_format_than_announced_drops_the_utterance() -> None:
    recognizer = GrowingRecognizer("again")
    async with serving(offer_from({"en": recognizer})) as (_, host, port):
        async with client(host, port) as c:
            await c.write_event(AudioStart(rate=16000, width=2, channels=1).event())
            await c.write_event(AudioChunk(rate=16000, width=2, channels=1, audio=b"\0" * 3200).event())
            await c.write_event(AudioChunk(rate=8000, width=2, channels=1, audio=b"\0" * 3200).event())
            await c.write_event(AudioChunk(rate=16000, width=2, channels=1, audio=b"\0" * 3200).event())
            await c.write_event(AudioStop().event())
            got = await read_until(c, "error")
            assert Error.from_event(got[-1]).code == "bad-audio-format"
            for event in audio_events(tone(0.3)):
                await c.write_event(event)
            got = await read_until(c, "transcript-stop")
    assert Transcript.from_event(got[-2]).text == "again"
    assert recognizer.closed == recognizer.started  # a dropped utterance's recognition, if begun, was stopped too
    assert recognizer.finished == 1


async def test_audio_longer_than_the_limit_is_refused() -> None:
    recognizer = GrowingRecognizer("short one")
    offer = offer_from({"en": recognizer}, limits=WyomingLimits(max_audio_s=1.0))
    async with serving(offer) as (_, host, port):
        async with client(host, port) as c:
            for event in audio_events(tone(1.5)):
                await c.write_event(event)
            got = await read_until(c, "error")
            assert Error.from_event(got[-1]).code == "audio-too-long"
            for event in audio_events(tone(0.5)):
                await c.write_event(event)
            got = await read_until(c, "transcript-stop")
    assert Transcript.from_event(got[-2]).text == "short one"
    assert recognizer.finished == 1


async def test_a_language_not_offered_is_refused_and_a_regional_code_is_understood() -> None:
    english = GrowingRecognizer("in english")
    korean = GrowingRecognizer("한국어로", language="ko")
    async with serving(offer_from({"en": english, "ko": korean})) as (_, host, port):
        async with client(host, port) as c:
            await c.write_event(Transcribe(language="fr").event())
            for event in audio_events(tone(0.3)):
                await c.write_event(event)
            error = Error.from_event((await read_until(c, "error"))[-1])
            assert error.code == "unsupported-language"
            assert "en, ko" in error.text
            await c.write_event(Transcribe(language="ko-KR").event())
            for event in audio_events(tone(0.3)):
                await c.write_event(event)
            got = await read_until(c, "transcript-stop")
    assert "error" not in _types(got)
    assert Transcript.from_event(got[-2]).text == "한국어로"
    assert Transcript.from_event(got[-2]).language == "ko"
    assert english.started == 0


async def test_audio_without_start_is_an_error() -> None:
    async with serving(offer_from({"en": GrowingRecognizer()})) as (_, host, port):
        async with client(host, port) as c:
            await c.write_event(AudioChunk(rate=16000, width=2, channels=1, audio=b"\0" * 320).event())
            error = Error.from_event((await read_until(c, "error"))[-1])
            assert error.code == "out-of-order"
            await c.write_event(AudioStop().event())
            assert Error.from_event((await read_until(c, "error"))[-1]).code == "out-of-order"



async def test_a_refused_stream_without_audio_stop_does_not_block_the_next_request() -> None:
    recognizer = GrowingRecognizer("next one")
    async with serving(offer_from({"en": recognizer})) as (_, host, port):
        async with client(host, port) as c:
            await c.write_event(AudioStart(rate=0, width=2, channels=1).event())
            assert Error.from_event((await read_until(c, "error"))[-1]).code == "bad-audio-format"
            await c.write_event(Transcribe(language="en").event())
            for event in audio_events(tone(0.4)):
                await c.write_event(event)
            got = await read_until(c, "transcript-stop")
    assert "error" not in _types(got)
    assert Transcript.from_event(got[-2]).text == "next one"
