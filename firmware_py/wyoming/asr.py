"""Speech to text over Wyoming: PCM in at any sane format, partial transcripts out as they come.

Transcript chunks follow the protocol's streaming order (``transcript-start``, ``transcript-chunk``
while audio still arrives, ``transcript`` for older clients, ``transcript-stop``).  Clients that
read chunks append them (the wyoming-vosk tests check that the chunks join into the transcript),
so a chunk is only ever the newly stable words of the recognizer's partials: text that later
partials keep.  The final transcript is a decode of its own and may revise those words; then it
is the ``transcript`` event, not the chunks, that is right.  Home Assistant's integration reads
only ``transcript``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

import numpy as np
import soxr
from wyoming.asr import Transcript as WyTranscript
from wyoming.asr import TranscriptChunk, TranscriptStart, TranscriptStop
from wyoming.event import Event

from audio.protocols import AudioChunk, Recognizer
from firmware_py.wyoming.offer import WyomingLimits

logger = logging.getLogger(__name__)

Write = Callable[[Event], Awaitable[None]]


class Refused(Exception):
    """Input the server will not take; the message is the ``error`` event's text (one line)."""

    def __init__(self, text: str, code: str) -> None:
        super().__init__(text)
        self.code = code


@dataclass(frozen=True)
class PcmFormat:
    """The format an ``audio-start`` announced."""

    rate: int
    """Samples per second."""
    width: int
    """Bytes per sample."""
    channels: int
    """Interleaved channels."""


def check_format(data: dict, limits: WyomingLimits, what: str) -> PcmFormat:
    """The PCM format in an audio event's data, or :class:`Refused` saying what is wrong with it."""
    try:
        rate, width, channels = (data[k] for k in ("rate", "width", "channels"))
    except KeyError as exc:
        raise Refused(f"{what}: missing {exc.args[0]!r}", "bad-audio-format") from None
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (rate, width, channels)):
        raise Refused(f"{what}: rate, width and channels must be whole numbers", "bad-audio-format")
    if not limits.min_rate <= rate <= limits.max_rate:
        raise Refused(f"{what}: sample rate {rate} Hz is outside {limits.min_rate}-{limits.max_rate} Hz", "bad-audio-format")
    if width not in limits.widths:
        raise Refused(f"{what}: sample width {width} bytes is not one of {list(limits.widths)}", "bad-audio-format")
    if not 1 <= channels <= limits.max_channels:
        raise Refused(f"{what}: {channels} channels is outside 1-{limits.max_channels}", "bad-audio-format")
    return PcmFormat(rate, width, channels)


class PcmToMono:
    """Signed little-endian PCM at any format -> float32 mono at the recognizer's rate, streamed."""

    def __init__(self, source: PcmFormat, rate: int) -> None:
        self.source = source
        self.rate = rate
        self._resampler = soxr.ResampleStream(source.rate, rate, 1, dtype="float32") if source.rate != rate else None
        self._partial = b""  # bytes of an incomplete frame, kept for the next chunk

    def convert(self, pcm: bytes, last: bool = False) -> np.ndarray:
        frame = self.source.width * self.source.channels
        pcm = self._partial + pcm
        usable = len(pcm) // frame * frame
        pcm, self._partial = pcm[:usable], pcm[usable:]
        dtype = "<i2" if self.source.width == 2 else "<i4"
        scale = 32768.0 if self.source.width == 2 else 2147483648.0
        samples = np.frombuffer(pcm, dtype).astype(np.float32) / scale
        if self.source.channels > 1:
            samples = samples.reshape(-1, self.source.channels).mean(axis=1, dtype=np.float32)
        if self._resampler is not None:
            samples = self._resampler.resample_chunk(samples, last=last)
        return np.ascontiguousarray(samples, dtype=np.float32)


class Utterance:
    """One ``audio-start`` .. ``audio-stop`` stream on its way to the recognizer."""

    def __init__(self, source: PcmFormat, recognizer: Recognizer, limits: WyomingLimits) -> None:
        self.converter = PcmToMono(source, recognizer.sample_rate)
        self.limits = limits
        self.seconds = 0.0
        self.queue: asyncio.Queue[AudioChunk | None] = asyncio.Queue()

    def add(self, pcm: bytes, chunk_format: PcmFormat) -> None:
        if chunk_format != self.converter.source:
            raise Refused(
                f"audio-chunk: format {chunk_format.rate} Hz/{chunk_format.width} B/{chunk_format.channels} ch differs from "
                f"audio-start's {self.converter.source.rate} Hz/{self.converter.source.width} B/{self.converter.source.channels} ch",
                "bad-audio-format",
            )
        samples = self.converter.convert(pcm)
        self.seconds += len(pcm) / (chunk_format.rate * chunk_format.width * chunk_format.channels)
        if self.seconds > self.limits.max_audio_s:
            raise Refused(f"audio: longer than {self.limits.max_audio_s:.0f} s; the utterance was dropped", "audio-too-long")
        if len(samples):
            self.queue.put_nowait(AudioChunk(samples, self.converter.rate))

    def end(self) -> None:
        tail = self.converter.convert(b"", last=True)
        if len(tail):
            self.queue.put_nowait(AudioChunk(tail, self.converter.rate))
        self.queue.put_nowait(None)

    async def chunks(self) -> AsyncIterator[AudioChunk]:
        while (chunk := await self.queue.get()) is not None:
            yield chunk


async def transcribe(
    recognizer: Recognizer, utterance: Utterance, context: str, language: str, slot: asyncio.Semaphore, write: Write
) -> None:
    """Run the recognizer over the utterance and write the streaming transcript events.

    ``slot`` bounds how many utterances the recognizer works on at once; audio waiting for
    one is queued, not lost.
    """
    await write(TranscriptStart(language=language).event())
    sent = ""  # the stable text already sent as chunks
    final = ""
    async with slot, contextlib.aclosing(recognizer.transcribe(utterance.chunks(), context)) as transcripts:
        async for transcript in transcripts:
            if transcript.is_final:
                final = transcript.text
                break
            stable = transcript.text[: transcript.stable_chars]
            if len(stable) > len(sent) and stable.startswith(sent):
                await write(TranscriptChunk(stable[len(sent):]).event())
                sent = stable
    if len(final) > len(sent) and final.startswith(sent):
        # The rest of the final, so that chunks join into the transcript whenever they can.
        await write(TranscriptChunk(final[len(sent):]).event())
    elif sent and not final.startswith(sent):
        logger.debug("final %r revised the stable partial %r", final, sent)
    await write(WyTranscript(final, language=language).event())
    await write(TranscriptStop().event())
