"""Every word of every en-kitchen request survives the loop's recognizer (real Whisper tiny.en).

The recognizer is built by the same wiring the appliance uses (its windows, its prompt of
kitchen words), fed each request in chunks with partials decoded on the way, and its final
is compared with a reference: the same audio decoded once in Whisper's full window with no
prompt.  A request that loses a word at its end fails the test, on whatever CPU it runs.
Budget: about two minutes on two cores (78 requests, two decodes each and their partials).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import numpy as np
import pytest

from agent.listening.speech_context import SpeechContext
from audio.protocols import AudioChunk
from audio.wav import read_wav
from audio.whisper_asr import WhisperRecognizer, WhisperSettings
from bench.suites.audio import AudioSettings, turn_audio
from bench.suites.scenarios import load_suite
from bench.suites.scoring import dropped_words
from firmware_py.config import HearthConfig
from firmware_py.wiring import make_recognizer
from models.store import ModelStore

pytestmark = pytest.mark.integration


async def _chunks(samples: np.ndarray, rate: int = 16000) -> AsyncIterator[AudioChunk]:
    step = rate // 10
    for start in range(0, len(samples), step):
        yield AudioChunk(samples[start : start + step], rate)
        await asyncio.sleep(0.02)  # a few partial decodes on the way, as in the loop


async def test_no_en_kitchen_request_loses_a_word_at_its_end(models_dir: Path, model_path) -> None:
    model_path("whisper-tiny-en/model.bin")
    config = HearthConfig(models_dir=models_dir, asr={"partial_interval_s": 0.1})
    loop_recognizer = make_recognizer(config, ModelStore(models_dir))
    reference = WhisperRecognizer(WhisperSettings(model_dir=models_dir / "whisper-tiny-en", final_window="full"))
    loop_recognizer.load()
    reference.load()
    context = SpeechContext("en")()
    suite = load_suite("en-kitchen")
    settings = AudioSettings(models_dir=models_dir)
    lost: list[str] = []
    turns = 0
    for scenario in suite.scenarios:
        for path in turn_audio(suite, scenario, settings):
            samples = read_wav(path, 16000).samples
            transcripts = [t async for t in loop_recognizer.transcribe(_chunks(samples), context)]
            final = transcripts[-1].text
            expected = await asyncio.to_thread(reference.decode, samples)
            dropped, at_end = dropped_words(expected, final)
            turns += 1
            if at_end:
                lost.append(f"{scenario.id}: {expected!r} heard as {final!r}")
    assert turns >= 78
    assert lost == [], "requests lost their last words:\n" + "\n".join(lost)
