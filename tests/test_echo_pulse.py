"""Echo cancellation on a real audio path: hearth's PortAudio speaker heard by its own microphone.

A PulseAudio server of the test's own (:mod:`bench.echo.room`): the speaker's null sink feeds the
microphone's through loopbacks with latency and gain (a direct path and a reflection), and a person
is a WAV played into the microphone's sink.  Nothing here is simulated but the room.

speexdsp is measured twice: on an idle machine, and while another process keeps one core busy, as
Whisper or the LLM do while hearth talks (on two cores, with other work besides, it measured
18.4 dB once).  Each run prints the ERLE with what moved the echo path meanwhile: the speaker's
underruns and the steps the quick checks followed.  To look for a regression under load, run it a
few times (``-s`` shows the figures), also with more work beside it, for example
``python -c "while True: pass" &`` once or twice more.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time

import numpy as np
import pytest

from audio.echo import EchoFilter, FarEndReference, make_canceller
from audio.portaudio import MicrophoneSettings, SoundDeviceMicrophone, SoundDeviceSpeaker, SpeakerSettings
from audio.protocols import AudioChunk, CapturedChunk
from bench.echo.room import KitchenRoom, RoomSettings
from tests.test_echo import voice_like

pytestmark = pytest.mark.audio

RATE = 16000
MIN_ERLE_DB = {"apm": 10.0, "speex": 20.0}
"""Least attenuation asserted over the second half of 10 s of voice.  speexdsp measured 50.7 dB here
once the microphone's and the speaker's time lines were their sample counts (4.8-12.7 dB before,
when the capture stamps' ±22 ms jitter moved the reference); WebRTC's APM 17-29 dB.  speexdsp is
hearth's canceller, so it must also be taken as working (``min_erle_db``, 20 dB).

speexdsp's figure here has two levels, whatever the load: 44-52 dB where its filter declares
itself adapted within the reply (its residual-echo suppression then works), 25-27 dB where it does
not (the linear filter alone).  Which one a run gets depends on the syllable the filter started
on, which the load moves; the lower level is what the 20 dB must hold against.  What took runs
under it was the echo path stepping by 0.7-2.4 ms under load (docs/echo-cancellation.md)."""


@pytest.fixture
def kitchen_room():
    room = KitchenRoom(RoomSettings())
    room.open()
    try:
        yield room
    finally:
        room.close()


@pytest.fixture
def busy_core():
    """Another process keeping one core busy while the test runs."""
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        yield
    finally:
        spinner.kill()
        spinner.wait()


@pytest.mark.parametrize("kind, load", [("apm", "idle"), ("speex", "idle"), ("speex", "one core busy")])
async def test_the_echo_of_hearths_voice_is_cancelled_on_the_real_path(
    kitchen_room: KitchenRoom, kind: str, load: str, request: pytest.FixtureRequest
) -> None:
    if load == "one core busy":
        request.getfixturevalue("busy_core")
    echo = EchoFilter(make_canceller(kind), FarEndReference())
    speaker = SoundDeviceSpeaker(SpeakerSettings(sample_rate=22050), reference=echo.reference)
    mic = SoundDeviceMicrophone(MicrophoneSettings())
    energy: list[tuple[float, float, float]] = []  # (capture time, raw, cleaned)
    lags: list[float] = []

    async def listen() -> None:
        async for chunk in mic.chunks():
            assert isinstance(chunk, CapturedChunk)
            lags.append(time.monotonic() - chunk.captured_at)
            cleaned = echo.clean(chunk, chunk.captured_at)
            energy.append((chunk.captured_at, float(np.sum(chunk.samples.astype(np.float64) ** 2)),
                           float(np.sum(cleaned.samples.astype(np.float64) ** 2))))

    await speaker.start()
    await mic.start()
    listener = asyncio.create_task(listen())
    try:
        voice = voice_like(10.0, seed=5)
        started = time.monotonic()
        for i in range(0, len(voice), RATE // 5):
            await speaker.write(AudioChunk(voice[i : i + RATE // 5], RATE))
        ended = await speaker.drain()
        await asyncio.sleep(0.5)
    finally:
        await mic.close()
        await speaker.close()
        await asyncio.gather(listener, return_exceptions=True)

    # The stamps are capture times: a chunk arrives after its first sample was taken, not long after.
    assert lags and 0.0 < float(np.median(lags)) < 0.5
    assert echo.reference.delay_measured, "the delay from the speaker to the microphone was never found"
    delay = echo.reference.delay_at(ended)
    assert 0.0 < delay < 0.5
    # Over the second half of the voice (the first is the canceller converging).
    rows = [(r, c) for at, r, c in energy if started + 5.0 <= at < ended]
    raw, cleaned = sum(r for r, _ in rows), sum(c for _, c in rows)
    erle = 10 * np.log10(raw / max(cleaned, 1e-12))
    print(f"\n{kind}, {load}: delay {1000 * delay:.0f} ms, ERLE {erle:.1f} dB (running estimate {echo.erle_db} dB), "
          f"capture-to-arrival {1000 * float(np.median(lags)):.0f} ms, speaker underruns {speaker.underflows}, "
          f"echo path steps followed {echo.path_steps}, figures set aside {echo.path_suspicions} times")
    assert erle >= MIN_ERLE_DB[kind]
    if kind == "speex":
        assert echo.working()
