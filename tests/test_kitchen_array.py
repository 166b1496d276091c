"""The kitchen bench with a microphone array: N-channel takes, the kitchen before the press, the
array's front ends as the loop and the hearing bench run them."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pytest

from audio.array import BOARDS, ArrayGeometry
from audio.protocols import AudioChunk
from audio.wav import read_wav, read_wav_channels, write_wav, write_wav_channels
from bench.kitchen.front_ends import array_front_end
from bench.kitchen.mix import SPEECH_DBFS, kitchen_audio, kitchen_take, mix, parse_condition
from bench.kitchen.noises import NOISES, RATE
from bench.kitchen.rooms import compute_responses, room_preset

SQUARE = BOARDS["square-65mm"]


def _request(seconds: float = 1.5, lead: float = 0.3) -> np.ndarray:
    t = np.arange(int(seconds * RATE)) / RATE
    voice = sum(np.sin(2 * np.pi * k * 140 * t) / k for k in range(1, 20)) * (np.sin(2 * np.pi * 3 * t) > -0.2)
    return np.concatenate([np.zeros(int(lead * RATE)), 0.2 * voice])


def _db(x: np.ndarray, where: np.ndarray) -> float:
    return float(10 * np.log10(np.mean(np.square(x[where]))))


def test_an_arrays_responses_have_a_row_per_microphone_arriving_as_far_apart_as_they_stand() -> None:
    room = room_preset("kitchen-a")
    responses = compute_responses(room, max_order=0, mics=SQUARE.mics)
    for name in ("talker", "hood", "shelf"):
        assert responses[name].shape[0] == 4
    peaks = [int(np.argmax(np.abs(row))) for row in responses["talker"]]
    assert max(peaks) - min(peaks) <= int(np.ceil(SQUARE.aperture_m / 343.0 * RATE)) + 1
    assert max(peaks) != min(peaks), "the talker stands to one side: its sound reaches the microphones apart"


def test_an_arrays_take_has_the_snr_on_its_first_microphone_and_the_kitchen_before_the_press() -> None:
    room = room_preset("kitchen-small")
    request = _request()
    before_s = 1.0
    heard = kitchen_audio(request, parse_condition("fan@10"), room, seed=1, max_order=2, mics=SQUARE.mics, before_s=before_s)
    assert heard.samples.shape[1] == 4 and heard.speech.shape == heard.samples.shape
    assert _db(heard.speech[:, 0], heard.voiced) == pytest.approx(SPEECH_DBFS, abs=0.1)
    assert _db(heard.speech[:, 0], heard.voiced) - _db(heard.noise[:, 0], heard.voiced) == pytest.approx(10.0, abs=0.5)
    before = int(before_s * RATE)
    assert np.abs(heard.speech[:before]).max() < 1e-9, "nobody speaks before the press"
    assert np.mean(np.square(heard.noise[:before])) > 0.3 * np.mean(np.square(heard.noise[before:]))
    assert heard.speech_start_s is not None and heard.speech_start_s > before_s + 0.3


def test_clean_is_the_dry_request_on_every_microphone() -> None:
    heard = kitchen_audio(_request(), parse_condition("clean"), room_preset("kitchen-a"), mics=SQUARE.mics)
    assert heard.samples.shape[1] == 4
    assert all(np.array_equal(heard.samples[:, 0], heard.samples[:, c]) for c in range(4))


def test_an_arrays_take_is_its_capture_with_speech_times_from_the_press(tmp_path: Path) -> None:
    geometry = ArrayGeometry("with-loopback", ((-0.03, 0, 0), (0, 0.03, 0), (0.03, 0, 0)), 5, (1, 2, 3))
    path = tmp_path / "request.wav"
    write_wav(path, AudioChunk(_request().astype(np.float32), RATE))
    room = room_preset("kitchen-small")
    mono = kitchen_take(path, parse_condition("room"), room, 0, tmp_path)
    take = kitchen_take(path, parse_condition("room"), room, 0, tmp_path, array=geometry, before_s=1.5)
    samples, rate = read_wav_channels(take.path)
    assert rate == RATE and samples.shape[1] == 5
    assert not samples[:, 0].any() and not samples[:, 4].any(), "the loopback channels are silent"
    assert take.before_s == 1.5 and mono.before_s == 0.0
    # The speech's times count from the press, as the mono take's do (the array a few cm away).
    assert take.speech_end_s == pytest.approx(mono.speech_end_s, abs=0.01)
    assert len(samples) - int(1.5 * RATE) == pytest.approx(len(read_wav(mono.path).samples), abs=2)


def test_wav_channels_round_trip(tmp_path: Path) -> None:
    samples = (np.random.default_rng(0).uniform(-0.5, 0.5, (800, 6))).astype(np.float32)
    write_wav_channels(tmp_path / "six.wav", samples, RATE)
    back, rate = read_wav_channels(tmp_path / "six.wav")
    assert rate == RATE and back.shape == (800, 6)
    np.testing.assert_allclose(back, samples, atol=2 / 32767)
    np.testing.assert_allclose(read_wav(tmp_path / "six.wav").samples, samples.mean(axis=1), atol=1e-4)


@pytest.mark.parametrize("name", ["first", "mvdr"])
def test_an_array_front_end_gives_the_turn_from_the_press_lined_up_with_the_capture(name: str) -> None:
    rng = np.random.default_rng(4)
    common = rng.standard_normal(3 * RATE) * 0.05  # one sound alike on every microphone, before and after
    samples = (common[:, None] + rng.standard_normal((3 * RATE, 4)) * 1e-4).astype(np.float32)
    hear = array_front_end(name, 4)
    heard = hear(samples, RATE)
    assert heard.shape == (2 * RATE,)
    # Nothing new to steer to: the first microphone, lined up with the capture from the press.
    np.testing.assert_allclose(heard[: 2 * RATE - 512], samples[RATE : 3 * RATE - 512, 0], atol=1e-3)


def test_an_unknown_array_front_end_fails_before_any_take() -> None:
    with pytest.raises(ValueError, match="no array front end"):
        array_front_end("delay-and-sum", 4)


class _Listener:
    """Takes a turn's audio to its end, as the loop would, and keeps it."""

    def __init__(self) -> None:
        self.heard: list[np.ndarray] = []

    async def handle(self, chunks, press):
        from agent.results import Outcome, TurnResult
        from agent.timeline import Timeline

        timeline = Timeline()
        async for chunk in chunks:
            self.heard.append(chunk.samples)
        return TurnResult(Outcome.ANSWERED, timeline, transcript="")


