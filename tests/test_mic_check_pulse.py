"""``hearth mic-check`` through the real PortAudio path: a room's noise, then a voice over it,
played into a PulseAudio null sink and heard from its monitor by the microphone ``hearth run``
opens.  What it measures must be what was played."""

from __future__ import annotations

import asyncio
import io

import numpy as np
import pytest

import firmware_py.mic_check_cli as mic_cli
from audio.portaudio import MicrophoneSettings, SoundDeviceMicrophone, SoundDeviceSpeaker, SpeakerSettings
from audio.protocols import AudioChunk
from firmware_py.cli import main
from firmware_py.mic_check_cli import CheckSettings, check
from tests.test_mic_check import NOISE_BAND_DBFS, NOISE_RMS, RATE, vad_between, voice_rms, voiced

pytestmark = pytest.mark.audio

PLAYED_SNR_DB = 15.0


class _Prompts(io.StringIO):
    """The check's output, with an event set once it asks for the sentence (a user reads the
    prompt, then speaks)."""

    def __init__(self) -> None:
        super().__init__()
        self.asked = asyncio.Event()

    def write(self, text: str) -> int:
        if "2/2" in text:
            self.asked.set()
        return super().write(text)


async def test_the_snr_measured_through_portaudio_is_the_one_played(pulse_null_sink: str) -> None:
    rng = np.random.default_rng(21)
    out = _Prompts()
    speaker = SoundDeviceSpeaker(SpeakerSettings(sample_rate=RATE))
    sentence = voiced(1.5, NOISE_BAND_DBFS + PLAYED_SNR_DB)
    piece = int(0.1 * RATE)

    def room(n: int) -> np.ndarray:
        return (NOISE_RMS * rng.standard_normal(n)).astype(np.float32)

    async def play() -> None:
        # The room, all along; the sentence over it a moment after the check asks for it.
        while not out.asked.is_set():
            await speaker.write(AudioChunk(room(piece), RATE))
        for _ in range(7):
            await speaker.write(AudioChunk(room(piece), RATE))
        for i in range(0, len(sentence), piece):
            part = sentence[i : i + piece]
            await speaker.write(AudioChunk(room(len(part)) + part, RATE))
        while True:
            await speaker.write(AudioChunk(room(piece), RATE))

    await speaker.start()
    player = asyncio.create_task(play())
    microphone = SoundDeviceMicrophone(MicrophoneSettings())
    try:
        await asyncio.sleep(1.0)  # the room is heard before the microphone opens: no start-up silence in the floor
        await microphone.start()
        result = await check(microphone, vad_between(NOISE_RMS, voice_rms(PLAYED_SNR_DB)), CheckSettings(floor_s=3.0, speak_s=8.0),
                             out, device="the null sink's monitor", tty=False)
    finally:
        player.cancel()
        await asyncio.gather(player, return_exceptions=True)
        await microphone.close()
        await speaker.close()

    print("\n" + out.getvalue())
    assert result.floor.mean_dbfs == pytest.approx(NOISE_BAND_DBFS, abs=2.0)
    assert result.floor.spread_db < 6.0, "the floor was not the steady noise played (a gap of silence, or the sentence?)"
    assert result.voice.seconds == pytest.approx(1.5, abs=0.3)
    assert result.voice.snr_db == pytest.approx(PLAYED_SNR_DB, abs=3.0)
    assert result.verdict.hearing == "usable" and result.verdict.exit_status == 1


def test_a_device_portaudio_cannot_open_is_one_line_and_status_3(monkeypatch, capsys, tmp_path) -> None:
    from tests.fakes import EnergyVad

    monkeypatch.setattr(mic_cli, "voice_detector", lambda config: EnergyVad())
    config = tmp_path / "hearth.toml"
    config.write_text("")
    assert main(["mic-check", "--config", str(config), "--device", "no-such-mic"]) == 3
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("hearth: cannot open input device 'no-such-mic'")
