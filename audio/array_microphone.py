"""An array heard as one microphone: its channels through a front end, the rest of hearth unchanged.

:class:`BeamformedMicrophone` keeps the :class:`~audio.protocols.Microphone` contract over any
:class:`ArraySource` (the sound card's channels, or a recorded N-channel take played back): each
block's microphone channels (the geometry's ``mic_channels``; loopback channels are left out)
go through the front end, and the one signal out is stamped with the time its samples reached
the converters, the front end's own delay counted.  The device loop tells it when a turn starts
and stops listening (:meth:`BeamformedMicrophone.turn_began`), which is what the beamformer needs
to keep the user's words out of its picture of the kitchen's noise.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

import numpy as np

from audio.array import ArrayGeometry
from audio.beamformer import ArrayFrontEnd
from audio.protocols import ArrayChunk, ArraySource, AudioChunk, CapturedChunk
from audio.wav import paced


class BeamformedMicrophone:
    """One signal from an array: a :class:`~audio.protocols.Microphone` over an :class:`ArraySource`."""

    def __init__(self, source: ArraySource, geometry: ArrayGeometry, front_end: ArrayFrontEnd) -> None:
        if source.channels != geometry.capture_channels:
            raise ValueError(f"array {geometry.name!r} has {geometry.capture_channels} channels; the capture has {source.channels}")
        self.source = source
        self.geometry = geometry
        self.front_end = front_end
        self.sample_rate = source.sample_rate
        self._picked = list(geometry.mic_channels)
        self.front_end_s = 0.0
        """CPU time spent in the front end so far (for the bench)."""
        self._pending = 0  # samples taken in and not yet given out (a frame not yet full)

    def listen_before(self, samples: np.ndarray) -> None:
        """Feed audio heard before this microphone was read (the kitchen before the press), output dropped."""
        self._process(np.asarray(samples, np.float32))

    def _process(self, block: np.ndarray) -> np.ndarray:
        started = time.process_time()
        out = self.front_end.process(block[:, self._picked])
        self.front_end_s += time.process_time() - started
        self._pending += len(block) - len(out)
        return out

    async def chunks(self) -> AsyncIterator[AudioChunk]:
        rate = self.sample_rate
        late = self.front_end.latency_samples
        async for chunk in self.source.chunks():
            out = self._process(chunk.samples)
            if len(out) == 0:
                continue
            # The output's last sample is the input's (pending + late) samples before this block's end.
            end = chunk.captured_at + (len(chunk.samples) - self._pending) / rate
            yield CapturedChunk(out, rate, end - (late + len(out)) / rate)

    @property
    def started_at(self) -> float | None:
        """When the source's first sample was captured, where it says (a played recording does)."""
        return getattr(self.source, "started_at", None)

    def turn_began(self) -> None:
        self.front_end.turn_began()

    def turn_ended(self) -> None:
        self.front_end.turn_ended()

    async def start(self) -> None:
        start = getattr(self.source, "start", None)
        if start is not None:
            await start()

    @property
    def lost(self) -> object:
        return getattr(self.source, "lost", None)

    async def close(self) -> None:
        await self.source.close()


class WavFileArray:
    """Plays an N-channel recording as an array's capture, paced like a live sound card."""

    def __init__(self, samples: np.ndarray, sample_rate: int = 16000, chunk_s: float = 0.032, realtime: bool = True) -> None:
        samples = np.asarray(samples, np.float32)
        if samples.ndim != 2:
            raise ValueError("an array recording has (samples, channels)")
        self.sample_rate = sample_rate
        self.channels = samples.shape[1]
        self._samples = samples
        self._chunk = max(1, int(chunk_s * sample_rate))
        self._realtime = realtime
        self._closed = False
        self.started_at: float | None = None
        """Monotonic time at which the first sample was captured."""

    async def chunks(self) -> AsyncIterator[ArrayChunk]:
        self.started_at = time.monotonic()
        async for piece, at in paced(self._samples, self.sample_rate, self._chunk, self.started_at, self._realtime, lambda: self._closed):
            yield ArrayChunk(piece, self.sample_rate, at)

    async def close(self) -> None:
        self._closed = True


class RecordingArray:
    """An array source that keeps every block it passes on (``hearth mic-check`` looks at each
    microphone afterwards)."""

    def __init__(self, source: ArraySource) -> None:
        self.source = source
        self.sample_rate = source.sample_rate
        self.channels = source.channels
        self.blocks: list[np.ndarray] = []

    async def chunks(self) -> AsyncIterator[ArrayChunk]:
        async for chunk in self.source.chunks():
            self.blocks.append(chunk.samples)
            yield chunk

    def recorded(self) -> np.ndarray:
        """Everything passed on, ``(samples, channels)``."""
        return np.concatenate(self.blocks) if self.blocks else np.zeros((0, self.channels), np.float32)

    async def start(self) -> None:
        start = getattr(self.source, "start", None)
        if start is not None:
            await start()

    async def close(self) -> None:
        await self.source.close()
