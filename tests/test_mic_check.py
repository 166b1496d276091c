"""``hearth mic-check`` without a sound card or a model: the measurements on signals of known
level and SNR, the verdict and its advice, the meter, and the command's output and exit status
with a scripted microphone and an energy-based voice detector."""

from __future__ import annotations

import io
import math

import numpy as np
import pytest

import firmware_py.mic_check_cli as mic_cli
from audio.levels import dbfs
from audio.protocols import AudioChunk, AudioDeviceError, Transcript
from audio.wav import WavFileMicrophone
from firmware_py.cli import main
from firmware_py.mic_check import (
    FRAME,
    VOICE_BAND_HZ,
    Floor,
    Thresholds,
    Voice,
    judge,
    measure_floor,
    measure_voice,
    voice_frames,
)
from firmware_py.mic_check_cli import CheckSettings, Meter, check, meter_line
from tests.fakes import EnergyVad, ScriptedRecognizer

RATE = 16000
NOISE_RMS = 0.01
"""White noise at -40 dBFS over the whole spectrum."""
BAND_SHARE = (VOICE_BAND_HZ[1] - VOICE_BAND_HZ[0]) / (RATE / 2)
"""The share of white noise's power inside the voice band."""
NOISE_BAND_DBFS = 20 * math.log10(NOISE_RMS) + 10 * math.log10(BAND_SHARE)
"""The white noise's level in the voice band: about -43.2 dBFS."""


def noise(seconds: float, seed: int = 1, rms: float = NOISE_RMS) -> np.ndarray:
    return (rms * np.random.default_rng(seed).standard_normal(int(seconds * RATE))).astype(np.float32)


def tone(seconds: float, band_dbfs: float, hz: float = 440.0) -> np.ndarray:
    """A sine whose power is ``band_dbfs`` (all of it inside the voice band)."""
    t = np.arange(int(seconds * RATE)) / RATE
    return (math.sqrt(2 * 10 ** (band_dbfs / 10)) * np.sin(2 * np.pi * hz * t)).astype(np.float32)


def voiced(seconds: float, band_dbfs: float, f0: float = 180.0) -> np.ndarray:
    """A speech-like steady vowel: a gliding pitch and its harmonics up to 3.8 kHz (1/k each), at
    ``band_dbfs`` of power."""
    t = np.arange(int(seconds * RATE)) / RATE
    pitch = f0 * (1 + 0.1 * np.sin(2 * np.pi * 2.0 * t))
    phase = 2 * np.pi * np.cumsum(pitch) / RATE
    x = sum(np.sin(k * phase) / k for k in range(1, int(3800 / (1.1 * f0)) + 1))
    return (x * math.sqrt(10 ** (band_dbfs / 10) / np.mean(x**2))).astype(np.float32)


def with_burst(burst: np.ndarray, before_s: float = 1.0, after_s: float = 1.5, seed: int = 2) -> np.ndarray:
    """``burst`` over the noise, with noise alone before and after it."""
    out = noise(before_s + len(burst) / RATE + after_s, seed=seed)
    at = int(before_s * RATE)
    out[at : at + len(burst)] += burst
    return out


def vad_between(quiet_rms: float, loud_rms: float) -> EnergyVad:
    """An energy detector whose threshold lies halfway (in dB) between the noise and the voice over it."""
    return EnergyVad(threshold=math.sqrt(quiet_rms * loud_rms))


def voice_rms(band_snr_db: float) -> float:
    """The RMS of a burst at ``band_snr_db`` over the white noise, the noise included."""
    return math.sqrt(NOISE_RMS**2 + 10 ** ((NOISE_BAND_DBFS + band_snr_db) / 10))


# --------------------------------------------------------------------------- the measurements


def test_the_floor_of_white_noise_is_its_share_of_the_voice_band() -> None:
    floor = measure_floor(noise(5.0), EnergyVad(threshold=0.05))
    assert floor.mean_dbfs == pytest.approx(NOISE_BAND_DBFS, abs=0.3)
    assert floor.p10_dbfs < floor.p50_dbfs < floor.p90_dbfs
    assert floor.p50_dbfs == pytest.approx(NOISE_BAND_DBFS, abs=0.5)
    assert floor.spread_db < 3.0  # steady noise: its level hardly moves over time
    assert floor.seconds == pytest.approx(5.0) and floor.voice_s == 0.0


