"""Speech synthesis on the real voices: the piper voice through sherpa-onnx, and espeak-ng for Korean."""

from __future__ import annotations

import asyncio
import json

import numpy as np
import pytest

from audio.espeak_tts import EspeakSettings, EspeakSynthesizer
from audio.piper_tts import PiperSettings, PiperSynthesizer
from audio.protocols import AudioChunk, Synthesizer
from tests.test_tts import SHERPA_KEYS, onnx_metadata

pytestmark = pytest.mark.integration


async def collect(synth: Synthesizer, text: str) -> list[AudioChunk]:
    return [chunk async for chunk in synth.synthesize(text)]


def joined(chunks: list[AudioChunk]) -> np.ndarray:
    return np.concatenate([c.samples for c in chunks]) if chunks else np.zeros(0, np.float32)


def rms(samples: np.ndarray) -> float:
    return float(np.sqrt(np.mean(np.square(samples, dtype=np.float64)))) if len(samples) else 0.0


@pytest.fixture(scope="module")
def joe(model_path) -> PiperSynthesizer:
    synth = PiperSynthesizer(
        PiperSettings(voice_dir=model_path("piper-en-joe"), espeak_bridge=model_path("espeak-ng/espeakbridge.so"))
    )
    asyncio.run(synth.load())
    asyncio.run(synth.warm())
    return synth


@pytest.fixture(scope="module")
def korean() -> EspeakSynthesizer:
    synth = EspeakSynthesizer(EspeakSettings(voice="ko", language="ko"))
    asyncio.run(synth.load())
    return synth


def test_installed_voice_has_every_symbol_and_the_metadata(model_path) -> None:
    voice = model_path("piper-en-joe")
    config = json.loads((voice / "model.onnx.json").read_text(encoding="utf-8"))
    lines = (voice / "tokens.txt").read_text(encoding="utf-8").splitlines()
    symbols = {(line.split()[0] if len(line.split()) == 2 else " ") for line in lines}
    assert symbols == {s for s in config["phoneme_id_map"] if s != "\n"}
    meta = onnx_metadata(voice / "model.onnx")
    assert SHERPA_KEYS <= meta.keys()
    assert int(meta["sample_rate"]) == config["audio"]["sample_rate"]


async def test_joe_says_a_timer_sentence(joe: PiperSynthesizer) -> None:
    assert isinstance(joe, Synthesizer)
    chunks = await collect(joe, "Set a timer for ten minutes.")
    assert chunks
    assert all(c.sample_rate == 22050 and c.samples.dtype == np.float32 and c.samples.ndim == 1 for c in chunks)
    audio = joined(chunks)
    assert 0.8 <= len(audio) / 22050 <= 4.0
    assert rms(audio) > 0.02
    assert np.max(np.abs(audio)) <= 1.0


async def test_joe_yields_one_chunk_per_sentence(joe: PiperSynthesizer) -> None:
    chunks = await collect(joe, "The oven is hot. Put the tray in now! Is the timer on?")
    assert len(chunks) == 3
    assert all(rms(c.samples) > 0.02 for c in chunks)


@pytest.mark.parametrize("text", ["", "   ", "...", "?!", " , ; ", "🍕", "\n\t"])
async def test_nothing_to_say_yields_nothing(
    joe: PiperSynthesizer, korean: EspeakSynthesizer, text: str
) -> None:
    assert await collect(joe, text) == []
    assert await collect(korean, text) == []


@pytest.mark.parametrize(
    "text",
    [
        "It's 21°C outside.",
        "Bake at 180 ℃ for 3.5 hours 😀🍕!",
        "Call 555-0199 at 7:30, OK?",
        "Café crème brûlée (naïve).",
    ],
)
async def test_numbers_symbols_and_emoji_do_not_crash(joe: PiperSynthesizer, text: str) -> None:
    audio = joined(await collect(joe, text))
    assert len(audio) > 0.3 * 22050 and rms(audio) > 0.02


async def test_cancelling_the_consumer_stops_piper_after_the_current_sentence(
    joe: PiperSynthesizer, monkeypatch: pytest.MonkeyPatch
) -> None:
    produced: list[int] = []
    finish = joe._finish

    def counting(audio: np.ndarray) -> np.ndarray:
        produced.append(len(audio))
        return finish(audio)

    monkeypatch.setattr(joe, "_finish", counting)
    text = " ".join(f"This is sentence number {n} of a long answer." for n in range(1, 11))
    first = asyncio.Event()

    async def consume() -> None:
        async for _ in joe.synthesize(text):
            first.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(first.wait(), 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    # The worker holds the generation lock until sherpa-onnx returns.
    acquired = await asyncio.to_thread(joe._generate_lock.acquire, True, 10)
    assert acquired
    joe._generate_lock.release()
    print("sentences synthesized before stopping:", len(produced))
    assert len(produced) <= 3, f"{len(produced)} of 10 sentences synthesized after cancelling"
    # The synthesizer is still usable.
    assert await collect(joe, "Done.")


async def test_korean_espeak_speaks(korean: EspeakSynthesizer) -> None:
    assert isinstance(korean, Synthesizer)
    chunks = await collect(korean, "타이머를 십 분으로 맞췄어요.")
    assert chunks and all(c.sample_rate == 22050 and c.samples.dtype == np.float32 for c in chunks)
    audio = joined(chunks)
    assert 0.8 <= len(audio) / 22050 <= 6.0
    assert rms(audio) > 0.02


async def test_closing_the_consumer_kills_espeak(korean: EspeakSynthesizer, monkeypatch: pytest.MonkeyPatch) -> None:
    procs: list[asyncio.subprocess.Process] = []
    real_exec = asyncio.create_subprocess_exec

    async def spy(*args, **kwargs):  # type: ignore[no-untyped-def]
        proc = await real_exec(*args, **kwargs)
        procs.append(proc)
        return proc

    monkeypatch.setattr(asyncio, "create_subprocess_exec", spy)
    stream = korean.synthesize("안녕하세요. " * 400)
    first = await anext(stream)
    assert len(first.samples) > 0
    await stream.aclose()
    assert procs and procs[0].returncode is not None


async def test_espeak_speed_changes_duration() -> None:
    slow, fast = (EspeakSynthesizer(EspeakSettings(voice="ko", words_per_minute=wpm)) for wpm in (120, 240))
    text = "오늘 날씨가 좋네요."
    slow_s = len(joined(await collect(slow, text))) / 22050
    fast_s = len(joined(await collect(fast, text))) / 22050
    assert fast_s < 0.75 * slow_s
