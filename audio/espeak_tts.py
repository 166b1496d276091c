"""Formant speech from the system's espeak-ng, for languages without a neural voice (Korean).

espeak-ng runs as a subprocess writing a WAV to stdout; audio is yielded as it
arrives, so playback can start before the whole text is synthesized.  The
text goes in on stdin, so nothing in it can be taken for an option.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shutil
import struct
from collections.abc import AsyncIterator
from dataclasses import dataclass

import numpy as np
import soxr

from audio.piper_tts import clean_text
from audio.protocols import AudioChunk

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class EspeakSettings:
    """How to run espeak-ng."""

    voice: str = "ko"
    """espeak-ng voice name (``espeak-ng --voices`` lists them)."""
    language: str = "ko"
    """Language this voice speaks, as the rest of hearth names it."""
    words_per_minute: int = 160
    """Speaking rate (espeak-ng ``-s``; its default is 175)."""
    pitch: int | None = None
    """Base pitch 0-99 (espeak-ng ``-p``); None keeps the voice's."""
    executable: str = "espeak-ng"
    """Program to run, a name on PATH or a path."""
    sample_rate: int = 22050
    """Rate of the yielded audio; espeak-ng's own output is resampled if it differs."""
    chunk_s: float = 0.2
    """Audio is yielded in pieces of about this length as espeak-ng produces it."""


class EspeakError(RuntimeError):
    """espeak-ng is missing or failed; the message says why in one line."""


class EspeakSynthesizer:
    """espeak-ng behind the :class:`~audio.protocols.Synthesizer` contract.

    ``await load()`` checks the program and the voice exist; ``await warm()``
    runs one short synthesis so the voice data is in the page cache.
    """

    def __init__(self, settings: EspeakSettings | None = None) -> None:
        self.settings = settings or EspeakSettings()
        self.language = self.settings.language
        self.sample_rate = self.settings.sample_rate
        self._program: str | None = None

    async def load(self) -> None:
        program = shutil.which(self.settings.executable)
        if program is None:
            raise EspeakError(f"{self.settings.executable} not found (install the espeak-ng package)")
        proc = await asyncio.create_subprocess_exec(
            program,
            f"--voices={self.settings.voice}",
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
        )
        out, _ = await proc.communicate()
        lines = out.decode("utf-8", "replace").splitlines()[1:]
        if not any(self.settings.voice in line.split() for line in lines):
            raise EspeakError(f"espeak-ng has no voice {self.settings.voice!r}")
        self._program = program

    async def warm(self) -> None:
        async for _ in self.synthesize("안녕하세요" if self.language == "ko" else "hello"):
            pass

    def _command(self) -> list[str]:
        s = self.settings
        command = [self._program or s.executable, "-v", s.voice, "-s", str(s.words_per_minute), "--stdout"]
        if s.pitch is not None:
            command += ["-p", str(s.pitch)]
        return command

    async def synthesize(self, text: str) -> AsyncIterator[AudioChunk]:
        """Yield the audio of ``text``; closing or cancelling the consumer kills espeak-ng."""
        text = clean_text(text)
        if not any(ch.isalnum() for ch in text):
            return
        try:
            proc = await asyncio.create_subprocess_exec(
                *self._command(),
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
        except FileNotFoundError:
            raise EspeakError(f"{self.settings.executable} not found (install the espeak-ng package)") from None
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        stderr_task = asyncio.create_task(proc.stderr.read())
        # Fed from a task: espeak-ng may start writing audio before it has read
        # all of a long text, and a full stdout pipe must not block our write.
        feeder = asyncio.create_task(_feed(proc.stdin, text.encode("utf-8")))
        try:
            rate, channels = await _read_wav_header(proc.stdout)
            frame = 2 * channels
            piece = max(frame, int(self.settings.chunk_s * rate) * frame)
            pending = b""
            while True:
                data = await proc.stdout.read(piece)
                if not data:
                    break
                pending += data
                usable = len(pending) // frame * frame
                if usable >= piece:
                    yield self._chunk(pending[:usable], rate, channels)
                    pending = pending[usable:]
            if len(pending) >= frame:
                yield self._chunk(pending[: len(pending) // frame * frame], rate, channels)
            code = await proc.wait()
            if code != 0:
                message = (await stderr_task).decode("utf-8", "replace").strip().splitlines()
                raise EspeakError(f"espeak-ng exited with {code}: {message[-1] if message else 'no message'}")
        finally:
            if proc.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                await proc.wait()
            feeder.cancel()
            stderr_task.cancel()

    def _chunk(self, pcm: bytes, rate: int, channels: int) -> AudioChunk:
        samples = np.frombuffer(pcm, "<i2").astype(np.float32) / 32768.0
        if channels > 1:
            samples = samples.reshape(-1, channels).mean(axis=1)
        if rate != self.sample_rate:
            samples = soxr.resample(samples, rate, self.sample_rate).astype(np.float32)
        return AudioChunk(np.ascontiguousarray(samples, dtype=np.float32), self.sample_rate)


async def _feed(stdin: asyncio.StreamWriter, data: bytes) -> None:
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        stdin.write(data)
        await stdin.drain()
        stdin.close()


async def _read_wav_header(stream: asyncio.StreamReader) -> tuple[int, int]:
    """Read a streamed RIFF header up to the data chunk; return (rate, channels).

    espeak-ng writes the header before it knows the length, so the sizes in it
    are placeholders and the data simply runs to the end of the stream.
    """
    try:
        riff = await stream.readexactly(12)
        if riff[:4] != b"RIFF" or riff[8:12] != b"WAVE":
            raise EspeakError("espeak-ng did not write a WAV stream")
        rate = channels = 0
        while True:
            tag, size = struct.unpack("<4sI", await stream.readexactly(8))
            if tag == b"data":
                break
            body = await stream.readexactly(size + (size & 1))
            if tag == b"fmt ":
                fmt, channels, rate, _, _, bits = struct.unpack("<HHIIHH", body[:16])
                if fmt != 1 or bits != 16:
                    raise EspeakError(f"espeak-ng wrote format {fmt} with {bits} bits, expected 16-bit PCM")
    except asyncio.IncompleteReadError:
        raise EspeakError("espeak-ng produced no audio") from None
    if rate <= 0 or channels <= 0:
        raise EspeakError("espeak-ng wrote a WAV without a format chunk")
    return rate, channels
