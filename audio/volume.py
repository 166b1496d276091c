"""The speaker's volume: a level from 1 to 10 applied as gain to everything hearth plays.

The gain is applied in software, in front of the speaker, so the same levels hold on any
sound card (a USB speaker may have no mixer control hearth can reach).  Level 10 plays
samples as synthesized; each step below is 3 dB quieter, so level 1 is 27 dB down: still
heard across a quiet kitchen, never silent, because a speaker turned down to nothing cannot
say that it was.
"""

from __future__ import annotations

from dataclasses import replace

from audio.protocols import AudioChunk, HeardCallback, Speaker

MIN_LEVEL = 1
MAX_LEVEL = 10
DB_PER_LEVEL = 3.0


def gain_of(level: int) -> float:
    """The amplitude factor of ``level`` (clamped to 1..10); 1.0 at the top."""
    level = max(MIN_LEVEL, min(MAX_LEVEL, level))
    return float(10 ** (-(MAX_LEVEL - level) * DB_PER_LEVEL / 20))


class VolumeSpeaker:
    """A :class:`Speaker` that plays through ``inner`` at the current :attr:`level`.

    A new level counts from the next chunk written: the reply that says the new level is
    heard at it.
    """

    def __init__(self, inner: Speaker, level: int = 7) -> None:
        self.inner = inner
        self.level = level

    @property
    def level(self) -> int:
        return self._level

    @level.setter
    def level(self, value: int) -> None:
        self._level = max(MIN_LEVEL, min(MAX_LEVEL, int(value)))
        self._gain = gain_of(self._level)

    async def write(self, chunk: AudioChunk, on_heard: HeardCallback | None = None) -> None:
        if self._gain != 1.0:
            chunk = replace(chunk, samples=chunk.samples * self._gain)
        await self.inner.write(chunk, on_heard)

    async def drain(self) -> float:
        return await self.inner.drain()

    def interrupt(self) -> None:
        self.inner.interrupt()

    async def close(self) -> None:
        await self.inner.close()

    def __getattr__(self, name: str) -> object:
        if name == "inner":
            raise AttributeError(name)
        # Whatever else the real speaker offers (its clock, its device name) stays reachable.
        return getattr(self.inner, name)