def test_a_hum_and_a_hiss_outside_the_voice_band_do_not_count() -> None:
    t = np.arange(3 * RATE) / RATE
    outside = (0.3 * np.sin(2 * np.pi * 50 * t) + 0.3 * np.sin(2 * np.pi * 6000 * t)).astype(np.float32)
    floor = measure_floor(noise(3.0) + outside)
    assert floor.mean_dbfs == pytest.approx(NOISE_BAND_DBFS, abs=0.5)


def test_a_noise_that_comes_and_goes_has_a_wide_spread() -> None:
    tap = np.concatenate([noise(1.5, seed=3, rms=0.001), noise(0.5, seed=4, rms=0.05)] * 2)  # a tap a quarter of the time
    floor = measure_floor(tap)
    assert floor.spread_db > 20
    # The SNR is against the floor's average power: the loud moments weigh in it.
    assert floor.mean_dbfs > floor.p50_dbfs + 20


@pytest.mark.parametrize("snr", [5.0, 10.0, 15.0, 20.0, 30.0])
def test_a_tone_over_white_noise_gives_its_snr(snr: float) -> None:
    floor = measure_floor(noise(5.0, seed=5))
    voice = measure_voice(with_burst(tone(1.5, NOISE_BAND_DBFS + snr)), vad_between(NOISE_RMS, voice_rms(snr)), floor)
    assert voice.snr_db == pytest.approx(snr, abs=1.0)
    assert voice.seconds == pytest.approx(1.5, abs=0.1)
    # The level is the voice-active frames' with the noise under them.
    assert voice.level_dbfs == pytest.approx(float(dbfs(10 ** ((NOISE_BAND_DBFS + snr) / 10) + 10 ** (NOISE_BAND_DBFS / 10))), abs=0.5)


@pytest.mark.parametrize("snr", [8.0, 15.0, 25.0])
def test_a_speech_like_burst_over_white_noise_gives_its_snr(snr: float) -> None:
    floor = measure_floor(noise(5.0, seed=6))
    voice = measure_voice(with_burst(voiced(1.8, NOISE_BAND_DBFS + snr)), vad_between(NOISE_RMS, voice_rms(snr)), floor)
    assert voice.snr_db == pytest.approx(snr, abs=1.0)


def test_the_voice_is_found_where_the_detector_says() -> None:
    samples = with_burst(tone(1.0, -20.0), before_s=1.0, after_s=1.0)
    mask = voice_frames(samples, EnergyVad(threshold=0.03))
    which = np.flatnonzero(mask)
    assert abs(which[0] * FRAME / RATE - 1.0) < 0.04 and abs((which[-1] + 1) * FRAME / RATE - 2.0) < 0.04
    assert mask.sum() == pytest.approx(RATE / FRAME, abs=2)


def test_clipping_is_seen_and_a_clean_voice_has_none() -> None:
    floor = measure_floor(noise(3.0))
    loud = np.clip(with_burst(tone(1.0, 0.0)), -1.0, 1.0)  # a sine of 1.41 amplitude, cut at full scale
    clipped = measure_voice(loud, EnergyVad(threshold=0.1), floor)
    assert clipped.clipped_samples > 1000 and clipped.peak_dbfs == pytest.approx(0.0, abs=0.01)
    clean = measure_voice(with_burst(tone(1.0, -12.0)), EnergyVad(threshold=0.1), floor)
    assert clean.clipped_samples == 0 and -9.5 < clean.peak_dbfs < -7.5  # the sine's -9 dBFS, and the noise on it


def test_a_silent_user_is_no_voice() -> None:
    floor = measure_floor(noise(3.0, seed=7))
    voice = measure_voice(noise(4.0, seed=8), EnergyVad(threshold=0.02), floor)
    assert voice.level_dbfs is None and voice.snr_db is None and voice.span is None
    verdict = judge(floor, voice)
    assert verdict.hearing == "poor" and verdict.exit_status == 2
    assert "heard no voice" in verdict.summary
    assert not any("near silence" in line for line in verdict.advice)


