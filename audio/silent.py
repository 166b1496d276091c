"""A speaker with no sound card: for ``hearth serve --no-device``, where Home Assistant's own
satellites speak and hearth only serves.  It keeps time like a real output (a chunk is "heard"
when its turn on the clock comes), so everything timed against the speaker still holds, and it
keeps none of the audio."""

from __future__ import annotations

import asyncio
import time

from audio.protocols import AudioChunk, HeardCallback


class SilentSpeaker:
    """Plays into nothing, in real time; ``interrupt()`` drops what the clock has not reached."""

    def __init__(self, sample_rate: int = 22050, max_buffer_s: float = 0.3) -> None:
        self.sample_rate = sample_rate
        self.max_buffer_s = max_buffer_s
        self._clock_end = 0.0
        self._handles: set[asyncio.TimerHandle] = set()

    async def write(self, chunk: AudioChunk, on_heard: HeardCallback | None = None) -> None:
        backlog = self._clock_end - time.monotonic()
        if backlog > self.max_buffer_s:
            await asyncio.sleep(backlog - self.max_buffer_s)
        start = max(time.monotonic(), self._clock_end)
        self._clock_end = start + chunk.duration
        if on_heard is not None:
            loop = asyncio.get_running_loop()

            def heard() -> None:
                self._handles.discard(handle)
                on_heard(start)

            handle = loop.call_at(loop.time() + (start - time.monotonic()), heard)
            self._handles.add(handle)

    async def drain(self) -> float:
        delay = self._clock_end - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        return self._clock_end

    def interrupt(self) -> None:
        for handle in self._handles:
            handle.cancel()
        self._handles.clear()
        self._clock_end = min(self._clock_end, time.monotonic())

    async def close(self) -> None:
        self.interrupt()
