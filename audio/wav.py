"""WAV files as a microphone and as a speaker, for the demo, the benchmarks and tests.

:class:`WavFileMicrophone` plays a recording into the loop in real time, as a
sound card would.  :class:`WavFileSpeaker` is an output device with a real-time
clock and no hardware: a chunk is "heard" when the clock reaches it, so
timelines measured through it mean the same as through a sound card (minus
the card's latency), and an interrupt cuts the recording where playback was.
"""

from __future__ import annotations

import asyncio
import io
import logging
import time
import wave
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import numpy as np
import soxr

from audio.levels import finite_samples
from audio.protocols import AudioChunk, CapturedChunk, HeardCallback, PlaybackListener

log = logging.getLogger(__name__)


class AudioFileError(ValueError):
    """The file is not audio hearth can read; the message says why in one line."""


MIN_RATE = 4000
"""The lowest sample rate read: below telephone quality there is no speech to hear."""
MAX_RATE = 384_000
"""The highest sample rate read (studio converters); a header claiming more is broken, and
resampling from 1 Hz to 16 kHz would ask for sixteen thousand times the memory."""


def resample(samples: np.ndarray, from_rate: int, to_rate: int) -> np.ndarray:
    """``samples`` (made finite, see :func:`~audio.levels.finite_samples`) at ``to_rate``; ValueError
    for a rate outside :data:`MIN_RATE` to :data:`MAX_RATE`."""
    for rate in (from_rate, to_rate):
        if not MIN_RATE <= rate <= MAX_RATE:
            raise ValueError(f"sample rate {rate} Hz is outside {MIN_RATE} to {MAX_RATE} Hz")
    samples = finite_samples(samples)
    if from_rate == to_rate:
        return samples
    # A band-limited resampler rings past full scale next to a step (a 4 kHz file's square edge
    # came out at 1.002): held to [-1, 1], as the DAC would clip it anyway.
    return np.clip(soxr.resample(samples, from_rate, to_rate), -1.0, 1.0).astype(np.float32)


WAV_HEADER_BYTES = 44
"""The shortest header of a PCM WAV file (RIFF, fmt and data chunk headers)."""


def _not_wav(source: Path | bytes, exc: Exception) -> str:
    """Why ``source`` is no WAV, in words: the wave module's own reasons are terse or empty (a
    file cut short ends its header with an EOFError that says nothing)."""
    try:
        size = len(source) if isinstance(source, bytes) else Path(source).stat().st_size
        with io.BytesIO(source) if isinstance(source, bytes) else open(source, "rb") as file:
            head = file.read(4)
    except OSError:
        size, head = -1, b""
    if size == 0:
        return "not a WAV file (empty)"
    if size > 0 and not head.startswith(b"RIFF"):
        return "not a WAV file (it does not begin with RIFF)"
    if 0 < size < WAV_HEADER_BYTES:
        return f"not a WAV file ({size} bytes, too short for a WAV header)"
    if isinstance(exc, EOFError):
        return "not a whole WAV file (it ends inside its header)"
    return f"not a PCM WAV file ({str(exc) or type(exc).__name__})"


def read_wav(source: Path | bytes, sample_rate: int | None = None) -> AudioChunk:
    """Read a PCM WAV (any rate, mono or multi-channel) as float32 mono, resampled if asked.

    Raises :class:`AudioFileError` for anything that is not a readable PCM WAV.
    """
    data, rate = read_wav_channels(source)
    mono = data.mean(axis=1) if data.shape[1] > 1 else data[:, 0]
    if sample_rate is not None and not MIN_RATE <= sample_rate <= MAX_RATE:
        raise ValueError(f"cannot read audio at {sample_rate} Hz: outside {MIN_RATE} to {MAX_RATE} Hz")
    if sample_rate is not None and sample_rate != rate:
        mono, rate = resample(mono, rate, sample_rate), sample_rate
    return AudioChunk(np.ascontiguousarray(mono, dtype=np.float32), rate)