def test_a_click_is_no_voice() -> None:
    floor = measure_floor(noise(3.0))
    voice = measure_voice(with_burst(tone(0.1, -20.0)), EnergyVad(threshold=0.03), floor)
    assert voice.seconds > 0 and voice.level_dbfs is None


def test_a_muted_microphone_is_named() -> None:
    silence = np.zeros(3 * RATE, np.float32)
    floor = measure_floor(silence)
    verdict = judge(floor, measure_voice(silence, EnergyVad(), floor))
    assert verdict.hearing == "poor"
    assert "near silence" in verdict.advice[0] and "muted" in verdict.advice[0]


# --------------------------------------------------------------------------- the verdict


STEADY = Floor(seconds=5.0, mean_dbfs=-50.0, p10_dbfs=-51.0, p50_dbfs=-50.0, p90_dbfs=-49.0)
VARYING = Floor(seconds=5.0, mean_dbfs=-42.0, p10_dbfs=-60.0, p50_dbfs=-50.0, p90_dbfs=-44.0)


def heard_at(snr: float, floor: Floor = STEADY, level: float | None = None, clipped: int = 0) -> Voice:
    level = floor.mean_dbfs + snr if level is None else level
    return Voice(seconds=1.5, level_dbfs=level, snr_db=snr, peak_dbfs=-0.0 if clipped else level + 10, clipped_samples=clipped,
                 span=(0, 24000))


def test_twenty_db_and_more_hears_well_with_nothing_to_change() -> None:
    for snr in (20.0, 35.0):
        verdict = judge(STEADY, heard_at(snr))
        assert (verdict.hearing, verdict.exit_status, verdict.advice) == ("good", 0, ())
        assert verdict.summary.startswith("Good")


@pytest.mark.parametrize(("snr", "hearing", "status"), [(19.9, "usable", 1), (10.0, "usable", 1), (9.9, "poor", 2), (-5.0, "poor", 2)])
def test_the_snr_thresholds(snr: float, hearing: str, status: int) -> None:
    verdict = judge(STEADY, heard_at(snr))
    assert (verdict.hearing, verdict.exit_status) == (hearing, status)
    advice = " ".join(verdict.advice)
    assert "closer to where you cook" in advice and f"{20 - snr:.0f} dB more" in advice
    assert "USB speakerphone" in advice and "echo cancelling and noise reduction" in advice


def test_the_distance_advice_says_how_much_closer() -> None:
    verdict = judge(STEADY, heard_at(8.0))
    assert "12 dB more" in verdict.advice[0] and "4 times closer" in verdict.advice[0]  # 10 ** (12 / 20) = 3.98


def test_steady_noise_points_at_the_hood_and_varying_noise_at_the_tap_and_radio() -> None:
    steady = " ".join(judge(STEADY, heard_at(12.0)).advice)
    assert "extractor fan" in steady and "hood" in steady and "came and went" not in steady
    varying = " ".join(judge(VARYING, heard_at(12.0, VARYING)).advice)
    assert "came and went" in varying and "16 dB" in varying and "tap" in varying and "hood" not in varying


def test_a_quiet_voice_asks_for_more_gain() -> None:
    quiet_room = Floor(seconds=5.0, mean_dbfs=-75.0, p10_dbfs=-76.0, p50_dbfs=-75.0, p90_dbfs=-74.0)
    verdict = judge(quiet_room, heard_at(25.0, quiet_room))
    assert verdict.hearing == "usable" and verdict.exit_status == 1
    assert len(verdict.advice) == 1 and "gain up" in verdict.advice[0] and "-50 dBFS" in verdict.advice[0]
    # A voice loud enough asks for nothing.
    assert judge(quiet_room, heard_at(25.0, quiet_room, level=-39.0)).advice == ()


