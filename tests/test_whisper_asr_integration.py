"""Whisper recognizer on the real tiny.en and base models, on espeak-ng speech and a recorded request."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from pathlib import Path

import numpy as np
import pytest

from audio.protocols import AudioChunk, Transcript
from audio.whisper_asr import WhisperRecognizer, WhisperSettings
from tests.speech import RATE, espeak, silence
from tests.test_whisper_asr import assert_well_formed, chunks_of, collect

pytestmark = pytest.mark.integration


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


async def test_tiny_en_transcribes_a_command(tiny_en: WhisperRecognizer, speech_dir: Path) -> None:
    reference = "set a timer for ten minutes"
    audio = np.concatenate([silence(0.5), espeak(reference, "en-us", speech_dir), silence(0.5)])
    transcripts = await collect(tiny_en.transcribe(chunks_of(audio, 0.25)))
    assert_well_formed(transcripts)
    final = transcripts[-1].text
    words = normalized_words(final)
    assert "timer" in words and "ten" in words, final
    assert word_error_rate(reference, final) <= 0.34, final


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


def test_english_only_model_refuses_korean(model_path) -> None:
    recognizer = WhisperRecognizer(WhisperSettings(model_dir=model_path("whisper-tiny-en"), language="ko"))
    with pytest.raises(ValueError, match="English-only"):
        recognizer.load()


async def test_base_transcribes_korean_as_hangul(base_ko: WhisperRecognizer, speech_dir: Path) -> None:
    audio = np.concatenate([silence(0.3), espeak("타이머를 십 분으로 맞춰 주세요", "ko", speech_dir), silence(0.3)])
    transcripts = await collect(base_ko.transcribe(chunks_of(audio, 0.5)))
    assert_well_formed(transcripts)
    final = transcripts[-1].text
    hangul = re.findall(r"[\uac00-\ud7a3]", final)
    letters = re.findall(r"\w", final)
    assert hangul and len(hangul) >= 0.8 * len(letters), final


async def test_base_gives_a_korean_finals_n_best_best_first(base_ko: WhisperRecognizer, speech_dir: Path) -> None:
    """The reply listener's n best on the real model: checked texts with their scores, the best
    first; a request the model hears clearly has no stop phrase near its best."""
    from agent.listening.barge_in import ReplySettings
    from agent.listening.stop_words import PROMPTS, stop_among

    audio = np.concatenate([silence(0.3), espeak("타이머를 십 분으로 맞춰 주세요", "ko", speech_dir), silence(0.3)])
    transcripts = await collect(base_ko.transcribe(chunks_of(audio, 0.5), PROMPTS["ko"], hypotheses=5))
    final = transcripts[-1]
    assert final.is_final and 2 <= len(final.alternatives) <= 5, final
    assert final.alternatives[0][0] == final.text
    scores = [score for _, score in final.alternatives]
    assert scores == sorted(scores, reverse=True) and all(-5.0 < score < 0.0 for score in scores), scores
    assert stop_among(final.alternatives, ReplySettings().stop_margin) is None, final.alternatives


@pytest.mark.parametrize("kind", ["dither", "hiss"])
async def test_base_korean_no_speech_gives_an_empty_final(base_ko: WhisperRecognizer, kind: str) -> None:
    # Measured: on faint noise base/ko loops "이 영상은 영상에서 영상에서 ..."; on loud hiss it says "이 영상은".
    rng = np.random.default_rng(5)
    level = {"dither": 0.0015, "hiss": 0.1}[kind]
    audio = rng.normal(0.0, level, 2 * RATE).astype(np.float32)
    transcripts = await collect(base_ko.transcribe(chunks_of(audio, 0.5)))
    assert [t.text for t in transcripts] == [""]


def test_a_fitted_encoder_window_still_hears_the_command(model_path, speech_dir: Path) -> None:
    audio = np.concatenate([silence(0.3), espeak("set a timer for ten minutes", "en-us", speech_dir), silence(0.3)])
    texts = {}
    for window in ("full", "fit"):
        recognizer = WhisperRecognizer(WhisperSettings(model_path("whisper-tiny-en"), final_window=window))
        recognizer.load()
        texts[window] = recognizer.decode(audio)
    for text in texts.values():
        words = re.findall(r"\w+", text.lower())
        assert "timer" in words and ("10" in words or "ten" in words) and "minutes" in words, texts
