"""Whisper recognizer: stable-prefix policy, scheduling and cancellation (scripted decoder),
hallucination filter, and real tiny.en / base models on espeak-ng speech."""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from audio.protocols import AudioChunk, Recognizer, Transcript
from audio.whisper_asr import (
    StablePrefix,
    WhisperRecognizer,
    WhisperSettings,
    filter_hypothesis,
    is_silence,
)

from tests.speech import RATE, espeak, silence
SCRIPT = "set a timer for ten minutes please".split()


# -- helpers ---------------------------------------------------------------------------------






async def chunks_of(samples: np.ndarray, chunk_s: float = 0.1, pause_s: float = 0.0) -> AsyncIterator[AudioChunk]:
    step = int(chunk_s * RATE)
    for i in range(0, len(samples), step):
        yield AudioChunk(samples[i : i + step], RATE)
        await asyncio.sleep(pause_s)


async def collect(stream: AsyncIterator[Transcript]) -> list[Transcript]:
    return [t async for t in stream]


def assert_well_formed(transcripts: list[Transcript]) -> None:
    """Exactly one final, last; every stable prefix survives in every later transcript."""
    assert transcripts and transcripts[-1].is_final
    assert not any(t.is_final for t in transcripts[:-1])
    for i, earlier in enumerate(transcripts):
        prefix = earlier.text[: earlier.stable_chars]
        for later in transcripts[i + 1 :]:
            assert later.text.startswith(prefix), (earlier, later)
            assert later.stable_chars >= earlier.stable_chars


def normalized_words(text: str) -> list[str]:
    numbers = {"10": "ten", "5": "five", "2": "two"}
    words = re.sub(r"[^\w\s]", " ", text.lower()).split()
    return [numbers.get(w, w) for w in words]


def word_error_rate(reference: str, hypothesis: str) -> float:
    ref, hyp = normalized_words(reference), normalized_words(hypothesis)
    d = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, 1):
        prev, d[0] = d[0], i
        for j, h in enumerate(hyp, 1):
            prev, d[j] = d[j], min(d[j] + 1, d[j - 1] + 1, prev + (r != h))
    return d[len(hyp)] / len(ref)


class ScriptedDecoder:
    """Reveals one more word of SCRIPT per ``seconds_per_word`` of audio; records calls."""

    def __init__(self, seconds_per_word: float = 0.2, gate: threading.Event | None = None) -> None:
        self.seconds_per_word = seconds_per_word
        self.gate = gate
        self.calls: list[int] = []
        self.running = 0
        self.max_running = 0
        self._lock = threading.Lock()

    def __call__(self, samples: np.ndarray) -> str:
        with self._lock:
            self.calls.append(len(samples))
            self.running += 1
            self.max_running = max(self.max_running, self.running)
        try:
            if self.gate is not None:
                assert self.gate.wait(30), "test gate never opened"
            n = int(len(samples) / (RATE * self.seconds_per_word) + 1e-9)
            return " ".join(SCRIPT[:n])
        finally:
            with self._lock:
                self.running -= 1


def fake_recognizer(decode: Callable[[np.ndarray], str], interval: float = 0.05) -> WhisperRecognizer:
    settings = WhisperSettings(model_dir=Path("unused"), partial_interval_s=interval, min_partial_audio_s=0.1)
    return WhisperRecognizer(settings, decode=decode)


# -- the stable-prefix policy ------------------------------------------------------------------


def test_agreed_words_are_committed_except_the_newest_last_word() -> None:
    policy = StablePrefix()
    assert policy.update("Set a") == ("Set a", 0)
    # "Set a" agreed; "a" is not the newest hypothesis' last word, so both commit.
    assert policy.update("Set a timer") == ("Set a timer", len("Set a"))
    # Agreement on "set a timer" (case and punctuation aside) commits "timer" in its new spelling.
    assert policy.update("set a timer, for") == ("Set a timer, for", len("Set a timer,"))


def test_committed_words_are_never_retracted() -> None:
    policy = StablePrefix()
    policy.update("Set a timer for")
    policy.update("Set a timer for ten")
    assert policy.committed == "Set a timer for"
    # The model changes its mind about the beginning: the committed words stay.
    text, stable = policy.update("Said a time for ten minutes")
    assert text == "Set a timer for ten minutes"
    assert text[:stable] == "Set a timer for"
    assert policy.finalize("Said the time") == "Set a timer for"
    assert policy.finalize("Set a timer for 10 minutes.") == "Set a timer for 10 minutes."


def test_an_empty_hypothesis_keeps_the_committed_words() -> None:
    policy = StablePrefix()
    policy.update("turn off")
    policy.update("turn off the oven")
    assert policy.update("") == ("turn off", len("turn off"))
    assert policy.finalize("") == "turn off"