def test_a_clipped_voice_asks_for_less_gain() -> None:
    verdict = judge(STEADY, heard_at(30.0, clipped=40))
    assert verdict.hearing == "usable"
    assert len(verdict.advice) == 1 and "gain down" in verdict.advice[0] and "40 samples clipped" in verdict.advice[0]
    # Poor stays poor: gain is not what is wrong there.
    assert judge(STEADY, heard_at(5.0, clipped=40)).hearing == "poor"


def test_a_voice_in_the_quiet_spell_is_mentioned() -> None:
    radio = Floor(seconds=5.0, mean_dbfs=-50.0, p10_dbfs=-52.0, p50_dbfs=-50.0, p90_dbfs=-47.0, voice_s=2.2)
    advice = judge(radio, heard_at(25.0, radio)).advice
    assert any("2.2 s" in line and "radio" in line for line in advice)


def test_the_floor_counts_voice_in_the_quiet_spell() -> None:
    floor = measure_floor(with_burst(tone(1.0, -20.0), before_s=1.0, after_s=1.0), EnergyVad(threshold=0.03))
    assert floor.voice_s == pytest.approx(1.0, abs=0.1)


def test_custom_thresholds_move_the_verdict() -> None:
    strict = Thresholds(good_snr_db=30.0, usable_snr_db=20.0)
    assert judge(STEADY, heard_at(25.0), strict).hearing == "usable"
    assert judge(STEADY, heard_at(15.0), strict).hearing == "poor"


# --------------------------------------------------------------------------- the meter


def test_the_meter_line_shows_the_level_the_floor_and_clipping() -> None:
    line = meter_line(-40.0, -20.0, -60.0, clipped=False)
    bar = line[line.index("[") + 1 : line.index("]")]
    assert len(bar) == 40 and bar.count("#") == 19 and bar[10] == "|"  # -40 dBFS: half way, less the floor's mark
    assert "-40 dBFS" in line and "CLIP" not in line
    full = meter_line(-2.0, 0.0, None, clipped=True)
    assert "!" in full and full.endswith("CLIP") and "|" not in full and "]" not in full
    assert meter_line(-100.0, -100.0, None, False).count("#") == 0


def test_the_meter_redraws_one_line_on_a_terminal_and_prints_lines_elsewhere() -> None:
    samples = with_burst(tone(2.0, -20.0), before_s=1.2, after_s=0.5)
    terminal = io.StringIO()
    meter = Meter(terminal, tty=True, clip_level=0.99)
    meter.start(-43.0)
    for i in range(0, len(samples), 512):
        meter.feed(samples[i : i + 512])
    meter.end()
    text = terminal.getvalue()
    assert text.count("\r") >= 25 and text.count("\n") == 1 and text.endswith("\n") and "|" in text
    log = io.StringIO()
    meter = Meter(log, tty=False, clip_level=0.99)
    meter.start(None)
    for i in range(0, len(samples), 512):
        meter.feed(samples[i : i + 512])
    meter.end()
    lines = log.getvalue().splitlines()
    assert len(lines) == 3 and "\r" not in log.getvalue() and "\x1b" not in log.getvalue()
    assert lines[0].strip().startswith("1.0 s") and "level -43 dBFS" in lines[0] and "level -20 dBFS" in lines[2]


# --------------------------------------------------------------------------- the check and the command


SNR = 25.0


def kitchen(snr: float | None = SNR, trailing_s: float = 10.0, clip: bool = False) -> np.ndarray:
    """What a scripted microphone hears: 3 s while the user gets ready, 2 s of the quiet room,
    then the room with the sentence 1 s in (none when ``snr`` is None), then ``trailing_s`` of the room."""
    room = noise(3.0 + 2.0 + 1.0, seed=11)
    sentence = voiced(1.5, NOISE_BAND_DBFS + (snr or 0.0)) if snr is not None else np.zeros(int(1.5 * RATE), np.float32)
    if clip:
        sentence = sentence / np.max(np.abs(sentence)) * 1.5
    after = noise(trailing_s, seed=12)
    spoken = noise(1.5, seed=13) + sentence
    return np.clip(np.concatenate([room, spoken, after]), -1.0, 1.0)


