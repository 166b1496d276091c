"""``hearth mic-check`` with the real voice detector (Silero) and recognizer (Whisper tiny.en): the
bundled spoken request over noise of known level, measured as the command measures it."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import firmware_py.mic_check_cli as mic_cli
from audio.levels import dbfs
from audio.protocols import AudioChunk
from audio.wav import WavFileMicrophone, read_wav
from firmware_py.cli import main
from firmware_py.config import parse_config
from firmware_py.mic_check import frame_levels, measure_floor, measure_voice, voice_frames
from firmware_py.mic_check_cli import hear
from firmware_py.wiring import make_recognizer, make_vad, model_store

pytestmark = pytest.mark.integration

RATE = 16000
REQUEST = Path(__file__).parent / "data" / "find-me-a-recipe-for-pancakes.wav"


@pytest.fixture(scope="module")
def config(models_dir: Path):
    return parse_config({"models_dir": str(models_dir)})


@pytest.fixture
def silero(config, model_path):
    model_path("silero-vad/silero_vad.onnx")
    vad = make_vad(config, model_store(config))
    vad.load()
    return vad


@pytest.fixture(scope="module")
def speech() -> np.ndarray:
    """The request, 6 dB down (the file peaks at full scale, which the check calls clipping), with a
    second of digital silence either side."""
    pad = np.zeros(RATE, np.float32)
    return np.concatenate([pad, 0.5 * read_wav(REQUEST, RATE).samples, pad])


def active_power(speech: np.ndarray, vad) -> float:
    """The clean request's power over the frames Silero calls speech: the voice's level by definition."""
    mask = voice_frames(speech, vad)
    return float(np.mean(frame_levels(speech)[: len(mask)][mask]))


def fan(seconds: float, band_power: float, seed: int) -> np.ndarray:
    """An extractor fan's kind of noise: most of its power low (white noise through a one-pole
    low-pass), scaled to ``band_power`` in the voice band."""
    rng = np.random.default_rng(seed)
    white = rng.standard_normal(int(seconds * RATE))
    low = np.zeros_like(white)
    for i in range(1, len(white)):  # a one-pole filter, pole 0.95: about 130 Hz
        low[i] = 0.95 * low[i - 1] + white[i]
    low = (0.01 * low / np.sqrt(np.mean(low**2))).astype(np.float32)  # well inside full scale while it is measured
    return (low * math.sqrt(band_power / float(np.mean(frame_levels(low))))).astype(np.float32)


@pytest.mark.parametrize("snr", [5.0, 10.0, 20.0])
@pytest.mark.parametrize("kind", ["white", "fan"])
def test_silero_finds_the_voice_and_the_snr_is_the_one_mixed(silero, speech, snr: float, kind: str) -> None:
    voice_power = active_power(speech, silero)
    noise_power = voice_power / 10 ** (snr / 10)
    if kind == "white":
        rng = np.random.default_rng(int(snr))
        # The band's share of white noise, measured on noise well inside full scale.
        share = float(np.mean(frame_levels(0.01 * rng.standard_normal(5 * RATE).astype(np.float32)))) / 1e-4
        rms = math.sqrt(noise_power / share)
        room, under = (rms * rng.standard_normal(n).astype(np.float32) for n in (5 * RATE, len(speech)))
    else:
        room, under = fan(5.0, noise_power, seed=1), fan(len(speech) / RATE, noise_power, seed=2)
    floor = measure_floor(room, silero)
    assert floor.mean_dbfs == pytest.approx(float(dbfs(noise_power)), abs=0.5)
    assert floor.voice_s < 0.3, "Silero took the room's noise for a voice"
    voice = measure_voice(speech + under, silero, floor)
    assert voice.snr_db == pytest.approx(snr, abs=1.0)
    assert voice.seconds == pytest.approx(float(np.sum(voice_frames(speech, silero))) * 512 / RATE, abs=0.3)


def test_silero_hears_no_voice_in_a_room_alone(silero) -> None:
    room = fan(4.0, 10 ** (-40 / 10), seed=3)
    floor = measure_floor(room[: 2 * RATE], silero)
    voice = measure_voice(room[2 * RATE :], silero, floor)
    assert floor.voice_s == 0.0 and voice.level_dbfs is None


async def test_whisper_hears_the_request_over_a_fan_and_is_less_sure_under_it(config, model_path, speech) -> None:
    model_path("whisper-tiny-en/model.bin")
    recognizer = make_recognizer(config, model_store(config))
    recognizer.load()
    power = float(np.mean(frame_levels(speech[RATE:-RATE])))
    clear = await hear(recognizer, speech + fan(len(speech) / RATE, power / 100, seed=4))  # 20 dB under the voice
    buried = await hear(recognizer, speech + fan(len(speech) / RATE, power * 2, seed=5))  # 3 dB over it
    assert "pancakes" in clear.text.lower()
    assert clear.confidence is not None and buried.confidence is not None
    assert clear.confidence > 0.6 and buried.confidence < clear.confidence


def test_the_command_with_the_real_models(monkeypatch, capsys, tmp_path, models_dir: Path, model_path, speech, silero) -> None:
    model_path("whisper-tiny-en/model.bin")
    power = active_power(speech, silero)
    room = fan(5.0, power / 10 ** 2.5, seed=6)  # 25 dB under the voice: hearth hears well
    heard = np.concatenate([room, speech + fan(len(speech) / RATE, power / 10 ** 2.5, seed=7), fan(4.0, power / 10 ** 2.5, seed=8)])
    monkeypatch.setattr(mic_cli, "open_microphone", lambda config: WavFileMicrophone(AudioChunk(heard, RATE), realtime=False))
    config = tmp_path / "hearth.toml"
    config.write_text("")  # the defaults, as on a fresh install
    assert main(["mic-check", "--config", str(config), "--models-dir", str(models_dir), "--seconds", "2"]) == 0
    out = capsys.readouterr().out
    assert 'Whisper heard "Find me a recipe for pancakes."' in out
    assert "Good: hearth will hear you well from there." in out
    snr = float(next(line for line in out.splitlines() if line.startswith("SNR")).split()[1])
    assert snr == pytest.approx(25.0, abs=1.5)
