"""The echo bench's own measures, on made-up clips."""

from __future__ import annotations

import numpy as np

from bench.echo import speech_onset

RATE = 16000


def word(seconds: float, rms: float) -> np.ndarray:
    t = np.arange(int(seconds * RATE)) / RATE
    return (np.sqrt(2) * rms * np.sin(2 * np.pi * 200 * t)).astype(np.float32)


def test_a_recordings_room_noise_is_not_the_start_of_speech() -> None:
    rng = np.random.default_rng(3)
    pad = np.zeros(int(0.2 * RATE), np.float32)
    hiss = (0.05 * 10 ** (-30 / 20) * rng.standard_normal(int(0.35 * RATE))).astype(np.float32)  # -30 dB
    clip = np.concatenate([pad, hiss, word(0.5, 0.05), hiss])
    assert abs(speech_onset(clip) - 0.55) <= 0.01


def test_a_clean_clip_starts_at_its_first_sound() -> None:
    pad = np.zeros(int(0.2 * RATE), np.float32)
    clip = np.concatenate([pad, word(0.1, 0.005), word(0.4, 0.05)])  # a soft start, 20 dB down
    assert abs(speech_onset(clip) - 0.2) <= 0.01
