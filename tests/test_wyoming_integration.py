"""hearth's real recognizer and voices over Wyoming: Whisper tiny.en, the piper voice, espeak-ng Korean.

Spoken requests from the bench (bench/loop/requests) go in as Home Assistant sends them (16 kHz
16-bit mono) and as a 48 kHz stereo stream; the words must come back.  Synthesized speech
must be real audio, and the English voice's answer must be heard back as its own words.
Budget: about 20 s on two cores.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from pathlib import Path

import numpy as np
import pytest
import soxr
from wyoming.asr import Transcribe, Transcript
from wyoming.audio import AudioChunk, AudioStart
from wyoming.client import AsyncTcpClient
from wyoming.tts import Synthesize, SynthesizeChunk, SynthesizeStart, SynthesizeStop, SynthesizeVoice

from agent.listening.speech_context import SpeechContext
from audio.espeak_tts import EspeakSettings, EspeakSynthesizer
from audio.piper_tts import PiperSettings, PiperSynthesizer
from audio.wav import read_wav
from firmware_py.config import HearthConfig
from firmware_py.wiring import make_recognizer
from firmware_py.wyoming import offer_from
from models.store import ModelStore
from tests.wyoming_kit import audio_events, client, read_until, serving

pytestmark = pytest.mark.integration

REQUESTS = Path(__file__).resolve().parent.parent / "bench" / "loop" / "requests"


def _words(text: str) -> list[str]:
    return re.sub(r"[^\w\s']", " ", text.lower()).split()


def _request(request_id: str) -> tuple[np.ndarray, str]:
    entry = next(e for e in json.loads((REQUESTS / "requests.json").read_text()) if e["id"] == request_id)
    return read_wav(REQUESTS / entry["wav"], 16000).samples, entry["text"]


async def _send_paced(c: AsyncTcpClient, events) -> None:
    """Audio chunks a little faster than real time, so partials are decoded on the way, as from a microphone."""
    for event in events:
        await c.write_event(event)
        if event.type == "audio-chunk":
            await asyncio.sleep(0.03)


def _pcm(events) -> tuple[np.ndarray, AudioStart]:
    start = AudioStart.from_event(next(e for e in events if e.type == "audio-start"))
    data = b"".join(AudioChunk.from_event(e).audio for e in events if e.type == "audio-chunk")
    return np.frombuffer(data, "<i2").astype(np.float32) / 32768.0, start


@pytest.fixture(scope="module")
def models(models_dir: Path, model_path):
    for name in ("whisper-tiny-en/model.bin", "piper-en-joe/model.onnx", "espeak-ng/espeakbridge.so"):
        model_path(name)
    config = HearthConfig(models_dir=models_dir, asr={"partial_interval_s": 0.1})
    recognizer = make_recognizer(config, ModelStore(models_dir))
    recognizer.load()
    piper = PiperSynthesizer(PiperSettings(voice_dir=models_dir / "piper-en-joe", espeak_bridge=models_dir / "espeak-ng" / "espeakbridge.so"))
    korean = EspeakSynthesizer(EspeakSettings(voice="ko", language="ko"))

    async def load() -> None:
        await piper.load()
        await korean.load()

    asyncio.run(load())
    return recognizer, piper, korean


def _offer(models):
    recognizer, piper, korean = models
    return offer_from({"en": recognizer}, {"en": piper, "ko": korean}, speech_context={"en": SpeechContext("en")})


async def test_spoken_requests_come_back_as_their_words(models) -> None:
    async with serving(_offer(models)) as (_, host, port):
        for request_id, rate, channels in [("en/boil-egg", 16000, 1), ("en/dinner-idea", 48000, 2)]:
            samples, text = _request(request_id)
            if rate != 16000:
                samples = soxr.resample(samples, 16000, rate).astype(np.float32)
            frames = np.repeat(samples[:, None], channels, axis=1)
            async with client(host, port) as c:
                await c.write_event(Transcribe(language="en").event())
                await _send_paced(c, audio_events(frames, rate=rate))
                got = await read_until(c, "transcript-stop")
            final = Transcript.from_event(got[-2])
            assert _words(final.text) == _words(text), f"{request_id} at {rate} Hz x{channels}: heard {final.text!r}"
            assert final.language == "en"
            chunks = [e.data["text"] for e in got if e.type == "transcript-chunk"]
            assert chunks, f"{request_id}: no transcript chunks"
            assert _words("".join(chunks))[: len(_words(final.text))] == _words(final.text)[: len(_words("".join(chunks)))]


async def test_the_english_voice_speaks_real_audio_that_is_heard_as_its_words(models) -> None:
    reply = "Your pasta timer is set. I will tell you when the water is ready."
    async with serving(_offer(models)) as (_, host, port):
        async with client(host, port) as c:
            await c.write_event(Synthesize(reply, voice=SynthesizeVoice(name="piper-en-joe")).event())
            audio, start = _pcm(await read_until(c, "audio-stop"))
        assert (start.rate, start.width, start.channels) == (22050, 2, 1)
        assert 2.0 < len(audio) / start.rate < 10.0
        assert float(np.sqrt(np.mean(audio**2))) > 0.02
        # What hearth said, heard back by hearth's own recognizer over the same server.
        frames = soxr.resample(audio, start.rate, 16000).astype(np.float32)[:, None]
        async with client(host, port) as c:
            for event in audio_events(frames):
                await c.write_event(event)
            heard = Transcript.from_event((await read_until(c, "transcript-stop"))[-2]).text
    assert _words(heard) == _words(reply)


async def test_streamed_english_text_is_spoken_unit_by_unit(models) -> None:
    async with serving(_offer(models)) as (_, host, port):
        async with client(host, port) as c:
            await c.write_event(SynthesizeStart(voice=SynthesizeVoice(language="en")).event())
            for word in "Boil the egg for seven minutes. Then cool it in cold water, and peel it.".split(" "):
                await c.write_event(SynthesizeChunk(word + " ").event())
            await c.write_event(SynthesizeStop().event())
            got = await read_until(c, "synthesize-stopped")
    kinds = [e.type for e in got]
    assert kinds.count("audio-start") >= 2
    audio, start = _pcm(got)
    assert start.rate == 22050
    assert float(np.sqrt(np.mean(audio**2))) > 0.02


async def test_the_korean_voice_speaks_real_audio(models) -> None:
    async with serving(_offer(models)) as (_, host, port):
        async with client(host, port) as c:
            await c.write_event(Synthesize("타이머를 십 분으로 맞췄어요. 다 되면 알려 드릴게요.", voice=SynthesizeVoice(language="ko")).event())
            audio, start = _pcm(await read_until(c, "audio-stop"))
    assert (start.rate, start.width, start.channels) == (22050, 2, 1)
    assert 1.5 < len(audio) / start.rate < 15.0
    assert float(np.sqrt(np.mean(audio**2))) > 0.02


async def test_twenty_clients_at_once_are_all_heard_and_answered(models) -> None:
    """Ten speak a request and ten ask for a spoken sentence, all at once, on the real models."""
    samples, text = _request("en/boil-egg")
    sentence = "The oven is hot now."

    async def listen() -> str:
        # The decodes take turns on two cores, so the last in line waits longer than a single read usually may.
        async with AsyncTcpClient(host, port, read_timeout=60) as c:
            for event in audio_events(samples[:, None]):
                await c.write_event(event)
            return Transcript.from_event((await read_until(c, "transcript-stop"))[-2]).text

    async def speak() -> float:
        async with AsyncTcpClient(host, port, read_timeout=60) as c:
            await c.write_event(Synthesize(sentence).event())
            audio, start = _pcm(await read_until(c, "audio-stop"))
            return len(audio) / start.rate

    async with serving(_offer(models)) as (server, host, port):
        began = time.monotonic()
        results = await asyncio.gather(*(listen() for _ in range(10)), *(speak() for _ in range(10)))
        print(f"20 clients answered in {time.monotonic() - began:.1f} s")
    heard, spoken = results[:10], results[10:]
    assert all(_words(h) == _words(text) for h in heard), heard
    assert all(0.8 < s < 5.0 for s in spoken), spoken
    assert max(spoken) - min(spoken) < 0.5  # the same sentence, whole every time