class ScoredRecognizer(ScriptedRecognizer):
    """Hears ``text`` and scores it as Whisper's n best do."""

    async def transcribe(self, audio, context: str = "", *, hypotheses: int = 1):
        async for transcript in super().transcribe(audio, context, hypotheses=hypotheses):
            if transcript.is_final:
                transcript = Transcript(transcript.text, True, len(transcript.text), transcript.audio_s, transcript.text,
                                        ((transcript.text, -0.105), ("set a timer for 10 minutes", -0.4)))
            yield transcript


async def as_loaded(recognizer):
    return recognizer


async def test_the_check_listens_to_the_room_then_the_sentence_and_ends_after_it() -> None:
    recognizer = ScoredRecognizer("Set a timer for 10 minutes.")
    out = io.StringIO()
    result = await check(
        WavFileMicrophone(AudioChunk(kitchen(), RATE), realtime=False),
        vad_between(NOISE_RMS, voice_rms(SNR)),
        CheckSettings(floor_s=2.0, speak_s=8.0),
        out,
        device="input device 'scripted'",
        recognizer=as_loaded(recognizer),
    )
    assert result.floor.mean_dbfs == pytest.approx(NOISE_BAND_DBFS, abs=0.5)
    assert result.voice.snr_db == pytest.approx(SNR, abs=1.0)
    assert result.verdict.exit_status == 0
    # Whisper was given the voice and a little either side, not the whole spell.
    assert recognizer.audio_seen[0] == pytest.approx(1.5 + 0.6, abs=0.1)
    text = out.getvalue()
    assert "listening on input device 'scripted'" in text and "Set a timer for ten minutes." in text
    assert 'Whisper heard "Set a timer for 10 minutes." (confidence 0.90)' in text
    assert "SNR" in text and " 25 dB" in text and "Good: hearth will hear you well from there." in text
    # It stopped a second after the voice, not at the end of the 8 s it could have waited.
    spoken = text.split("2/2")[1]
    meter_seconds = [float(line.split()[0]) for line in spoken.splitlines() if line.strip().endswith("dBFS") and " s  level" in line]
    assert meter_seconds and max(meter_seconds) <= 4.0


async def test_the_check_says_why_no_transcript_is_shown() -> None:
    out = io.StringIO()
    await check(WavFileMicrophone(AudioChunk(kitchen(), RATE), realtime=False), vad_between(NOISE_RMS, voice_rms(SNR)),
                CheckSettings(floor_s=2.0, speak_s=8.0), out, device="x",
                recognizer=as_loaded("model file whisper-tiny-en/model.bin is missing: run `hearth models install whisper-tiny-en`"))
    assert "Whisper heard (not shown: model file whisper-tiny-en/model.bin is missing" in out.getvalue()


async def test_a_user_who_says_nothing_is_told_so_and_nothing_is_decoded() -> None:
    recognizer = ScriptedRecognizer("phantom")
    out = io.StringIO()
    result = await check(WavFileMicrophone(AudioChunk(kitchen(snr=None, trailing_s=6.0), RATE), realtime=False),
                         vad_between(NOISE_RMS, voice_rms(SNR)), CheckSettings(floor_s=2.0, speak_s=6.0), out,
                         device="x", recognizer=as_loaded(recognizer))
    assert result.verdict.exit_status == 2 and result.heard is None and recognizer.audio_seen == []
    text = out.getvalue()
    assert "Your voice    none heard" in text and "hearth heard no voice" in text and "Whisper" not in text


def _scripted(monkeypatch, samples: np.ndarray, recognizer=None, opened: list | None = None, snr: float | None = SNR) -> None:
    def microphone(config):
        if opened is not None:
            opened.append(config.audio.input_device)
        return WavFileMicrophone(AudioChunk(samples, RATE), realtime=False)

    async def no_recognizer(config):
        return recognizer if recognizer is not None else "no recognizer in this test"

    monkeypatch.setattr(mic_cli, "open_microphone", microphone)
    monkeypatch.setattr(mic_cli, "voice_detector", lambda config: vad_between(NOISE_RMS, voice_rms(snr or SNR)))
    monkeypatch.setattr(mic_cli, "load_recognizer", no_recognizer)


