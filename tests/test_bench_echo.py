"""The echo bench's own measures, on made-up clips."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from audio.protocols import AudioChunk
from bench.echo.listening import _after_steps, _KeepingWhatItHears, speech_onset, step_before
from tests.fakes import ScriptedRecognizer

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


async def test_what_the_reply_listener_decodes_is_kept_exactly_and_a_turns_audio_is_not(tmp_path: Path) -> None:
    kept = _KeepingWhatItHears(ScriptedRecognizer("그만해."), tmp_path)
    said = word(0.4, 0.1)

    async def audio():
        for i in range(0, len(said), 1600):
            yield AudioChunk(said[i : i + 1600], RATE)

    finals = [t.text async for t in kept.transcribe(audio(), "그만.", hypotheses=5) if t.is_final]
    assert finals == ["그만해."]
    assert np.array_equal(np.load(tmp_path / "en-001.npy"), said)
    assert json.loads((tmp_path / "en-001.json").read_text())["text"] == "그만해."
    assert (tmp_path / "en-001.wav").stat().st_size > 2 * len(said)

    finals = [t.text async for t in kept.transcribe(audio(), "") if t.is_final]
    assert finals == ["그만해."]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["en-001.json", "en-001.npy", "en-001.wav"]
