"""Text to speech over Wyoming, spoken unit by unit as Cadence cuts the text.

A whole ``synthesize`` is one ``audio-start`` .. ``audio-stop`` (older clients stop reading at the
first ``audio-stop``), its units synthesized in turn so the first is on the wire while the rest
are made.  A streamed request (``synthesize-start``, ``synthesize-chunk``..., ``synthesize-stop``)
gets each unit as its own ``audio-start`` .. ``audio-stop`` as soon as Cadence has cut it from
the text so far (or, when the client pauses after a sentence end, as soon as the pause shows the
sentence is done), then ``synthesize-stopped``, as the protocol describes.  Audio is 16-bit mono
PCM at the voice's own rate.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

import numpy as np
from wyoming.audio import AudioChunk as WyAudioChunk
from wyoming.audio import AudioStart, AudioStop
from wyoming.event import Event
from wyoming.tts import SynthesizeStopped

from agent.speaking.cadence import Cadence, CadenceRules, split_units
from firmware_py.wyoming.offer import Voice

logger = logging.getLogger(__name__)

Write = Callable[[Event], Awaitable[None]]

WIDTH = 2
CHUNK_S = 0.1
"""Audio is written in pieces of about this length, so a client can start playing early."""


def pcm16(samples: np.ndarray) -> bytes:
    clipped = np.clip(np.asarray(samples, dtype=np.float32), -1.0, 1.0)
    return (clipped * 32767.0).astype("<i2").tobytes()


async def _unit_audio(voice: Voice, text: str, lock: asyncio.Lock) -> list[np.ndarray]:
    """One unit's audio; the voice's lock is held while it is made, not while it is sent."""
    async with lock:
        parts = []
        audio = voice.synthesizer.synthesize(text)
        try:
            async for chunk in audio:
                if chunk.sample_rate != voice.synthesizer.sample_rate:
                    raise RuntimeError(f"voice {voice.name} made {chunk.sample_rate} Hz audio, announced {voice.synthesizer.sample_rate} Hz")
                parts.append(chunk.samples)
        finally:
            close = getattr(audio, "aclose", None)
            if close is not None:
                await close()
        return parts


async def _send_audio(parts: list[np.ndarray], rate: int, write: Write) -> int:
    """Write the samples as audio chunks; return how many samples went out."""
    step = max(1, int(rate * CHUNK_S))
    sent = 0
    for samples in parts:
        for start in range(0, len(samples), step):
            piece = samples[start : start + step]
            await write(WyAudioChunk(rate=rate, width=WIDTH, channels=1, audio=pcm16(piece)).event())
            sent += len(piece)
    return sent


async def synthesize_whole(voice: Voice, text: str, rules: CadenceRules, lock: asyncio.Lock, write: Write) -> None:
    """A ``synthesize`` request: one audio stream, made unit by unit."""
    rate = voice.synthesizer.sample_rate
    await write(AudioStart(rate=rate, width=WIDTH, channels=1).event())
    for unit in split_units(text, rules):
        if unit.strip():
            await _send_audio(await _unit_audio(voice, unit, lock), rate, write)
    await write(AudioStop().event())


class TextStream:
    """The text of a streamed request as it arrives; None marks ``synthesize-stop``."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[str | None] = asyncio.Queue()
        self.chars = 0
        self.last_at = 0.0
        """The event loop's time when the last chunk arrived."""

    def add(self, text: str) -> None:
        self.chars += len(text)
        self.last_at = asyncio.get_running_loop().time()
        self.queue.put_nowait(text)

    def end(self) -> None:
        self.queue.put_nowait(None)


class _Paused:
    """The client sent nothing for the idle time."""


PAUSED = _Paused()


async def _next_piece(text: TextStream, idle_s: float | None) -> str | None | _Paused:
    """The next chunk (None at ``synthesize-stop``), or PAUSED once ``idle_s`` has passed since the
    last chunk arrived with none after it; ``idle_s`` None: wait as long as it takes."""
    if idle_s is None or not text.queue.empty():
        return await text.queue.get()
    left = text.last_at + idle_s - asyncio.get_running_loop().time()
    try:
        return await asyncio.wait_for(text.queue.get(), max(0.0, left))
    except TimeoutError:
        return PAUSED


async def synthesize_stream(
    voice: Voice, text: TextStream, rules: CadenceRules, lock: asyncio.Lock, write: Write, idle_s: float = 0.2
) -> None:
    """A streamed request: each unit spoken once Cadence has cut it, then ``synthesize-stopped``.

    When the client pauses for ``idle_s`` after text that ends a sentence, what Cadence holds of
    it is spoken then (:meth:`Cadence.settle`), rather than when the next chunk shows where the
    sentence ended; text that stops mid-sentence waits for the rest however long it takes.
    """
    cadence = Cadence(rules)
    rate = voice.synthesizer.sample_rate
    ended = False
    may_settle = False  # text arrived since the last look at whether the held text can be spoken
    while not ended:
        piece = await _next_piece(text, idle_s if may_settle and cadence.held.strip() else None)
        if isinstance(piece, _Paused):
            may_settle = False
            units = cadence.settle()
            if units:
                logger.debug("client paused after a sentence end: speaking %d held unit(s)", len(units))
        elif piece is None:
            ended = True
            units = cadence.flush()
            cadence.end()
        else:
            may_settle = True
            units = cadence.feed(piece)
        for unit in units:
            parts = await _unit_audio(voice, unit, lock)
            if not any(len(p) for p in parts):
                continue
            await write(AudioStart(rate=rate, width=WIDTH, channels=1).event())
            await _send_audio(parts, rate, write)
            await write(AudioStop().event())
    await write(SynthesizeStopped().event())
