"""PortAudio's stream calls, one at a time across the process (a stand-in sounddevice counts them).

Two streams opened at once from two threads aborted the whole process inside the host API; the
microphone and the speaker each open theirs in a thread of its own.
"""

from __future__ import annotations

import asyncio
import sys
import threading
import time
import types

import pytest

from audio.portaudio import MicrophoneSettings, SoundDeviceMicrophone, SoundDeviceSpeaker, SpeakerSettings


class Overlaps:
    """How many stream calls ran at once, at most."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.inside = 0
        self.most = 0
        self.calls: list[str] = []

    def call(self, name: str) -> None:
        with self._lock:
            self.inside += 1
            self.most = max(self.most, self.inside)
            self.calls.append(name)
        time.sleep(0.03)  # long enough for the other thread to come in, were it let in
        with self._lock:
            self.inside -= 1


def fake_sounddevice(overlaps: Overlaps) -> types.ModuleType:
    class Stream:
        latency = 0.01

        def __init__(self, kind: str, **_: object) -> None:
            self.kind = kind
            overlaps.call(f"open {kind}")

        @property
        def time(self) -> float:
            return time.monotonic()

        def start(self) -> None:
            overlaps.call(f"start {self.kind}")

        def stop(self) -> None:
            overlaps.call(f"stop {self.kind}")

        def close(self) -> None:
            overlaps.call(f"close {self.kind}")

    module = types.ModuleType("sounddevice")
    module.PortAudioError = type("PortAudioError", (Exception,), {})  # type: ignore[attr-defined]
    module.InputStream = lambda **kw: Stream("input", **kw)  # type: ignore[attr-defined]
    module.OutputStream = lambda **kw: Stream("output", **kw)  # type: ignore[attr-defined]
    module.query_devices = lambda: [{"name": "fake"}]  # type: ignore[attr-defined]
    return module


async def test_the_microphone_and_the_speaker_opened_and_closed_together_call_portaudio_one_at_a_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    overlaps = Overlaps()
    monkeypatch.setitem(sys.modules, "sounddevice", fake_sounddevice(overlaps))
    mic = SoundDeviceMicrophone(MicrophoneSettings())
    speaker = SoundDeviceSpeaker(SpeakerSettings(settle_timeout_s=0.05))
    for _ in range(3):
        await asyncio.gather(mic.start(), speaker.start())
        await asyncio.gather(mic.close(), speaker.close())
    assert overlaps.most == 1
    for kind in ("input", "output"):
        assert overlaps.calls.count(f"open {kind}") == 3
        assert overlaps.calls.count(f"close {kind}") == 3