@given(st.lists(st.lists(st.sampled_from(["set", "Set", "a", "timer", "timer.", "ten", "10", "for"]), max_size=8)))
def test_stable_prefixes_only_grow(hypotheses: list[list[str]]) -> None:
    policy = StablePrefix()
    shown: list[Transcript] = []
    for words in hypotheses:
        text, stable = policy.update(" ".join(words))
        shown.append(Transcript(text, False, stable))
    final = policy.finalize(" ".join(hypotheses[-1]) if hypotheses else "")
    shown.append(Transcript(final, True, len(final)))
    assert_well_formed(shown)


# -- the hallucination filter --------------------------------------------------------------------


@dataclass
class Seg:
    text: str
    no_speech_prob: float
    avg_logprob: float
    compression_ratio: float = 1.0


SETTINGS = WhisperSettings(model_dir=Path("unused"))


@pytest.mark.parametrize(
    ("segments", "expected"),
    [
        # Values measured on silence and noise with tiny.en and base.
        ([Seg(" you", 0.74, -1.06)], ""),
        ([Seg(" .", 0.94, -1.24)], ""),
        ([Seg(" I'm", 0.74, -2.2)], ""),
        ([Seg(" 이 영상은", 0.73, -2.6)], ""),
        ([Seg(" 이 영상은 영상이 영상이 영상이", 0.70, -0.12, 32.9)], ""),
        ([Seg(" Thank you.", 0.55, -0.8)], ""),
        # Real speech: a short "thank you" said to the assistant, and ordinary commands.
        ([Seg(" Thank you.", 0.38, -0.17)], "Thank you."),
        ([Seg(" Set a timer for 10 minutes.", 0.24, -0.38)], "Set a timer for 10 minutes."),
        ([Seg(" 타이머 맞춰 주세요", 0.08, -1.35)], "타이머 맞춰 주세요"),
        ([Seg(" Set a timer", 0.9, -0.3), Seg(" you", 0.95, -1.5)], "Set a timer"),
        ([], ""),
    ],
)
def test_filter_hypothesis(segments: list[Seg], expected: str) -> None:
    assert filter_hypothesis(segments, SETTINGS) == expected


def test_is_silence() -> None:
    rng = np.random.default_rng(1)
    assert is_silence(silence(1.0), 0.001)
    assert is_silence(rng.normal(0, 1e-4, RATE).astype(np.float32), 0.001)
    assert not is_silence(rng.normal(0, 0.01, RATE).astype(np.float32), 0.001)
    assert is_silence(np.zeros(0, dtype=np.float32), 0.001)
    burst = silence(1.0)
    burst[8000:8400] = 0.1  # one short click is louder than the floor
    assert not is_silence(burst, 0.001)


# -- scheduling, reuse and cancellation with a scripted decoder ----------------------------------


def test_constructor_does_no_io(tmp_path: Path) -> None:
    recognizer = WhisperRecognizer(WhisperSettings(model_dir=tmp_path / "nowhere"))
    assert not recognizer.loaded
    assert isinstance(recognizer, Recognizer)
    assert recognizer.language == "en" and recognizer.sample_rate == RATE


def test_incomplete_model_directory_is_named(tmp_path: Path) -> None:
    (tmp_path / "model.bin").write_bytes(b"")
    (tmp_path / "config.json").write_text("{}")
    recognizer = WhisperRecognizer(WhisperSettings(model_dir=tmp_path))
    with pytest.raises(FileNotFoundError, match=r"missing tokenizer\.json"):
        recognizer.load()


async def test_partials_grow_and_one_final_ends() -> None:
    decoder = ScriptedDecoder()
    recognizer = fake_recognizer(decoder)
    audio = silence(1.6)
    transcripts = await collect(recognizer.transcribe(chunks_of(audio, 0.05, pause_s=0.02)))
    assert_well_formed(transcripts)
    partials = [t for t in transcripts if not t.is_final]
    assert partials, "no partial before the final"
    assert transcripts[-1].text == " ".join(SCRIPT[:8])
    assert transcripts[-1].audio_s == pytest.approx(1.6)
    assert all(t.audio_s <= 1.6 for t in partials)
    assert any(t.stable_chars > 0 for t in partials)
    assert decoder.max_running == 1


async def test_final_reuses_a_partial_that_covered_all_audio() -> None:
    decoder = ScriptedDecoder()
    recognizer = fake_recognizer(decoder)
    audio = silence(1.0)
    covered = asyncio.Event()

    async def source() -> AsyncIterator[AudioChunk]:
        async for chunk in chunks_of(audio, 0.1):
            yield chunk
        await covered.wait()  # the speaker keeps the button held until the partial is in

    transcripts: list[Transcript] = []
    async for t in recognizer.transcribe(source()):
        transcripts.append(t)
        if t.audio_s == pytest.approx(1.0):
            covered.set()
    assert_well_formed(transcripts)
    assert decoder.calls.count(len(audio)) == 1
    assert transcripts[-1].text == " ".join(SCRIPT[:5])


