"""The sound card path, played into and recorded from a PulseAudio null sink."""

from __future__ import annotations

import asyncio
import time

import numpy as np
import pytest

from audio.portaudio import (
    AudioDeviceError,
    MicrophoneSettings,
    SoundDeviceMicrophone,
    SoundDeviceSpeaker,
    SpeakerSettings,
)
from audio.protocols import AudioChunk, Microphone, Speaker


pytestmark = pytest.mark.audio

SILENT = 0.01


def tone(seconds: float, rate: int, hz: float = 440.0) -> AudioChunk:
    t = np.arange(int(seconds * rate)) / rate
    return AudioChunk((0.5 * np.sin(2 * np.pi * hz * t)).astype(np.float32), rate)


def peak_hz(samples: np.ndarray, rate: int) -> float:
    spectrum = np.abs(np.fft.rfft(samples * np.hanning(len(samples))))
    return float(np.fft.rfftfreq(len(samples), 1 / rate)[np.argmax(spectrum)])


async def test_tone_is_heard_when_stamped_and_interrupt_silences_it(pulse_null_sink: str) -> None:
    speaker = SoundDeviceSpeaker(SpeakerSettings())
    mic = SoundDeviceMicrophone(MicrophoneSettings())
    assert isinstance(speaker, Speaker) and isinstance(mic, Microphone)
    recorded: list[tuple[float, np.ndarray]] = []  # (arrival time, samples)

    async def record() -> None:
        async for chunk in mic.chunks():
            recorded.append((time.monotonic(), chunk.samples))

    written: list[float] = []
    heard: list[float] = []

    async def play() -> None:
        piece = tone(0.25, speaker.sample_rate)
        while True:
            written.append(time.monotonic())
            await speaker.write(piece, heard.append)

    await mic.start()
    await speaker.start()
    recorder = asyncio.create_task(record())
    try:
        await asyncio.sleep(0.3)
        player = asyncio.create_task(play())
        await asyncio.sleep(1.5)
        player.cancel()
        interrupted = time.monotonic()
        speaker.interrupt()
        silent_from = await speaker.drain()
        await asyncio.sleep(0.8)
        await asyncio.gather(player, return_exceptions=True)
    finally:
        await speaker.close()
        await mic.close()
        await recorder

    assert heard, "on_heard never fired"
    assert heard[0] > written[0], "a chunk cannot be heard before it was written"
    assert all(later > earlier for earlier, later in zip(heard, heard[1:]))

    rate = mic.sample_rate
    playing = np.concatenate([s for at, s in recorded if heard[0] + 0.2 < at < interrupted])
    assert len(playing) > 0.5 * rate, "nothing recorded while the tone played"
    assert np.sqrt(np.mean(playing**2)) > 0.1, "the tone was not recorded"
    assert abs(peak_hz(playing, rate) - 440.0) < 10.0

    onset = next(at for at, s in recorded if np.max(np.abs(s)) > 0.2)
    after = [(at, s) for at, s in recorded if at > interrupted]
    last_loud = max((at for at, s in after if np.max(np.abs(s)) > SILENT), default=interrupted)
    tail = np.concatenate([s for at, s in after if at > last_loud])
    assert len(tail) > 0.4 * rate and np.max(np.abs(tail)) < SILENT, "the speaker did not go silent after interrupt()"
    print(
        f"\nfirst tone chunk recorded {1000 * (onset - heard[0]):.0f} ms after its on_heard time; "
        f"interrupt -> last loud recorded chunk {1000 * (last_loud - interrupted):.0f} ms "
        f"(includes the microphone's {1000 * mic.settings.block_s:.0f} ms block); "
        f"speaker reports silence from {1000 * (silent_from - interrupted):.0f} ms"
    )


async def test_drain_returns_when_the_last_sample_is_heard(pulse_null_sink: str) -> None:
    speaker = SoundDeviceSpeaker(SpeakerSettings())
    await speaker.start()
    try:
        start = time.monotonic()
        heard: list[float] = []
        for _ in range(4):
            await speaker.write(tone(0.2, 16000), heard.append)  # resampled to the stream rate
        end = await speaker.drain()
        assert time.monotonic() >= end - 0.005
        assert end - heard[0] == pytest.approx(0.8, abs=0.05)
        assert end - start >= 0.8
        assert speaker.queued_s == 0.0
    finally:
        await speaker.close()


async def test_a_slow_reader_loses_the_oldest_audio(pulse_null_sink: str) -> None:
    mic = SoundDeviceMicrophone(MicrophoneSettings(max_queued_s=0.2))
    await mic.start()
    try:
        # Streams through PulseAudio may take a second or two to start flowing.
        deadline = time.monotonic() + 5.0
        while mic.dropped_chunks == 0 and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        assert mic.dropped_chunks > 0
        chunk = await anext(mic.chunks())
        assert chunk.sample_rate == 16000 and chunk.samples.dtype == np.float32
    finally:
        await mic.close()


async def test_an_unknown_device_is_named_in_one_line() -> None:
    with pytest.raises(AudioDeviceError) as caught:
        await SoundDeviceSpeaker(SpeakerSettings(device="no-such-card")).start()
    assert "no-such-card" in str(caught.value) and "\n" not in str(caught.value)
    with pytest.raises(AudioDeviceError) as caught:
        await SoundDeviceMicrophone(MicrophoneSettings(device="no-such-mic")).start()
    assert "no-such-mic" in str(caught.value) and "\n" not in str(caught.value)


async def test_an_arrays_two_channels_are_opened_and_heard_as_one(pulse_null_sink: str) -> None:
    """The null sink's monitor is stereo: two channels, the tone on both, as a 2-mic board gives."""
    from audio.array import BOARDS
    from audio.array_microphone import BeamformedMicrophone
    from audio.beamformer import MvdrBeamformer
    from audio.protocols import TurnAware

    geometry = BOARDS["respeaker-2mic"]
    capture = SoundDeviceMicrophone(MicrophoneSettings(channels=geometry.capture_channels))
    mic = BeamformedMicrophone(capture, geometry, MvdrBeamformer(geometry.count))
    assert isinstance(mic, Microphone) and isinstance(mic, TurnAware)
    speaker = SoundDeviceSpeaker(SpeakerSettings())
    recorded: list[tuple[float, float, np.ndarray]] = []  # (stamp, arrival, samples)

    async def record() -> None:
        async for chunk in mic.chunks():
            recorded.append((chunk.captured_at, time.monotonic(), chunk.samples))

    await mic.start()
    await speaker.start()
    recorder = asyncio.create_task(record())
    try:
        await asyncio.sleep(0.5)  # the room before the press
        mic.turn_began()
        await speaker.write(tone(1.0, speaker.sample_rate))
        await speaker.drain()
        await asyncio.sleep(0.3)
        mic.turn_ended()
    finally:
        await speaker.close()
        await mic.close()
        await recorder

    assert capture.channels == 2
    samples = np.concatenate([s for _, _, s in recorded])
    assert samples.ndim == 1 and len(samples) > 1.2 * mic.sample_rate
    loud = np.concatenate([s for _, _, s in recorded if np.max(np.abs(s)) > 0.2])
    assert abs(peak_hz(loud, mic.sample_rate) - 440.0) < 10.0, "the tone came through the beam"
    assert all(stamp < arrival for stamp, arrival, _ in recorded), "a chunk is stamped before it arrives"
    stamps = [stamp for stamp, _, _ in recorded]
    assert all(b > a for a, b in zip(stamps, stamps[1:]))
