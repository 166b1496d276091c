"""Stand-ins with scripted timing for the voice detector, the voice and the user's speech.

A loud tone stands for speech, a loudness threshold for the voice detector and a tone per character
for hearth's voice, so a turn takes real time without any model: what the page rig
(:mod:`bench.loop.page_rig`) runs its scripted turns on, and the tests' fakes with it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import numpy as np

from audio.protocols import AudioChunk, VadEvent


def speech_like(duration_s: float, rate: int = 16000, silence_before_s: float = 0.3, silence_after_s: float = 0.8) -> AudioChunk:
    """A loud tone standing in for speech, between stretches of silence."""
    t = np.arange(int(duration_s * rate)) / rate
    tone = 0.3 * np.sin(2 * np.pi * 220 * t).astype(np.float32)
    pad = lambda s: np.zeros(int(s * rate), np.float32)  # noqa: E731
    return AudioChunk(np.concatenate([pad(silence_before_s), tone, pad(silence_after_s)]), rate)


class EnergyVad:
    """Speech is any 32 ms window louder than a threshold; ends after ``min_silence_s``."""

    def __init__(self, sample_rate: int = 16000, threshold: float = 0.02, min_silence_s: float = 0.3) -> None:
        self.sample_rate = sample_rate
        self.threshold = threshold
        self.min_silence = int(min_silence_s * sample_rate)
        self.window = 512
        self.reset()

    def reset(self) -> None:
        self._pending = np.zeros(0, np.float32)
        self._pos = 0
        self._speaking = False
        self._last_voice = 0

    def accept(self, samples: np.ndarray) -> list[VadEvent]:
        events: list[VadEvent] = []
        self._pending = np.concatenate([self._pending, samples])
        while len(self._pending) >= self.window:
            frame, self._pending = self._pending[: self.window], self._pending[self.window :]
            loud = float(np.sqrt(np.mean(frame**2))) > self.threshold
            if loud:
                if not self._speaking:
                    events.append(VadEvent(True, self._pos))
                    self._speaking = True
                self._last_voice = self._pos + self.window
            elif self._speaking and self._pos + self.window - self._last_voice >= self.min_silence:
                events.append(VadEvent(False, self._last_voice))
                self._speaking = False
            self._pos += self.window
        return events


class ToneSynthesizer:
    """Speaks any text as a tone lasting ``seconds_per_char`` per character."""

    def __init__(self, seconds_per_char: float = 0.02, sample_rate: int = 16000, delay_s: float = 0.01) -> None:
        self.language = "en"
        self.sample_rate = sample_rate
        self.seconds_per_char = seconds_per_char
        self.delay_s = delay_s
        self.texts: list[str] = []

    async def synthesize(self, text: str) -> AsyncIterator[AudioChunk]:
        self.texts.append(text)
        await asyncio.sleep(self.delay_s)
        n = int(len(text) * self.seconds_per_char * self.sample_rate)
        t = np.arange(n) / self.sample_rate
        yield AudioChunk((0.2 * np.sin(2 * np.pi * 330 * t)).astype(np.float32), self.sample_rate)