def test_the_bench_plays_an_arrays_take_through_its_front_end(tmp_path: Path) -> None:
    from bench.kitchen.loop import play_take

    path = tmp_path / "request.wav"
    write_wav(path, AudioChunk(_request(0.8).astype(np.float32), RATE))
    take = kitchen_take(path, parse_condition("fan@10"), room_preset("kitchen-small"), 0, tmp_path, array=SQUARE, before_s=0.5)
    listener = _Listener()
    result, true_end, cpu = asyncio.run(play_take(listener, take, array=SQUARE, front_end="mvdr"))
    assert cpu is not None and cpu > 0
    assert true_end == pytest.approx(take.speech_end_s, abs=0.1)  # from the press, not the file's start
    heard = np.concatenate(listener.heard)
    capture, _ = read_wav_channels(take.path)
    # Whole hops only: what the front end had not yet given out of the kitchen before the press comes
    # first, stamped when it was heard.
    assert len(heard) == len(capture) // 256 * 256 - int(0.5 * RATE) // 256 * 256


def test_the_mix_keeps_a_mono_take_as_it_was() -> None:
    request = _request()
    h = np.zeros(400)
    h[90] = 0.5
    dry = NOISES["fan"].make(len(request) + 2 * RATE + 400 + 1, np.random.default_rng(3))
    heard = mix(request, parse_condition("fan@10"), speech_rir=h, noise_rir=h, dry_noise=dry, delay_s=90 / RATE)
    assert heard.samples.ndim == 1 and len(heard.samples) == len(request) + 2 * RATE


def test_the_bench_plays_each_condition_through_each_front_end_interleaved(tmp_path: Path) -> None:
    from bench.loop.runner import BenchSettings, SuiteRun, parse_kitchen
    from firmware_py.config import HearthConfig

    conditions = parse_kitchen(["fan@10", "radio@10"], "kitchen-a")
    run = SuiteRun(HearthConfig(), BenchSettings(suite="tiny", out=tmp_path, kitchen=conditions, array="respeaker-4mic",
                                                 array_front_ends=("first", "mvdr")))
    assert [(arm.name, arm.front_end) for arm in run.arms] == [
        ("fan@10 first", "first"), ("fan@10 mvdr", "mvdr"), ("radio@10 first", "first"), ("radio@10 mvdr", "mvdr")]
    assert run.array is BOARDS["respeaker-4mic"]
    plain = SuiteRun(HearthConfig(), BenchSettings(suite="tiny", out=tmp_path, kitchen=conditions))
    assert [arm.front_end for arm in plain.arms] == [None, None]


def test_the_command_line_wants_kitchen_conditions_and_known_front_ends_for_an_array(capsys, tmp_path: Path) -> None:
    from firmware_py.cli import main

    assert main(["bench", "--suite", "en-kitchen", "--out", str(tmp_path), "--array", "respeaker-4mic"]) == 2
    assert "give --kitchen conditions" in capsys.readouterr().err
    assert main(["bench", "--suite", "en-kitchen", "--out", str(tmp_path), "--kitchen", "fan@10", "--array", "respeaker-4mic",
                 "--array-front-end", "gev"]) == 2
    assert "no array front end 'gev'" in capsys.readouterr().err
    assert main(["bench", "--suite", "en-kitchen", "--out", str(tmp_path), "--kitchen", "fan@10", "--array", "nine-mics"]) == 2
    assert "no array 'nine-mics'" in capsys.readouterr().err