@pytest.fixture
def config_file(tmp_path):
    path = tmp_path / "hearth.toml"
    path.write_text('[audio]\ninput_device = "kitchen-mic"\n')
    return path


@pytest.mark.parametrize(("snr", "clip", "status", "says"), [
    (SNR, False, 0, "Good: hearth will hear you well"),
    (14.0, False, 1, "Usable: hearth will hear you"),
    (4.0, False, 2, "Poor: hearth will mishear much"),
    (None, False, 2, "hearth heard no voice"),
    (SNR, True, 1, "Turn the input gain down"),
])
def test_the_command_exits_by_what_it_measured(monkeypatch, capsys, config_file, snr, clip, status, says) -> None:
    opened: list = []
    _scripted(monkeypatch, kitchen(snr, clip=clip), opened=opened, snr=snr)
    assert main(["mic-check", "--config", str(config_file), "--seconds", "2"]) == status
    out = capsys.readouterr().out
    assert says in out and "Noise floor" in out
    assert opened == ["kitchen-mic"]  # the microphone hearth run uses
    assert "Whisper heard (not shown: no recognizer in this test)" in out if snr is not None else "Whisper" not in out


def test_the_device_option_overrides_the_configured_one(monkeypatch, capsys, config_file) -> None:
    opened: list = []
    _scripted(monkeypatch, kitchen(), opened=opened)
    main(["mic-check", "--config", str(config_file), "--seconds", "2", "--device", "USB speakerphone"])
    main(["mic-check", "--config", str(config_file), "--seconds", "2", "--device", "3"])
    assert opened == ["USB speakerphone", 3]
    assert "listening on input device 'USB speakerphone'" in capsys.readouterr().out


def test_korean_asks_for_the_korean_sentence(monkeypatch, capsys, config_file) -> None:
    _scripted(monkeypatch, kitchen())
    main(["mic-check", "--config", str(config_file), "--seconds", "2", "--language", "ko"])
    assert '"타이머 십 분 맞춰 줘."' in capsys.readouterr().out


REAL_VOICE_DETECTOR = mic_cli.voice_detector


def test_the_microphone_is_the_one_hearth_run_opens() -> None:
    from audio.portaudio import SoundDeviceMicrophone
    from firmware_py.config import parse_config

    # Built, not opened: nothing touches a sound card here.
    microphone = mic_cli.open_microphone(parse_config({"audio": {"input_device": "kitchen-mic"}}))
    assert isinstance(microphone, SoundDeviceMicrophone)
    assert microphone.settings.device == "kitchen-mic" and microphone.sample_rate == RATE


class _NoMicrophone:
    sample_rate = RATE

    async def start(self) -> None:
        raise AudioDeviceError("cannot open input device 'kitchen-mic': Error querying device -1")

    def chunks(self):
        raise AssertionError("never opened")

    async def close(self) -> None:
        pass


def test_a_microphone_that_will_not_open_is_one_line_and_status_3(monkeypatch, capsys, config_file) -> None:
    _scripted(monkeypatch, kitchen())
    monkeypatch.setattr(mic_cli, "open_microphone", lambda config: _NoMicrophone())
    assert main(["mic-check", "--config", str(config_file)]) == 3
    captured = capsys.readouterr()
    assert captured.err.splitlines() == ["hearth: cannot open input device 'kitchen-mic': Error querying device -1"]
    assert "Quiet, please" not in captured.out


def test_a_microphone_that_stops_sending_is_status_3(monkeypatch, capsys, config_file) -> None:
    _scripted(monkeypatch, noise(3.5))  # ready, then half a second of the room
    assert main(["mic-check", "--config", str(config_file), "--seconds", "2"]) == 3
    assert "stopped sending audio" in capsys.readouterr().err


def test_without_the_voice_detector_the_check_cannot_run(monkeypatch, capsys, config_file, tmp_path) -> None:
    # The real voice_detector against an empty models directory.
    _scripted(monkeypatch, kitchen())
    monkeypatch.setattr(mic_cli, "voice_detector", REAL_VOICE_DETECTOR)
    empty = tmp_path / "models"
    empty.mkdir()
    assert main(["mic-check", "--config", str(config_file), "--models-dir", str(empty)]) == 4
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "silero-vad" in err[0] and "hearth models install silero-vad" in err[0]


