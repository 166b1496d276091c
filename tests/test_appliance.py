"""``hearth run`` for real: PortAudio microphone and speaker on PulseAudio, real models, a mock GPIO button.

A person's request is played into one null sink, which hearth's microphone
records from; hearth speaks into another, which the test records.  Only the
button is simulated (gpiozero's mock pins).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import wave
from pathlib import Path

import numpy as np
import pytest
from gpiozero import Device
from gpiozero.pins.mock import MockFactory, MockPWMPin

from firmware_py.config import parse_config
from firmware_py.demo import bundled_request
from firmware_py.device import DeviceLoop
from firmware_py.wiring import build_device
from tests.pulse import _rescan_portaudio

pytestmark = [pytest.mark.integration, pytest.mark.audio]


def _load_sink(name: str) -> str:
    out = subprocess.run(
        ["pactl", "load-module", "module-null-sink", f"sink_name={name}", "rate=16000"],
        capture_output=True, text=True, check=True, timeout=10,
    )
    return out.stdout.strip()


@pytest.fixture
def two_sinks(pulse_null_sink: str):
    """A sink the 'person' speaks into (hearth's microphone) and one hearth speaks into."""
    pid = os.getpid()
    mic, spk = f"hearth_mic_{pid}", f"hearth_spk_{pid}"
    modules = [_load_sink(mic), _load_sink(spk)]
    saved = {k: os.environ.get(k) for k in ("PULSE_SINK", "PULSE_SOURCE")}
    os.environ["PULSE_SINK"] = spk
    os.environ["PULSE_SOURCE"] = f"{mic}.monitor"
    _rescan_portaudio()
    yield mic, spk
    for key, value in saved.items():
        os.environ[key] = value  # type: ignore[assignment]
    for module in modules:
        subprocess.run(["pactl", "unload-module", module], check=False, timeout=10)
    _rescan_portaudio()


def _rms_of_wav(path: Path) -> float:
    with wave.open(str(path), "rb") as handle:
        data = np.frombuffer(handle.readframes(handle.getnframes()), "<i2").astype(np.float32) / 32768
    return float(np.sqrt(np.mean(data**2))) if len(data) else 0.0


async def test_press_speak_release_and_hear_the_answer_through_portaudio(two_sinks, models_dir, tmp_path):
    mic_sink, speaker_sink = two_sinks
    Device.pin_factory = MockFactory(pin_class=MockPWMPin)
    loop = asyncio.get_running_loop()
    config = parse_config({"models_dir": str(models_dir), "llm": {"max_tokens": 40}})
    parts = await build_device(config, loop)
    device = DeviceLoop(parts.assistant, parts.microphone, parts.button, parts.light)
    stop = asyncio.Event()
    runner = asyncio.create_task(device.run(stop))
    recording = tmp_path / "heard.wav"
    recorder = await asyncio.create_subprocess_exec(
        "parecord", f"--device={speaker_sink}.monitor", "--rate=16000", "--channels=1", "--format=s16le",
        "--file-format=wav", str(recording),
    )
    try:
        await asyncio.sleep(0.5)
        button = Device.pin_factory.pin(config.button.pin)
        button.drive_low()  # press and hold while the person speaks
        player = await asyncio.create_subprocess_exec("paplay", f"--device={mic_sink}", str(bundled_request("en")))
        await player.wait()
        await asyncio.sleep(0.3)
        button.drive_high()
        for _ in range(600):
            if parts.assistant.results:
                break
            await asyncio.sleep(0.1)
        assert parts.assistant.results, "no turn finished"
        result = parts.assistant.results[0]
        assert "dinner" in result.transcript.lower()
        assert result.outcome.value == "answered"
        assert result.spoken
        tl = result.timeline
        for mark in ("speech_start", "speech_end", "final_transcript", "first_token", "first_audio_out", "last_audio_out"):
            assert tl.first(mark) is not None, mark
        assert tl.first("first_audio_out").t > tl.first("first_token").t
    finally:
        stop.set()
        await runner
        await parts.close()
        recorder.terminate()
        await recorder.wait()
        Device.pin_factory.reset()
        Device.pin_factory = None
    assert _rms_of_wav(recording) > 0.01, "the answer was not heard on the speaker sink"