async def test_final_decodes_all_audio_when_partials_lag() -> None:
    decoder = ScriptedDecoder()
    recognizer = fake_recognizer(decoder, interval=60.0)  # no tick before the audio ends
    audio = silence(0.8)
    transcripts = await collect(recognizer.transcribe(chunks_of(audio, 0.1)))
    assert [t.is_final for t in transcripts] == [True]
    assert decoder.calls == [len(audio)]
    assert transcripts[0].text == " ".join(SCRIPT[:4])


async def test_busy_ticks_are_skipped_and_decodes_never_overlap() -> None:
    gate = threading.Event()
    decoder = ScriptedDecoder(gate=gate)
    recognizer = fake_recognizer(decoder, interval=0.01)
    first_call = asyncio.Event()

    async def source() -> AsyncIterator[AudioChunk]:
        yield AudioChunk(silence(0.2), RATE)
        while not decoder.calls:
            await asyncio.sleep(0.005)
        first_call.set()
        yield AudioChunk(silence(0.3), RATE)
        # Many ticks pass while the first decode is blocked.
        await asyncio.sleep(0.2)
        gate.set()

    transcripts = await collect(recognizer.transcribe(source()))
    assert first_call.is_set()
    assert decoder.max_running == 1
    # One blocked partial, then (at most one more partial and) the final of all audio.
    assert decoder.calls[0] == int(0.2 * RATE) and decoder.calls[-1] == int(0.5 * RATE)
    assert len(decoder.calls) <= 3
    assert transcripts[-1].is_final and transcripts[-1].text == " ".join(SCRIPT[:2])


async def test_cancelling_the_consumer_stops_further_decodes() -> None:
    gate = threading.Event()
    decoder = ScriptedDecoder(gate=gate)
    recognizer = fake_recognizer(decoder, interval=0.01)
    received: list[Transcript] = []

    async def consume() -> None:
        async for t in recognizer.transcribe(chunks_of(silence(30.0), 0.1, pause_s=0.01)):
            received.append(t)

    task = asyncio.create_task(consume())
    while not decoder.calls:
        await asyncio.sleep(0.005)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    calls = len(decoder.calls)
    gate.set()  # the blocked decode finishes; its result must go nowhere
    await asyncio.sleep(0.1)
    assert len(decoder.calls) == calls == 1
    assert received == []


async def test_cancelling_during_the_final_decode() -> None:
    gate = threading.Event()
    decoder = ScriptedDecoder(gate=gate)
    recognizer = fake_recognizer(decoder, interval=60.0)
    task = asyncio.create_task(collect(recognizer.transcribe(chunks_of(silence(0.5), 0.1))))
    while not decoder.calls:
        await asyncio.sleep(0.005)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    gate.set()
    await asyncio.sleep(0.05)
    assert decoder.calls == [int(0.5 * RATE)]


async def test_no_audio_gives_an_empty_final_without_decoding() -> None:
    decoder = ScriptedDecoder()
    transcripts = await collect(fake_recognizer(decoder).transcribe(chunks_of(silence(0.0))))
    assert transcripts == [Transcript("", True, 0, 0.0)]
    assert decoder.calls == []


async def test_wrong_sample_rate_is_refused() -> None:
    async def source() -> AsyncIterator[AudioChunk]:
        yield AudioChunk(silence(0.1), 48000)

    with pytest.raises(ValueError, match="48000"):
        await collect(fake_recognizer(ScriptedDecoder()).transcribe(source()))


async def test_audio_source_errors_reach_the_consumer() -> None:
    async def source() -> AsyncIterator[AudioChunk]:
        yield AudioChunk(silence(0.1), RATE)
        raise OSError("microphone unplugged")

    with pytest.raises(OSError, match="unplugged"):
        await collect(fake_recognizer(ScriptedDecoder()).transcribe(source()))


# -- real models ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def speech_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("speech")


@pytest.fixture(scope="module")
def tiny_en(model_path) -> WhisperRecognizer:
    recognizer = WhisperRecognizer(WhisperSettings(model_dir=model_path("whisper-tiny-en"), language="en"))
    recognizer.load()
    recognizer.warm()
    return recognizer


@pytest.fixture(scope="module")
def base_ko(model_path) -> WhisperRecognizer:
    recognizer = WhisperRecognizer(WhisperSettings(model_dir=model_path("whisper-base"), language="ko"))
    recognizer.load()
    recognizer.warm()
    return recognizer


