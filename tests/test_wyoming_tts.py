"""Text in, audio out, over Wyoming on loopback with a tone synthesizer, unit by unit as Cadence cuts it."""

from __future__ import annotations

import asyncio

from wyoming.audio import AudioChunk, AudioStart
from wyoming.error import Error
from wyoming.tts import Synthesize, SynthesizeChunk, SynthesizeStart, SynthesizeStop, SynthesizeVoice

from agent.speaking.cadence import Cadence, CadenceRules, split_units
from firmware_py.wyoming import WyomingLimits, offer_from
from tests.fakes import ToneSynthesizer
from tests.wyoming_kit import client, read_until, serving

REPLY = "Preheat the oven to two hundred degrees. Then roast the potatoes for forty minutes, turning them once. Salt them well."


def _voices():
    english = ToneSynthesizer(seconds_per_char=0.01, sample_rate=22050, delay_s=0.005)
    korean = ToneSynthesizer(seconds_per_char=0.01, sample_rate=16000, delay_s=0.005)
    korean.language = "ko"
    return english, korean


def _samples(synth: ToneSynthesizer, text: str) -> int:
    return int(len(text) * synth.seconds_per_char * synth.sample_rate)


async def test_whole_text_is_one_audio_stream_made_unit_by_unit() -> None:
    english, korean = _voices()
    async with serving(offer_from(synthesizers={"en": english, "ko": korean})) as (_, host, port):
        async with client(host, port) as c:
            await c.write_event(Synthesize(REPLY).event())
            got = await read_until(c, "audio-stop")
    kinds = [e.type for e in got]
    assert kinds[0] == "audio-start" and kinds[-1] == "audio-stop"
    assert set(kinds[1:-1]) == {"audio-chunk"}
    start = AudioStart.from_event(got[0])
    assert (start.rate, start.width, start.channels) == (22050, 2, 1)
    chunks = [AudioChunk.from_event(e) for e in got[1:-1]]
    assert all((c.rate, c.width, c.channels) == (22050, 2, 1) for c in chunks)
    units = [u for u in split_units(REPLY, CadenceRules(language="en")) if u.strip()]
    assert len(units) >= 3
    assert english.texts == units
    assert sum(c.samples for c in chunks) == sum(_samples(english, u) for u in units)
    assert korean.texts == []


async def test_streamed_text_is_spoken_as_each_unit_is_cut_and_ends_with_synthesize_stopped() -> None:
    english, _ = _voices()
    rules = CadenceRules(language="en")
    pieces = [w + " " for w in REPLY.split(" ")]
    async with serving(offer_from(synthesizers={"en": english}, cadence={"en": rules})) as (_, host, port):
        async with client(host, port) as c:
            await c.write_event(SynthesizeStart(voice=SynthesizeVoice(name="tonesynthesizer-en")).event())
            first_unit_end = REPLY.index("degrees.") + len("degrees.") + 1
            sent = 0
            for piece in pieces:
                await c.write_event(SynthesizeChunk(piece).event())
                sent += len(piece)
                if sent > first_unit_end + 10:
                    break
            # The first unit is spoken while the text is still coming.
            early = await read_until(c, "audio-stop")
            for piece in pieces[len(REPLY[:sent].split(" ")) - 1 :]:
                await c.write_event(SynthesizeChunk(piece).event())
            await c.write_event(Synthesize(REPLY).event())  # the whole text again, for older servers: not spoken twice
            await c.write_event(SynthesizeStop().event())
            rest = await read_until(c, "synthesize-stopped")
    got = early + rest
    expected = Cadence(rules)
    units = [u for p in pieces for u in expected.feed(p)] + expected.flush()
    assert english.texts == units
    assert "".join(english.texts).strip() == REPLY
    # Each unit: its own audio-start .. audio-stop, in the voice's format.
    kinds = [e.type for e in got]
    assert kinds.count("audio-start") == kinds.count("audio-stop") == len(units)
    assert kinds[-1] == "synthesize-stopped"
    bounds = [i for i, k in enumerate(kinds) if k in ("audio-start", "audio-stop")]
    for unit, (a, b) in zip(units, zip(bounds[::2], bounds[1::2])):
        start = AudioStart.from_event(got[a])
        assert (start.rate, start.width, start.channels) == (22050, 2, 1)
        assert sum(AudioChunk.from_event(e).samples for e in got[a + 1 : b]) == _samples(english, unit)


