"""A turn's output as text only: for a request that came in as words and goes back as words.

A turn answering a typed or remote request (Home Assistant's ``handle``) cuts its reply into
units with Cadence as a spoken turn does, but nothing is played on the kitchen's speaker: each
unit is "heard" the moment it is written, with no pauses, so it is told (``UnitSpoken``) at once
and whoever asked gets it while the rest of the reply is still being made.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

import numpy as np

from audio.protocols import AudioChunk, HeardCallback

TEXT_RATE = 16000
"""The nominal sample rate of the empty chunks that stand for units (no audio is made)."""


class SilentSynthesizer:
    """Stands in for a voice: every unit is one empty chunk, made at once."""

    sample_rate = TEXT_RATE

    def __init__(self, language: str) -> None:
        self.language = language

    async def synthesize(self, text: str) -> AsyncIterator[AudioChunk]:
        yield AudioChunk(np.zeros(0, np.float32), self.sample_rate)


class TextSpeaker:
    """Stands in for the speaker: a chunk is heard as soon as it is written, and nothing plays."""

    sample_rate = TEXT_RATE

    async def write(self, chunk: AudioChunk, on_heard: HeardCallback | None = None) -> None:
        if on_heard is not None:
            on_heard(time.monotonic())

    async def drain(self) -> float:
        return time.monotonic()

    def interrupt(self) -> None:
        """Nothing is queued to drop."""

    async def close(self) -> None:
        """Nothing to release."""