@pytest.mark.integration
async def test_tiny_en_transcribes_a_command(tiny_en: WhisperRecognizer, speech_dir: Path) -> None:
    reference = "set a timer for ten minutes"
    audio = np.concatenate([silence(0.5), espeak(reference, "en-us", speech_dir), silence(0.5)])
    transcripts = await collect(tiny_en.transcribe(chunks_of(audio, 0.25)))
    assert_well_formed(transcripts)
    final = transcripts[-1].text
    words = normalized_words(final)
    assert "timer" in words and "ten" in words, final
    assert word_error_rate(reference, final) <= 0.34, final


@pytest.mark.integration
async def test_partials_arrive_while_audio_is_still_coming(tiny_en: WhisperRecognizer, speech_dir: Path) -> None:
    audio = np.concatenate([silence(0.3), espeak("please set a timer for ten minutes", "en-us", speech_dir)])
    heard_partial = asyncio.Event()
    ended_after_partial: list[bool] = []

    async def real_time() -> AsyncIterator[AudioChunk]:
        async for chunk in chunks_of(audio, 0.1, pause_s=0.1):
            yield chunk
        # Keep the "button held" with silence (up to 10 s) so a slow machine still gets a partial in.
        for _ in range(100):
            if heard_partial.is_set():
                break
            yield AudioChunk(silence(0.1), RATE)
            await asyncio.sleep(0.1)
        ended_after_partial.append(heard_partial.is_set())

    transcripts: list[Transcript] = []
    async for t in tiny_en.transcribe(real_time()):
        transcripts.append(t)
        if not t.is_final and t.text:
            heard_partial.set()
    assert_well_formed(transcripts)
    assert ended_after_partial == [True]
    assert "timer" in normalized_words(transcripts[-1].text)


@pytest.mark.integration
@pytest.mark.parametrize("kind", ["zeros", "hiss", "loud hiss", "hum"])
async def test_no_speech_gives_an_empty_final(tiny_en: WhisperRecognizer, kind: str) -> None:
    n = 2 * RATE
    rng = np.random.default_rng(3)
    audio = {
        "zeros": np.zeros(n, dtype=np.float32),
        "hiss": rng.normal(0.0, 0.01, n).astype(np.float32),
        "loud hiss": rng.normal(0.0, 0.1, n).astype(np.float32),
        "hum": (0.05 * np.sin(2 * np.pi * 50 * np.arange(n) / RATE)).astype(np.float32),
    }[kind]
    transcripts = await collect(tiny_en.transcribe(chunks_of(audio, 0.5)))
    assert [t.text for t in transcripts] == [""]


@pytest.mark.integration
def test_english_only_model_refuses_korean(model_path) -> None:
    recognizer = WhisperRecognizer(WhisperSettings(model_dir=model_path("whisper-tiny-en"), language="ko"))
    with pytest.raises(ValueError, match="English-only"):
        recognizer.load()


@pytest.mark.integration
async def test_base_transcribes_korean_as_hangul(base_ko: WhisperRecognizer, speech_dir: Path) -> None:
    audio = np.concatenate([silence(0.3), espeak("타이머를 십 분으로 맞춰 주세요", "ko", speech_dir), silence(0.3)])
    transcripts = await collect(base_ko.transcribe(chunks_of(audio, 0.5)))
    assert_well_formed(transcripts)
    final = transcripts[-1].text
    hangul = re.findall(r"[\uac00-\ud7a3]", final)
    letters = re.findall(r"\w", final)
    assert hangul and len(hangul) >= 0.8 * len(letters), final


@pytest.mark.integration
@pytest.mark.parametrize("kind", ["dither", "hiss"])
async def test_base_korean_no_speech_gives_an_empty_final(base_ko: WhisperRecognizer, kind: str) -> None:
    # Measured: on faint noise base/ko loops "이 영상은 영상에서 영상에서 ..."; on loud hiss it says "이 영상은".
    rng = np.random.default_rng(5)
    level = {"dither": 0.0015, "hiss": 0.1}[kind]
    audio = rng.normal(0.0, level, 2 * RATE).astype(np.float32)
    transcripts = await collect(base_ko.transcribe(chunks_of(audio, 0.5)))
    assert [t.text for t in transcripts] == [""]


@pytest.mark.integration
def test_a_fitted_encoder_window_still_hears_the_command(model_path, speech_dir: Path) -> None:
    audio = np.concatenate([silence(0.3), espeak("set a timer for ten minutes", "en-us", speech_dir), silence(0.3)])
    texts = {}
    for window in ("full", "fit"):
        recognizer = WhisperRecognizer(WhisperSettings(model_path("whisper-tiny-en"), window=window))
        recognizer.load()
        texts[window] = recognizer.decode(audio)
    for text in texts.values():
        words = re.findall(r"\w+", text.lower())
        assert "timer" in words and ("10" in words or "ten" in words) and "minutes" in words, texts