async def test_voices_are_chosen_by_name_or_language_and_unknown_ones_refused() -> None:
    english, korean = _voices()
    async with serving(offer_from(synthesizers={"en": english, "ko": korean})) as (_, host, port):
        async with client(host, port) as c:
            await c.write_event(Synthesize("없는 목소리", voice=SynthesizeVoice(name="nobody")).event())
            error = Error.from_event((await read_until(c, "error"))[-1])
            assert error.code == "unknown-voice"
            assert "tonesynthesizer-en" in error.text
            await c.write_event(Synthesize("타이머를 맞췄어요.", voice=SynthesizeVoice(language="ko")).event())
            got = await read_until(c, "audio-stop")
            assert AudioStart.from_event(got[0]).rate == 16000
            await c.write_event(Synthesize("hello", voice=SynthesizeVoice(language="fr")).event())
            assert Error.from_event((await read_until(c, "error"))[-1]).code == "unsupported-language"
            await c.write_event(SynthesizeStart(voice=SynthesizeVoice(name="nobody")).event())
            assert Error.from_event((await read_until(c, "error"))[-1]).code == "unknown-voice"
            await c.write_event(SynthesizeChunk("dropped").event())
            assert Error.from_event((await read_until(c, "error"))[-1]).code == "out-of-order"
    assert korean.texts == ["타이머를 맞췄어요."]
    assert english.texts == []


async def test_text_with_nothing_to_say_still_ends_its_audio() -> None:
    english, _ = _voices()
    async with serving(offer_from(synthesizers={"en": english})) as (_, host, port):
        async with client(host, port) as c:
            await c.write_event(Synthesize("").event())
            got = await read_until(c, "audio-stop")
            assert [e.type for e in got] == ["audio-start", "audio-stop"]
            await c.write_event(SynthesizeStart().event())
            await c.write_event(SynthesizeStop().event())
            got = await read_until(c, "synthesize-stopped")
            assert [e.type for e in got] == ["synthesize-stopped"]


async def test_a_sentence_followed_by_a_pause_is_spoken_before_the_rest_is_sent() -> None:
    english, _ = _voices()
    async with serving(offer_from(synthesizers={"en": english})) as (_, host, port):
        async with client(host, port) as c:
            await c.write_event(SynthesizeStart().event())
            await c.write_event(SynthesizeChunk("Okay, one at a time.").event())
            # Nothing more is sent until the first unit's audio has started.
            first = await read_until(c, "audio-stop")
            assert first[0].type == "audio-start"
            assert english.texts == ["Okay, one at a time."]
            await c.write_event(SynthesizeChunk(" Let me check the oven.").event())
            await c.write_event(SynthesizeStop().event())
            rest = await read_until(c, "synthesize-stopped")
    assert english.texts == ["Okay, one at a time.", " Let me check the oven."]
    kinds = [e.type for e in first + rest]
    assert kinds.count("audio-start") == kinds.count("audio-stop") == 2


async def test_text_that_stops_mid_sentence_waits_for_its_continuation() -> None:
    english, _ = _voices()
    offer = offer_from(synthesizers={"en": english}, limits=WyomingLimits(stream_idle_s=0.01))
    async with serving(offer) as (_, host, port):
        async with client(host, port) as c:
            await c.write_event(SynthesizeStart().event())
            for piece in ["Okay, one", " at", " a", " time, Dr."]:
                await c.write_event(SynthesizeChunk(piece).event())
                await asyncio.sleep(0.1)  # ten idle times: a pause of the client's after each piece
            assert english.texts == []  # no sentence has ended, however long the client thinks
            await c.write_event(SynthesizeChunk(" Smith.").event())
            # The sentence is now whole: the pause after it speaks it, with nothing more sent.
            first = await read_until(c, "audio-stop")
            assert first[0].type == "audio-start"
            await c.write_event(SynthesizeStop().event())
            await read_until(c, "synthesize-stopped")
    assert english.texts == ["Okay, one at a time, Dr. Smith."]


async def test_control_characters_in_text_to_speak_are_taken_out() -> None:
    english, _ = _voices()
    async with serving(offer_from(synthesizers={"en": english})) as (_, host, port):
        async with client(host, port) as c:
            await c.write_event(Synthesize("Hello \x1b[2J\x1b]0;pwned\x07 there.").event())
            await read_until(c, "audio-stop")
            await c.write_event(SynthesizeStart().event())
            await c.write_event(SynthesizeChunk("Once \x1b[31mmore").event())
            await c.write_event(SynthesizeChunk(" with\u202e feeling.").event())
            await c.write_event(SynthesizeStop().event())
            await read_until(c, "synthesize-stopped")
    assert english.texts == ["Hello [2J]0;pwned there.", "Once [31mmore with feeling."]
