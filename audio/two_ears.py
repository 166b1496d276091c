"""Two recognizers that hear each utterance, so that what they hear differently is asked, not done.

:class:`TwoEars` is a :class:`~audio.protocols.Recognizer`: the first ear streams the utterance as
it would alone (its partials, its final).  The second ear decodes the whole utterance once, the
moment its audio ends, in a thread beside the first ear's final decode (two cores, two decodes), and
the first ear's final carries its words (``Transcript.second_hearing``).  The two are different
models (Whisper and Moonshine: another training, another decoder), so where noise makes one of
them invent a word, the other seldom invents the same one.  What hearth makes of a disagreement is
the hearing's (:mod:`agent.listening.hearing`): an act whose values the second ear's words do not
bear out is asked back.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Protocol

import numpy as np

from audio.protocols import AudioChunk, Recognizer, Transcript

log = logging.getLogger(__name__)


class WholeDecoder(Protocol):
    """A recognizer that can decode a whole utterance at once (both of hearth's offline ones can)."""

    sample_rate: int

    def final(self, samples: np.ndarray, context: str = "") -> Transcript:
        """Blocking decode of one utterance (16 kHz float32)."""
        ...

    def load(self) -> None: ...

    def warm(self) -> None: ...


class TwoEars:
    """The first ear's transcripts, its final carrying what the second ear heard."""

    def __init__(self, first: Recognizer, second: WholeDecoder) -> None:
        if first.sample_rate != second.sample_rate:
            raise ValueError("the two ears must hear at the same rate")
        self.first = first
        self.second = second
        self.language = first.language
        self.sample_rate = first.sample_rate
        self.last_second_s: float | None = None
        """Wall time of the second ear's latest decode."""

    @property
    def last_decode_s(self) -> float | None:
        """The first ear's latest final decode (the loop's figure)."""
        return getattr(self.first, "last_decode_s", None)

    def load(self) -> None:
        for ear in (self.first, self.second):
            load = getattr(ear, "load", None)
            if load is not None:
                load()

    def warm(self) -> None:
        for ear in (self.first, self.second):
            warm = getattr(ear, "warm", None)
            if warm is not None:
                warm()

    def final(self, samples: np.ndarray, context: str = "") -> Transcript:
        """Both ears on a whole utterance, one after the other (the offline benches)."""
        final = self.first.final(samples, context)  # type: ignore[attr-defined]
        return replace(final, second_hearing=self._second(samples, context))

    def _second(self, samples: np.ndarray, context: str) -> str:
        began = time.perf_counter()
        text = self.second.final(samples, context).text
        self.last_second_s = time.perf_counter() - began
        return text

    async def transcribe(self, audio: AsyncIterator[AudioChunk], context: str = "", *, hypotheses: int = 1) -> AsyncIterator[Transcript]:
        heard: list[np.ndarray] = []
        second: asyncio.Future[str] | None = None

        async def tee() -> AsyncIterator[AudioChunk]:
            nonlocal second
            async for chunk in audio:
                heard.append(chunk.samples)
                yield chunk
            samples = np.concatenate(heard) if heard else np.zeros(0, np.float32)
            # The utterance is whole: the second ear starts now, beside the first ear's final.
            second = asyncio.ensure_future(asyncio.to_thread(self._second, samples, context))

        try:
            async for transcript in self.first.transcribe(tee(), context, hypotheses=hypotheses):
                if transcript.is_final and second is not None:
                    try:
                        transcript = replace(transcript, second_hearing=await second)
                    except Exception:  # noqa: BLE001 - one ear failing leaves the other's hearing
                        log.exception("the second ear failed; the first ear's hearing stands alone")
                yield transcript
        finally:
            if second is not None and not second.done():
                second.cancel()
