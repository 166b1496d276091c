"""The kitchen on the bench: its sounds, its rooms, the mix, the conditions, and what a turn is scored by.

No models and no real time: the sounds are synthesized, the rooms' image order is kept small, and
the two human voices are stood in for by a synthetic one (the real readings come from a registry
wheel, which the fast lane does not fetch).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy.signal import welch

from bench.kitchen import noises
from bench.kitchen.mix import (
    NOISE_ONLY_S, SPEECH_DBFS, Condition, ConditionError, kitchen_audio, kitchen_take, mix, parse_condition, parse_conditions,
)
from bench.kitchen.noises import NOISES, RATE
from bench.kitchen.rooms import PRESETS, compute_responses, room_preset

SECONDS = 6


@pytest.fixture(autouse=True)
def stand_in_voices(monkeypatch):
    """A synthetic reader for the radio and the second person: vowels at a wandering pitch, with pauses."""
    def reading(name: str) -> np.ndarray:
        rng = np.random.default_rng(len(name))
        t = np.arange(8 * RATE) / RATE
        pitch = 120 + 30 * np.sin(2 * np.pi * 0.7 * t)
        voice = sum(np.sin(2 * np.pi * k * np.cumsum(pitch) / RATE) / k for k in range(1, 30) if k * 150 < 7000)
        syllables = (np.sin(2 * np.pi * 4 * t) > -0.3) & (rng.random(len(t)) > -1)
        return voice * syllables * (np.sin(2 * np.pi * 0.4 * t) > -0.6)

    monkeypatch.setattr(noises, "recording", reading)


def _psd(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return welch(x, RATE, nperseg=4096)


def _share(f: np.ndarray, p: np.ndarray, lo: float, hi: float) -> float:
    return float(p[(f >= lo) & (f < hi)].sum() / p.sum())


def _frames(x: np.ndarray, ms: int = 10) -> np.ndarray:
    n = RATE * ms // 1000
    return np.sqrt(np.mean(np.square(x[: len(x) // n * n].reshape(-1, n)), axis=1))


# -- the sounds ------------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", sorted(NOISES))
def test_every_sound_is_seeded_deterministic_finite_and_unit_level(kind: str):
    make = NOISES[kind].make
    a = make(SECONDS * RATE, np.random.default_rng(7))
    b = make(SECONDS * RATE, np.random.default_rng(7))
    c = make(SECONDS * RATE, np.random.default_rng(8))
    assert len(a) == SECONDS * RATE and np.isfinite(a).all()
    assert np.array_equal(a, b), "the same seed must give the same sound"
    assert not np.allclose(a, c), "another seed must give another excerpt"
    assert np.sqrt(np.mean(a ** 2)) == pytest.approx(1.0, rel=1e-6)


def test_the_fan_is_low_with_its_blade_pass_tone_standing_out():
    x = NOISES["fan"].make(SECONDS * RATE, np.random.default_rng(1))
    f, p = _psd(x)
    assert _share(f, p, 0, 1000) > 0.7
    # The blade-pass tone (5-7 blades at 2700-3000 rpm: 225-350 Hz) stands 10 dB over the flow around it.
    around = (f > 200) & (f < 380)
    assert 10 * np.log10(p[around].max() / np.median(p[around])) > 10
    assert 225 <= f[around][np.argmax(p[around])] <= 350


def test_the_fridge_hums_below_400_hz():
    f, p = _psd(NOISES["fridge"].make(SECONDS * RATE, np.random.default_rng(1)))
    assert _share(f, p, 0, 400) > 0.9
    assert 90 <= f[np.argmax(p)] <= 110  # twice the mains


def test_running_water_is_broadband_leaning_high():
    f, p = _psd(NOISES["tap"].make(SECONDS * RATE, np.random.default_rng(1)))
    assert _share(f, p, 1000, 8000) > 0.6
    for lo, hi in ((500, 1000), (1000, 2000), (2000, 4000), (4000, 8000)):
        assert _share(f, p, lo, hi) > 0.03, f"no energy at {lo}-{hi} Hz"


def test_frying_is_a_high_hiss_with_crackles():
    x = NOISES["sizzle"].make(SECONDS * RATE, np.random.default_rng(1))
    f, p = _psd(x)
    assert _share(f, p, 1500, 8000) > 0.9
    # Crackles: far heavier tails than Gaussian hiss (excess kurtosis 0).
    assert np.mean(x ** 4) / np.mean(x ** 2) ** 2 - 3 > 3


@pytest.mark.parametrize("kind", ["dishes", "knife"])
def test_impulsive_sounds_are_sparse(kind: str):
    assert NOISES[kind].impulsive
    frames = _frames(NOISES[kind].make(SECONDS * RATE, np.random.default_rng(1)))
    assert np.mean(frames < 0.1 * frames.max()) > 0.5, "most of the time it is quiet"


def test_the_knife_chops_three_or_four_times_a_second():
    frames = _frames(NOISES["knife"].make(20 * RATE, np.random.default_rng(3)))
    envelope = frames - frames.mean()
    corr = np.correlate(envelope, envelope, "full")[len(envelope) - 1:]
    lag_s = (np.argmax(corr[20:60]) + 20) / 100  # 0.2-0.6 s
    assert 0.24 <= lag_s <= 0.34


def test_dishes_ring_with_partials_above_a_kilohertz():
    f, p = _psd(NOISES["dishes"].make(SECONDS * RATE, np.random.default_rng(2)))
    assert _share(f, p, 600, 8000) > 0.8


def test_music_has_a_beat_and_a_small_speakers_band():
    x = NOISES["music"].make(12 * RATE, np.random.default_rng(4))
    f, p = _psd(x)
    assert _share(f, p, 0, 80) < 0.05
    frames = _frames(x, 10)
    envelope = frames - frames.mean()
    corr = np.correlate(envelope, envelope, "full")[len(envelope) - 1:]
    beat = (np.argmax(corr[40:70]) + 40) / 100  # 96-126 bpm: 0.48-0.63 s
    assert 0.46 <= beat <= 0.65


def test_the_radio_is_a_voice_through_a_small_speaker():
    f, p = _psd(NOISES["radio"].make(SECONDS * RATE, np.random.default_rng(1)))
    assert _share(f, p, 0, 200) < 0.05 and _share(f, p, 5500, 8000) < 0.05


# -- the rooms ------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(PRESETS))
def test_every_preset_puts_everyone_inside_and_the_user_at_the_distance(name: str):
    room = PRESETS[name]
    points = [room.mic, room.talker, *(where for _, where in room.spots)]
    for point in points:
        assert all(0.1 <= point[i] <= room.size_m[i] - 0.1 for i in range(3)), point
    assert math.dist(room.talker, room.mic) == pytest.approx(room.talker_m, abs=0.01)
    assert 0.3 <= room.rt60_s <= 0.8 and 0.5 <= room.talker_m <= 3.0
    assert {kind.spot for kind in NOISES.values()} <= {spot for spot, _ in room.spots}


def test_responses_arrive_at_the_flight_time_and_fall_with_distance():
    room = room_preset("kitchen-a")
    responses = compute_responses(room, max_order=0)
    peaks = {}
    for name, where in [("talker", room.talker), *room.spots]:
        distance = math.dist(where, room.mic)
        h = responses[name]
        assert abs(int(np.argmax(np.abs(h))) - distance / 343 * RATE) <= 1.5
        peaks[name] = (distance, np.abs(h).max())
    (d1, a1), (d2, a2) = peaks["talker"], peaks["fridge"]
    assert a1 / a2 == pytest.approx(d2 / d1, rel=0.15)


def test_a_room_unknown_is_refused_in_one_line():
    with pytest.raises(ValueError, match="no room 'kitchen-z' \\(known: kitchen-a") as caught:
        room_preset("kitchen-z")
    assert "\n" not in str(caught.value)


# -- conditions -----------------------------------------------------------------------------------

def test_conditions_parse():
    assert parse_condition("clean") == Condition("clean", room=False)
    assert parse_condition("room") == Condition("room", room=True)
    assert parse_condition("fan@10") == Condition("fan@10", room=True, noise="fan", snr_db=10.0)
    assert parse_condition("tap@-5") == Condition("tap@-5", room=True, noise="tap", snr_db=-5.0)
    assert parse_condition("radio@7.5").snr_db == 7.5
    only = parse_condition("noise-only:fan@10")
    assert (only.name, only.noise, only.speech, only.room) == ("noise-only:fan@10", "fan", False, True)
    assert [c.name for c in parse_conditions(["clean", "fan@10.0"])] == ["clean", "fan@10"]


@pytest.mark.parametrize("bad", ["fann@10", "fan", "fan@ten", "noise-only:clean", "noise-only:fan", "fan@100", "clean@10", "", "FAN@10"])
def test_bad_conditions_are_refused_in_one_line(bad: str):
    with pytest.raises(ConditionError) as caught:
        parse_condition(bad)
    assert "\n" not in str(caught.value) and repr(bad) in str(caught.value)


def test_a_condition_given_twice_is_refused():
    with pytest.raises(ConditionError, match="fan@10 given twice"):
        parse_conditions(["fan@10", "clean", "fan@10.0"])


def test_the_command_line_refuses_a_bad_condition_in_one_line(capsys, tmp_path: Path):
    from firmware_py.cli import main

    suite = tmp_path / "tiny.yaml"
    suite.write_text("suite: tiny\nlanguage: en\ndescription: x\nscenarios:\n"
                     "  - {id: thanks, text: Thank you., category: chitchat, expect: []}\n")
    assert main(["bench", "--suite", str(suite), "--kitchen", "clean", "fann@10", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("hearth bench: kitchen condition 'fann@10'") and "\n" not in err
    assert main(["bench", "--suite", str(suite), "--kitchen", "clean", "--room", "attic", "--out", str(tmp_path)]) == 2
    assert "no room 'attic'" in capsys.readouterr().err


# -- the mix --------------------------------------------------------------------------------------

def _request(seconds: float = 2.0, lead: float = 0.4) -> np.ndarray:
    """A stand-in request: silence, then 'syllables' of a harmonic voice, at a level of its own."""
    t = np.arange(int(seconds * RATE)) / RATE
    voice = sum(np.sin(2 * np.pi * k * 140 * t) / k for k in range(1, 20))
    voice *= np.sin(2 * np.pi * 3 * t) > -0.2
    return np.concatenate([np.zeros(int(lead * RATE)), 0.2 * voice])


def _decaying_response(seconds: float, delay: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    h = 0.05 * rng.standard_normal(int(seconds * RATE)) * np.exp(-np.arange(int(seconds * RATE)) / (0.06 * RATE))
    h[:delay] = 0
    h[delay] = 0.5
    return h


def _level_db(x: np.ndarray, where: np.ndarray) -> float:
    return 10 * np.log10(np.mean(np.square(x[where.astype(bool)])))


@pytest.mark.parametrize("kind,snr", [("fan", 10.0), ("tap", 0.0), ("sizzle", 5.0), ("music", 20.0), ("radio", 10.0)])
def test_the_mix_hits_the_snr_over_the_speech_and_puts_speech_at_minus_26_dbfs(kind: str, snr: float):
    request = _request()
    speech_rir, noise_rir = _decaying_response(0.3, 93, 1), _decaying_response(0.3, 140, 2)
    trailing = 2.0
    dry = NOISES[kind].make(len(request) + int(trailing * RATE) + len(noise_rir) + 1, np.random.default_rng(3))
    heard = mix(request, parse_condition(f"{kind}@{snr:g}"), speech_rir=speech_rir, noise_rir=noise_rir, dry_noise=dry,
                delay_s=93 / RATE, trailing_s=trailing)
    voiced = heard.voiced
    assert _level_db(heard.speech, voiced) == pytest.approx(SPEECH_DBFS, abs=0.1)
    assert _level_db(heard.speech, voiced) - _level_db(heard.noise, voiced) == pytest.approx(snr, abs=0.5)
    if not heard.clipped:
        assert np.allclose(heard.samples, heard.speech + heard.noise, atol=1e-6)
    # The voiced samples are the clean request's, moved by the flight to the microphone.
    first_voiced = int(np.flatnonzero(np.abs(request) > 0)[0])
    assert heard.speech_start_s == pytest.approx((first_voiced + 93) / RATE, abs=0.011)
    assert heard.speech_end_s == pytest.approx((len(request) + 93) / RATE, abs=0.011)


def test_the_kitchen_goes_on_after_the_request():
    request = _request()
    noise_rir = _decaying_response(0.2, 120, 2)
    dry = NOISES["fan"].make(len(request) + 2 * RATE + len(noise_rir) + 1, np.random.default_rng(3))
    heard = mix(request, parse_condition("fan@10"), speech_rir=_decaying_response(0.2, 93, 1), noise_rir=noise_rir,
                dry_noise=dry, delay_s=93 / RATE, trailing_s=2.0)
    assert len(heard.samples) == len(request) + 2 * RATE
    after = heard.samples[-int(1.5 * RATE):]  # past the speech's own reverberation
    during = heard.noise[heard.voiced]
    assert 10 * np.log10(np.mean(after ** 2) / np.mean(during ** 2)) == pytest.approx(0.0, abs=3.0), \
        "the trailing seconds hold the fan at its level, not silence"
    # The room is full of the sound from the first sample: no fade-in as the response fills.
    assert _frames(heard.noise)[:5].min() > 0.3 * _frames(heard.noise).mean()
    clean = mix(request, parse_condition("clean"), speech_rir=None, noise_rir=None, dry_noise=None, trailing_s=2.0)
    assert not clean.samples[len(request):].any() and clean.speech_end_s == pytest.approx(len(request) / RATE, abs=0.011)


def test_noise_alone_has_the_level_it_has_under_the_request_and_no_speech():
    request = _request()
    rooms = {"speech_rir": _decaying_response(0.2, 93, 1), "noise_rir": _decaying_response(0.2, 120, 2)}
    dry = NOISES["fan"].make(int(NOISE_ONLY_S * RATE) + 4000, np.random.default_rng(3))
    with_request = mix(request, parse_condition("fan@10"), dry_noise=dry, **rooms)
    alone = mix(request, parse_condition("noise-only:fan@10"), dry_noise=dry, **rooms)
    assert not alone.speech.any() and alone.speech_end_s is None and alone.speech_start_s is None
    assert len(alone.samples) >= NOISE_ONLY_S * RATE
    n = len(with_request.noise)
    assert np.allclose(alone.noise[:n], with_request.noise)


def test_a_condition_and_a_seed_always_give_the_same_audio(tmp_path: Path):
    request = _request(1.0)
    room = room_preset("kitchen-small")
    a = kitchen_audio(request, parse_condition("dishes@10"), room, seed=3, cache_dir=tmp_path, max_order=2)
    b = kitchen_audio(request, parse_condition("dishes@10"), room, seed=3, cache_dir=tmp_path, max_order=2)
    c = kitchen_audio(request, parse_condition("dishes@10"), room, seed=4, cache_dir=tmp_path, max_order=2)
    assert np.array_equal(a.samples, b.samples) and not np.array_equal(a.samples, c.samples)
    assert np.array_equal(a.speech, c.speech)  # the seed is the sound's, not the room's
    assert list((tmp_path / "bench-kitchen").glob("rir-*.npz")), "the responses are cached"


def test_a_take_is_written_once_with_its_end_of_speech(tmp_path: Path):
    from audio.protocols import AudioChunk
    from audio.wav import read_wav, write_wav

    path = tmp_path / "request.wav"
    write_wav(path, AudioChunk(_request(1.5).astype(np.float32), RATE))
    take = kitchen_take(path, parse_condition("clean"), room_preset("kitchen-a"), 0, tmp_path)
    again = kitchen_take(path, parse_condition("clean"), room_preset("kitchen-a"), 0, tmp_path)
    assert take == again and take.path.is_file()
    assert take.speech_end_s == pytest.approx(1.9, abs=0.011)
    assert read_wav(take.path).duration == pytest.approx(1.9 + 2.0, abs=0.01)


# -- front ends ------------------------------------------------------------------------------------

def test_the_high_pass_takes_off_hum_and_keeps_the_voice():
    from bench.kitchen.front_ends import FRONT_ENDS, resolve_front_end

    t = np.arange(2 * RATE) / RATE
    hum, voice = np.sin(2 * np.pi * 50 * t), np.sin(2 * np.pi * 1000 * t)
    high = resolve_front_end("highpass")
    assert np.std(high(hum)[RATE:]) < 0.02 * np.std(hum)
    assert np.std(high(voice)[RATE:]) == pytest.approx(np.std(voice), rel=0.02)
    assert resolve_front_end("none") is FRONT_ENDS["none"]
    assert resolve_front_end("bench.kitchen.front_ends:highpass") is high
    with pytest.raises(ValueError, match="no front end 'denoise'"):
        resolve_front_end("denoise")


def test_a_front_end_may_hand_the_detector_another_signal():
    from bench.kitchen.front_ends import split

    mic, clean = np.ones(4, dtype=np.float32), np.zeros(4, dtype=np.float32)
    same = split(mic)
    assert same[0] is same[1] and same[0].dtype == np.float32
    recognize, detect = split((mic, clean))
    assert recognize.tolist() == [1, 1, 1, 1] and detect.tolist() == [0, 0, 0, 0]


def test_the_hearing_bench_gives_the_detector_and_turn_model_the_split_signal():
    from types import SimpleNamespace

    from bench.kitchen.hear import Ears

    heard = {}

    class Vad:
        def reset(self): pass
        def accept(self, samples):
            heard["vad"] = samples
            return [SimpleNamespace(speech=True, sample=RATE // 2), SimpleNamespace(speech=False, sample=RATE)]
        def flush(self): return []

    class Recognizer:
        def final(self, samples, context):
            from audio.protocols import Transcript

            heard["asr"] = samples
            return Transcript("words", True, avg_logprob=-0.1, no_speech_prob=0.0)

    class Turn:
        def probability(self, samples):
            heard["turn"] = samples
            return 0.9

    ears = Ears.__new__(Ears)
    ears.vad, ears.recognizer, ears.turn_model, ears.context = Vad(), Recognizer(), Turn(), ""
    from agent.listening.hearing import HearingSettings

    ears.listen = SimpleNamespace(preroll_s=0.0, tail_s=0.0, turn_end=SimpleNamespace(finished_threshold=0.5), hearing=HearingSettings())
    ears.config = SimpleNamespace(vad=SimpleNamespace(min_silence_s=0.0))
    mic, clean = np.ones(2 * RATE, dtype=np.float32), np.zeros(2 * RATE, dtype=np.float32)
    row = ears.hear(mic, 0.5, 1.0, detect=clean)
    assert heard["vad"] is clean and heard["turn"].max() == 0.0  # the detector and turn model: the cleaned signal
    assert heard["asr"].min() == 1.0 and len(heard["asr"]) == RATE // 2  # the recognizer: the microphone, over the detector's span
    assert row["transcript"] == "words" and row["turn_end_heard"] is True
    ears.hear(mic, 0.5, 1.0)
    assert heard["vad"] is mic  # without a split, one signal for all


def test_gain_control_brings_a_quiet_voice_up_and_leaves_a_steady_floor_alone():
    from bench.kitchen.front_ends import agc

    rng = np.random.default_rng(0)
    t = np.arange(3 * RATE) / RATE
    floor = 0.001 * rng.standard_normal(len(t))
    voice = np.where(t >= 1.0, 0.005 * np.sin(2 * np.pi * 300 * t), 0.0)  # −49 dBFS, 23 dB under the target
    out = agc((floor + voice).astype(np.float32))
    assert len(out) == len(t) and out.dtype == np.float32
    rms = lambda x: 20 * np.log10(np.sqrt(np.mean(np.square(x))))  # noqa: E731
    assert rms(out[int(2.5 * RATE):]) == pytest.approx(-26.0, abs=3.0)  # the voice near the target by then
    assert rms(out[: RATE // 2]) < rms(floor[: RATE // 2]) + 1.0  # the floor alone is not brought up
    assert np.abs(agc(np.ones(RATE, dtype=np.float32))).max() <= 1.0


def test_blends_line_the_microphone_up_with_the_suppressors_delay():
    from bench.kitchen.front_ends import _delayed, _frames

    x = np.arange(10, dtype=np.float32)
    assert _delayed(x, 3).tolist() == [0, 0, 0, 0, 1, 2, 3, 4, 5, 6]
    assert _delayed(x, 0) is not None and _delayed(x, 0).tolist() == x.tolist()
    seen = []
    out = _frames(x, 4, lambda f: (seen.append(len(f)), f * 2)[1])
    assert seen == [4, 4, 4] and out.tolist() == (2 * x).tolist()  # whole frames, the last padded; as long as the input