@pytest.mark.parametrize("seconds", ["0.5", "61", "nan", "inf"])
def test_seconds_out_of_range_is_one_line_and_status_4(monkeypatch, capsys, config_file, seconds) -> None:
    _scripted(monkeypatch, kitchen())
    assert main(["mic-check", "--config", str(config_file), "--seconds", seconds]) == 4
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "--seconds must be from 1 to 60" in err[0]


def test_a_bad_configuration_is_status_4_not_poor(monkeypatch, capsys, tmp_path) -> None:
    _scripted(monkeypatch, kitchen())
    path = tmp_path / "hearth.toml"
    path.write_text("[vad]\nthreshold = 2.0\n")
    assert main(["mic-check", "--config", str(path)]) == 4
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "vad.threshold" in err[0]


async def test_an_arrays_check_measures_each_microphone_and_names_a_dead_one() -> None:
    from audio.array import ArrayGeometry
    from audio.array_microphone import BeamformedMicrophone, RecordingArray, WavFileArray
    from audio.beamformer import FirstMicrophone
    from firmware_py.mic_check_cli import array_lines

    room = kitchen()
    dead = noise(len(room) / RATE, seed=21) * 1e-4  # an unplugged input: its own hiss, nothing of the room
    capture = np.stack([room, room * 0.9, dead, room, np.zeros_like(room)], axis=1).astype(np.float32)
    geometry = ArrayGeometry("scripted-square", ((-0.03, -0.03, 0), (-0.03, 0.03, 0), (0.03, 0.03, 0), (0.03, -0.03, 0)), 5, (0, 1, 2, 3))
    microphone = BeamformedMicrophone(RecordingArray(WavFileArray(capture, RATE, realtime=False)), geometry, FirstMicrophone())
    out = io.StringIO()
    result = await check(microphone, vad_between(NOISE_RMS, voice_rms(SNR)), CheckSettings(floor_s=2.0, speak_s=8.0), out,
                         device="input device 'scripted'")
    assert result.quiet_at == (3 * RATE, 5 * RATE)
    lines = array_lines(microphone, result, CheckSettings().thresholds)
    text = "\n".join(lines)
    assert "Each microphone of scripted-square (4 on 5 channels):" in text
    assert [line.split()[1] for line in lines if line.strip().startswith("channel ")] == ["0", "1", "2", "3"]
    snrs = [float(line.split("SNR")[1].split("dB")[0]) for line in lines if line.strip().startswith("channel ") and "SNR" in line]
    assert [s == pytest.approx(SNR, abs=1.5) for s in snrs] == [True, True, False, True]
    assert snrs[2] <= -19.0  # the dead one hears no voice over its hiss
    assert "what hearth hears (first): SNR 25 dB, +0 dB on the best microphone alone" in text
    assert "Channel 2 hears almost nothing" in text and "Channel 0" not in text and "Channel 3" not in text


def test_one_microphone_has_no_channel_lines() -> None:
    from firmware_py.mic_check_cli import CheckResult, array_lines

    assert array_lines(WavFileMicrophone(AudioChunk(np.zeros(10, np.float32), RATE)), CheckResult(None, None, None), None) == []


def test_a_muffled_or_clipping_microphone_of_an_array_is_named() -> None:
    from firmware_py.mic_check import ChannelLevels, channel_advice

    levels = [ChannelLevels(c, -60.0, -30.0, 30.0, -6.0, 0) for c in range(3)]
    assert channel_advice(levels) == []
    levels.append(ChannelLevels(3, -61.0, -40.0, 21.0, -16.0, 0))
    levels.append(ChannelLevels(4, -59.0, -29.0, 30.0, 0.0, 120))
    advice = channel_advice(levels)
    assert any(a.startswith("Channel 3 hears your voice 10 dB quieter") for a in advice)
    assert any(a.startswith("Channel 4 clipped 120 samples") for a in advice)
    assert not any("Channel 0" in a for a in advice)
