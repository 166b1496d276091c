"""Hearing the user speak up while hearth is talking, in hearth's own pauses.

Without echo cancellation the microphone hears hearth's voice as well as the user's, and a voice
detector cannot tell them apart.  Cadence's pauses are the moments the speaker is silent, so
there the microphone hears the room.  :class:`PauseListener` listens only then, after a short
guard for the room's echo to die away, and reports the first speech it hears.  Someone who talks
over hearth is heard at the next pause, which is at most one unit away.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from audio.protocols import AudioChunk, VoiceActivityDetector
from audio.wav import resample

log = logging.getLogger(__name__)


class PauseListener:
    """Feed it the microphone all the time; ``open()`` when a pause starts, ``close()`` when it ends.

    ``on_speech`` is called once, on the first speech heard while open.  The detector is reset on
    every ``open()``, so one shared with the turns (which reset it when they start listening) is
    fine: a pause never overlaps a turn's listening.
    """

    def __init__(self, vad: VoiceActivityDetector, on_speech: Callable[[], None], guard_s: float = 0.12) -> None:
        self.vad = vad
        self.on_speech = on_speech
        self.guard_s = guard_s
        """Echo of the last unit still in the room when its last sample has played."""
        self._listen_from: float | None = None

    @property
    def is_open(self) -> bool:
        return self._listen_from is not None

    def open(self, at: float | None = None) -> None:
        """A pause started at monotonic time ``at`` (default now): listen after the guard."""
        self._listen_from = (time.monotonic() if at is None else at) + self.guard_s
        self.vad.reset()

    def close(self) -> None:
        self._listen_from = None

    def accept(self, chunk: AudioChunk) -> None:
        if self._listen_from is None or time.monotonic() < self._listen_from:
            return
        samples = resample(chunk.samples, chunk.sample_rate, self.vad.sample_rate)
        if any(event.speech for event in self.vad.accept(samples)):
            self._listen_from = None
            log.info("the user spoke up during a pause")
            self.on_speech()
