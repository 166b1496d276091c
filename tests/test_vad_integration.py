"""Silero VAD through sherpa-onnx on the real model: speech regions, offsets, chunking, reset."""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import pytest

import audio.vad as vad_module
from audio.protocols import VadEvent
from audio.vad import SileroVad, VadSettings
from tests.speech import RATE, espeak, silence

pytestmark = pytest.mark.integration


def speech_bounds(samples: np.ndarray, level: float = 0.01) -> tuple[int, int]:
    loud = np.flatnonzero(np.abs(samples) > level)
    return int(loud[0]), int(loud[-1])


def feed(vad: SileroVad, samples: np.ndarray, chunk: int) -> list[VadEvent]:
    events: list[VadEvent] = []
    for i in range(0, len(samples), chunk):
        events += vad.accept(samples[i : i + chunk])
    return events


@pytest.fixture(scope="module")
def speech(tmp_path_factory: pytest.TempPathFactory) -> np.ndarray:
    return espeak("set a timer for ten minutes", "en-us", tmp_path_factory.mktemp("vad"))


@pytest.fixture
def vad(model_path) -> SileroVad:
    detector = SileroVad(VadSettings(model_path("silero-vad/silero_vad.onnx")))
    detector.load()
    return detector


def test_one_region_where_the_speech_is(vad: SileroVad, speech: np.ndarray) -> None:
    lead, tail = 1.0, 1.0
    audio = np.concatenate([silence(lead), speech, silence(tail)])
    first, last = speech_bounds(speech)
    events = feed(vad, audio, 1600)
    assert [e.speech for e in events] == [True, False]
    start, stop = events[0].sample, events[1].sample
    onset, offset = int(lead * RATE) + first, int(lead * RATE) + last
    # The detector backdates its start by ~0.3 s of padding and may trigger a little late.
    assert onset - 0.4 * RATE <= start <= onset + 0.3 * RATE
    assert offset - 0.3 * RATE <= stop <= offset + 0.4 * RATE
    assert vad.flush() == []


@pytest.mark.parametrize("chunk", [1, 333, 512, 4000, 10**6])
def test_events_do_not_depend_on_chunk_size(vad: SileroVad, speech: np.ndarray, chunk: int) -> None:
    audio = np.concatenate([silence(0.7), speech, silence(1.0)])
    if chunk == 1:
        audio = audio[: 3 * RATE]  # a sample at a time is slow in Python; 3 s is enough
    reference = feed(vad, audio, 512)
    vad.reset()
    assert feed(vad, audio, chunk) == reference
    assert vad.position == len(audio)


@pytest.mark.parametrize("kind", ["zeros", "hiss", "hum"])
def test_no_speech_in_silence_or_steady_noise(vad: SileroVad, kind: str) -> None:
    n = 5 * RATE
    rng = np.random.default_rng(7)
    audio = {
        "zeros": np.zeros(n, dtype=np.float32),
        "hiss": rng.normal(0.0, 0.03, n).astype(np.float32),
        "hum": (0.1 * np.sin(2 * np.pi * 50 * np.arange(n) / RATE)).astype(np.float32),
    }[kind]
    assert feed(vad, audio, 1024) == []
    assert vad.flush() == []


def test_offsets_count_from_stream_start_across_utterances(vad: SileroVad, speech: np.ndarray) -> None:
    gap = 2.0
    audio = np.concatenate([silence(0.5), speech, silence(gap), speech, silence(1.0)])
    events = feed(vad, audio, 1600)
    assert [e.speech for e in events] == [True, False, True, False]
    second_start = int((0.5 + gap) * RATE) + len(speech)
    assert abs(events[2].sample - events[0].sample - (second_start - int(0.5 * RATE))) < 0.4 * RATE
    assert all(a.sample < b.sample for a, b in pairwise(events))


def test_reset_starts_offsets_from_zero(vad: SileroVad, speech: np.ndarray) -> None:
    audio = np.concatenate([silence(0.5), speech, silence(1.0)])
    first = feed(vad, audio, 1600)
    vad.reset()
    assert vad.position == 0
    assert feed(vad, audio, 1600) == first


def test_flush_closes_open_speech_at_the_current_position(vad: SileroVad, speech: np.ndarray) -> None:
    audio = np.concatenate([silence(0.5), speech])
    events = feed(vad, audio, 1600)
    assert [e.speech for e in events] == [True]
    assert vad.in_speech
    assert vad.flush() == [VadEvent(speech=False, sample=len(audio))]
    assert not vad.in_speech


def test_native_rebase_keeps_offsets(
    vad: SileroVad, speech: np.ndarray, monkeypatch: pytest.MonkeyPatch, model_path
) -> None:
    audio = np.concatenate([silence(0.5), speech, silence(3.0), speech, silence(1.0)])
    reference = feed(vad, audio, 1600)
    # Rebase (native reset during silence) after every 2 s instead of every ~18 hours.
    monkeypatch.setattr(vad_module, "_REBASE_AFTER_SAMPLES", 2 * RATE)
    rebased = SileroVad(VadSettings(model_path("silero-vad/silero_vad.onnx")))
    events = feed(rebased, audio, 1600)
    assert [e.speech for e in events] == [e.speech for e in reference]
    # The model's recurrent state restarts, which can move an onset by a few hundred ms
    # (a fresh detector started at the same point does the same); the ends stay put.
    for got, want in zip(events, reference, strict=True):
        tolerance = 0.4 * RATE if got.speech else 3 * 512
        assert abs(got.sample - want.sample) <= tolerance
