"""The echo bench's own measures, on made-up clips."""

from __future__ import annotations

import numpy as np

from bench.echo import _after_steps, speech_onset, step_before

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


def test_path_steps_are_spread_over_the_run_each_with_trials_after_it() -> None:
    assert step_before(64, 0) == []
    steps = step_before(64, 3)
    assert len(steps) == 3 and steps == sorted(steps)
    assert steps[0] > 1 and steps[-1] < 63, "converged before the first, trials after the last"
    gaps = [b - a for a, b in zip([0, *steps], [*steps, 64])]
    assert max(gaps) - min(gaps) <= 2, "evenly spread"
    assert step_before(1, 3) == []


def test_the_trials_just_after_a_step_are_counted_apart() -> None:
    quiet = [
        {"after_step": None, "onsets": 1},  # before any step: not counted
        {"after_step": 0, "onsets": 2},
        {"after_step": 2, "onsets": 0},
        {"after_step": 3, "onsets": 5},  # past the three trials after it
    ]
    spoken = [
        {"kind": "stop", "after_step": 1, "stop_word": True, "new_turn": False},
        {"kind": "stop", "after_step": 0, "stop_word": False, "new_turn": True},
        {"kind": "human", "after_step": 0, "stop_word": False, "new_turn": True},
    ]
    assert _after_steps(quiet, spoken) == {
        "after": 3, "replies_after": 2, "false_barge_ins_after": 2, "stops_after": 2, "stops_heard_after": 1,
    }
