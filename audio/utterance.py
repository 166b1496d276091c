"""What every recognizer that re-decodes a growing utterance shares: its audio, the silence
check, the cadence of its partial decodes, and the stable prefix of its partials."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar

import numpy as np

from audio.protocols import AudioChunk
from audio.whisper_decode import normalize

SAMPLE_RATE = 16000

R = TypeVar("R")


def is_silence(samples: np.ndarray, threshold_rms: float) -> bool:
    """True when no 30 ms frame of ``samples`` is louder than ``threshold_rms``."""
    frame = SAMPLE_RATE * 30 // 1000
    n = len(samples) - len(samples) % frame
    if n == 0:
        return float(np.sqrt(np.mean(np.square(samples)))) <= threshold_rms if len(samples) else True
    frames = samples[:n].reshape(-1, frame).astype(np.float64)
    return float(np.sqrt(np.mean(np.square(frames), axis=1)).max()) <= threshold_rms


def _word_key(word: str) -> str:
    return normalize(word) or word


class StablePrefix:
    """LocalAgreement-2 over whole-utterance partial hypotheses, for showing them.

    Each hypothesis is split into words.  The words two consecutive hypotheses
    agree on (case and punctuation aside) are committed, except the newest
    hypothesis' last word, which may be a word cut in half.  Committed words
    are kept in every later partial, followed by the newest hypothesis' words
    after that position.  The final transcript is not built from them: it is
    the final decode's own hypothesis, which hears all the audio and may
    revise what the partials showed.
    """

    def __init__(self) -> None:
        self._committed: list[str] = []
        self._previous: list[str] | None = None

    @property
    def committed(self) -> str:
        return " ".join(self._committed)

    def update(self, hypothesis: str) -> tuple[str, int]:
        """Take a partial hypothesis; return the text to show and how many leading chars are stable."""
        words = hypothesis.split()
        if self._previous is not None:
            agreed = 0
            for a, b in zip(self._previous, words, strict=False):
                if _word_key(a) != _word_key(b):
                    break
                agreed += 1
            agreed = min(agreed, len(words) - 1)
            if agreed > len(self._committed):
                # The newer spelling wins ("timer." becomes "timer," mid-sentence).
                self._committed = self._committed + words[len(self._committed) : agreed]
        self._previous = words
        stable = " ".join(self._committed)
        return " ".join(self._committed + words[len(self._committed) :]), len(stable)


class UtteranceAudio:
    """The audio of one utterance so far."""

    def __init__(self) -> None:
        self._parts: list[np.ndarray] = []
        self.length = 0

    def append(self, samples: np.ndarray) -> None:
        self._parts.append(samples)
        self.length += len(samples)

    def snapshot(self) -> np.ndarray:
        if len(self._parts) != 1:
            whole = np.concatenate(self._parts) if self._parts else np.zeros(0, dtype=np.float32)
            self._parts = [whole]
        return self._parts[0]


async def read_utterance(audio: AsyncIterator[AudioChunk], utterance: UtteranceAudio, who: str) -> None:
    """Append every chunk of ``audio`` to ``utterance``; a chunk at another rate is an error naming ``who``."""
    async for chunk in audio:
        if chunk.sample_rate != SAMPLE_RATE:
            raise ValueError(f"{who} needs {SAMPLE_RATE} Hz audio, got a {chunk.sample_rate} Hz chunk")
        samples = np.asarray(chunk.samples, dtype=np.float32).reshape(-1)
        if len(samples):
            utterance.append(samples)


async def partial_decodes(
    audio: AsyncIterator[AudioChunk], utterance: UtteranceAudio, who: str, interval_s: float, min_samples: int,
    decode: Callable[[np.ndarray], R | None],
) -> AsyncIterator[tuple[int, R]]:
    """Read ``audio`` into ``utterance`` and decode the utterance so far as it grows.

    Every ``interval_s`` (counted from the first request, not the first chunk) ``decode`` runs
    in a thread on a snapshot, one decode at a time, once the utterance holds ``min_samples``
    and more than the last decode that gave a result covered; a tick that finds a decode still
    running is skipped, not made up.  Yields (samples covered, result) for each decode that
    gave a result (None is no result), the one in flight when the audio ends included.  The
    audio source's error is raised here; closing this generator stops reading and drops the
    decode in flight (its thread cannot be stopped).
    """
    loop = asyncio.get_running_loop()
    reader = asyncio.ensure_future(read_utterance(audio, utterance, who))
    job: asyncio.Future[R | None] | None = None
    job_len = 0
    covered = 0
    next_tick = loop.time() + interval_s
    try:
        while not reader.done():
            waiting: set[asyncio.Future[Any]] = {reader}
            timeout: float | None = None
            if job is not None:
                waiting.add(job)
            else:
                timeout = max(0.0, next_tick - loop.time())
            await asyncio.wait(waiting, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
            now = loop.time()
            if job is not None and job.done():
                result = job.result()
                job = None
                if result is not None:
                    covered = job_len
                    yield job_len, result
                while next_tick <= now:
                    next_tick += interval_s
                continue
            if reader.done():
                break
            if job is None and now >= next_tick:
                while next_tick <= now:
                    next_tick += interval_s
                if utterance.length >= min_samples and utterance.length != covered:
                    job_len = utterance.length
                    job = asyncio.ensure_future(asyncio.to_thread(decode, utterance.snapshot()))
        reader.result()
        if job is not None:
            result = await job
            job = None
            if result is not None:
                yield job_len, result
    finally:
        if reader.done() and not reader.cancelled():
            reader.exception()  # retrieved, so asyncio does not log it a second time
        reader.cancel()
        if job is not None:
            job.cancel()