def read_wav_channels(source: Path | bytes) -> tuple[np.ndarray, int]:
    """Every channel of a PCM WAV: float32 ``(samples, channels)`` and the rate (an array's recording).

    Raises :class:`AudioFileError` for anything that is not a readable PCM WAV.
    """
    name = "<bytes>" if isinstance(source, bytes) else str(source)
    try:
        handle = wave.open(io.BytesIO(source) if isinstance(source, bytes) else str(source), "rb")
    except FileNotFoundError:
        raise AudioFileError(f"{name}: no such file") from None
    except IsADirectoryError:
        raise AudioFileError(f"{name}: a folder, not a WAV file") from None
    except OSError as exc:
        raise AudioFileError(f"{name}: cannot be read ({exc.strerror or exc})") from None
    except (wave.Error, EOFError) as exc:
        raise AudioFileError(f"{name}: {_not_wav(source, exc)}") from None
    with handle:
        channels, width, rate, frames = (
            handle.getnchannels(),
            handle.getsampwidth(),
            handle.getframerate(),
            handle.getnframes(),
        )
        raw = handle.readframes(frames)
    if rate <= 0 or channels <= 0:
        raise AudioFileError(f"{name}: invalid WAV header ({channels} channels at {rate} Hz)")
    if not MIN_RATE <= rate <= MAX_RATE:
        raise AudioFileError(f"{name}: a sample rate of {rate} Hz is outside {MIN_RATE} to {MAX_RATE} Hz")
    # A file cut short ends inside a sample: drop the partial one.
    raw = raw[: len(raw) // width * width] if width else raw
    if width == 1:
        data = (np.frombuffer(raw, np.uint8).astype(np.float32) - 128.0) / 128.0
    elif width == 2:
        data = np.frombuffer(raw, "<i2").astype(np.float32) / 32768.0
    elif width == 3:
        b = np.frombuffer(raw, np.uint8)[: len(raw) // 3 * 3].reshape(-1, 3).astype(np.int32)
        ints = (b[:, 0] | (b[:, 1] << 8) | (b[:, 2] << 16)) << 8 >> 8
        data = ints.astype(np.float32) / 8388608.0
    elif width == 4:
        data = np.frombuffer(raw, "<i4").astype(np.float32) / 2147483648.0
    else:
        raise AudioFileError(f"{name}: unsupported sample width of {width} bytes")
    usable = len(data) // channels * channels
    return data[:usable].reshape(-1, channels), rate


def write_wav(path: Path, chunk: AudioChunk) -> None:
    write_wav_channels(path, chunk.samples[:, None], chunk.sample_rate)


def write_wav_channels(path: Path, samples: np.ndarray, rate: int) -> None:
    """``(samples, channels)`` as a 16-bit PCM WAV."""
    pcm = (np.clip(samples, -1.0, 1.0) * 32767.0).astype("<i2")
    with wave.open(str(path), "wb") as handle:
        handle.setnchannels(samples.shape[1])
        handle.setsampwidth(2)
        handle.setframerate(rate)
        handle.writeframes(np.ascontiguousarray(pcm).tobytes())


class WavFileMicrophone:
    """Plays a recording into the loop in chunks, paced like a live microphone.

    Each chunk is a :class:`~audio.protocols.CapturedChunk` stamped with the time its first
    sample was 'spoken' (``started_at`` plus its offset)."""

    def __init__(
        self,
        audio: AudioChunk,
        chunk_s: float = 0.032,
        realtime: bool = True,
        trailing_silence_s: float = 0.0,
    ) -> None:
        self.sample_rate = audio.sample_rate
        self._audio = audio
        self._chunk = max(1, int(chunk_s * audio.sample_rate))
        self._realtime = realtime
        self._trailing = trailing_silence_s
        self._closed = False
        self.started_at: float | None = None
        """Monotonic time at which the first sample was 'spoken'."""

    async def chunks(self) -> AsyncIterator[AudioChunk]:
        samples = self._audio.samples
        if self._trailing > 0:
            samples = np.concatenate([samples, np.zeros(int(self._trailing * self.sample_rate), np.float32)])
        self.started_at = time.monotonic()
        async for piece, at in paced(samples, self.sample_rate, self._chunk, self.started_at, self._realtime, lambda: self._closed):
            yield CapturedChunk(piece, self.sample_rate, at)

    async def close(self) -> None:
        self._closed = True


async def paced(
    samples: np.ndarray, rate: int, chunk: int, start: float, realtime: bool, closed: Callable[[], bool],
) -> AsyncIterator[tuple[np.ndarray, float]]:
    """``samples`` (one channel, or ``(samples, channels)``) in pieces of ``chunk``, each with the
    time its first sample was captured, as a live device delivers them from ``start``: a piece when
    its last sample is in (or at once, not ``realtime``), until ``closed()``."""
    for offset in range(0, len(samples), chunk):
        if closed():
            return
        piece = samples[offset : offset + chunk]
        if realtime:
            delay = start + (offset + len(piece)) / rate - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
        else:
            await asyncio.sleep(0)
        yield piece, start + offset / rate


class WavFileSpeaker:
    """An output device with a real-time clock that records what was played.

    Audio is scheduled back to back on the clock; ``on_heard`` fires when the
    clock reaches a chunk's first sample.  ``interrupt()`` drops whatever the
    clock has not reached yet, so the recording holds exactly what a listener
    would have heard.
    """

    def __init__(self, sample_rate: int = 22050, max_buffer_s: float = 0.3, reference: PlaybackListener | None = None) -> None:
        self.sample_rate = sample_rate
        self.max_buffer_s = max_buffer_s
        self.reference = reference
        """Told each chunk when the clock reaches it (the echo canceller's far-end reference)."""
        self._pieces: list[tuple[float, np.ndarray]] = []  # (start time, samples)
        self._clock_end = 0.0  # when the last queued sample will have been played
        self._handles: list[asyncio.TimerHandle] = []
        self.interruptions: list[float] = []

    async def write(self, chunk: AudioChunk, on_heard: HeardCallback | None = None) -> None:
        samples = resample(chunk.samples, chunk.sample_rate, self.sample_rate)
        now = time.monotonic()
        backlog = self._clock_end - now
        if backlog > self.max_buffer_s:
            await asyncio.sleep(backlog - self.max_buffer_s)
            now = time.monotonic()
        start = max(now, self._clock_end)
        self._pieces.append((start, samples))
        self._clock_end = start + len(samples) / self.sample_rate
        loop = asyncio.get_running_loop()
        if on_heard is not None:
            self._handles.append(loop.call_at(loop.time() + (start - time.monotonic()), on_heard, start))
        if self.reference is not None:
            # Told when played, not when written: an interrupt drops what the clock has not reached.
            self._handles.append(
                loop.call_at(loop.time() + (start - time.monotonic()), self.reference.played, samples, self.sample_rate, start)
            )

    async def drain(self) -> float:
        delay = self._clock_end - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        return self._clock_end

    def interrupt(self) -> None:
        now = time.monotonic()
        for handle in self._handles:
            handle.cancel()
        self._handles.clear()
        kept: list[tuple[float, np.ndarray]] = []
        for start, samples in self._pieces:
            if start >= now:
                continue
            played = int((now - start) * self.sample_rate)
            kept.append((start, samples[:played]))
        self._pieces = kept
        self._clock_end = min(self._clock_end, now)
        self.interruptions.append(now)

    def forget_played(self) -> None:
        """Let go of what has been played already (a run of hundreds of turns keeps no recording)."""
        now = time.monotonic()
        self._pieces = [(start, samples) for start, samples in self._pieces if start + len(samples) / self.sample_rate > now]
        # A callback already run is of no use; one still due is kept, or a unit would never be heard.
        self._handles = [h for h in self._handles if not h.cancelled() and h.when() > asyncio.get_running_loop().time()]
        self.interruptions.clear()

    def recording(self) -> AudioChunk:
        """Everything played so far, silence between pieces included."""
        if not self._pieces:
            return AudioChunk(np.zeros(0, np.float32), self.sample_rate)
        origin = self._pieces[0][0]
        end = max(start + len(s) / self.sample_rate for start, s in self._pieces)
        out = np.zeros(int(round((end - origin) * self.sample_rate)) + 1, np.float32)
        for start, samples in self._pieces:
            at = int(round((start - origin) * self.sample_rate))
            out[at : at + len(samples)] = samples[: len(out) - at]
        return AudioChunk(out, self.sample_rate)

    def save(self, path: Path) -> None:
        write_wav(path, self.recording())

    async def close(self) -> None:
        for handle in self._handles:
            handle.cancel()
        self._handles.clear()
