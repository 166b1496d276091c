"""The hearing weighed on the real recognizer: a request heard clean, and over an extractor fan."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from agent.listening.hearing import weigh
from audio.levels import speech_snr_db
from audio.wav import read_wav
from audio.whisper_asr import WhisperRecognizer, WhisperSettings
from bench.kitchen.mix import kitchen_audio, parse_condition

pytestmark = pytest.mark.integration

RATE = 16000
PANCAKES = Path(__file__).parent / "data" / "find-me-a-recipe-for-pancakes.wav"


@pytest.fixture(scope="module")
def tiny_en(model_path) -> WhisperRecognizer:
    recognizer = WhisperRecognizer(WhisperSettings(model_dir=model_path("whisper-tiny-en"), language="en"))
    recognizer.load()
    return recognizer


def _heard(recognizer: WhisperRecognizer, condition: str, tmp_path: Path):
    take = kitchen_audio(read_wav(PANCAKES, RATE).samples, parse_condition(condition), seed=3, cache_dir=tmp_path)
    start, end = int(take.speech_start_s * RATE), int(take.speech_end_s * RATE)
    final = recognizer.final(take.samples[max(0, start - 4800) : end + 4000], "recipe, timer, shopping list")
    return final, weigh(final, speech_snr_db(take.samples, RATE, (start, end)))


def test_the_final_carries_the_decoders_scores(tiny_en: WhisperRecognizer, tmp_path: Path) -> None:
    final, hearing = _heard(tiny_en, "clean", tmp_path)
    assert "pancake" in final.text.lower()
    assert final.avg_logprob is not None and -1.0 < final.avg_logprob <= 0.0
    assert final.no_speech_prob is not None and 0.0 <= final.no_speech_prob < 0.5
    assert hearing.snr_db is not None and hearing.snr_db > 30.0  # synthesized into digital silence
    assert hearing.verdict == "sure", hearing


def test_over_a_loud_fan_the_hearing_is_not_sure(tiny_en: WhisperRecognizer, tmp_path: Path) -> None:
    _, clean = _heard(tiny_en, "clean", tmp_path)
    final, noisy = _heard(tiny_en, "fan@-5", tmp_path)
    assert noisy.snr_db is not None and noisy.snr_db < 5.0
    assert noisy.confidence < clean.confidence
    assert noisy.verdict != "sure", (final.text, noisy)


def test_silence_is_not_decoded_and_reads_as_no_speech(tiny_en: WhisperRecognizer) -> None:
    final = tiny_en.final(np.zeros(RATE, np.float32))
    assert final.text == "" and final.no_speech_prob == 1.0
    assert weigh(final, None).verdict == "unheard"
