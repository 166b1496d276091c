"""Speech recognition with Moonshine base (English), with partials that make the final cheap.

Every partial decodes the whole utterance so far, as Whisper's do, but Moonshine's encoder
costs what the audio is long, and each decode checks the previous partial's tokens in one
decoder pass (:func:`audio.moonshine_model.greedy`).  At the end of the utterance the final is
the same greedy decode of all the audio, its draft the last partial: when the user's last
words were already in it, the final costs one encoder run and one decoder pass.

Moonshine takes no prompt.  The household's words are heard the other way Whisper's are: a
final with a context may be a beam search whose best hypotheses are weighed by the kitchen's
words (:mod:`audio.whisper_rescore`), and those hypotheses are the final's ``alternatives``, so
an act must be borne out by each rival hearing.  The final says how sure it is of each word
(``Transcript.word_probs``) and of the whole (``avg_logprob``), as Whisper's does.
"""

from __future__ import annotations

import asyncio
import logging
import math
import threading
import time
from collections.abc import AsyncIterator
from contextlib import aclosing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from audio.moonshine_model import Decoded, Hypothesis, MoonshineFiles, MoonshineModel
from audio.protocols import AudioChunk, Transcript
from audio.utterance import SAMPLE_RATE, StablePrefix, UtteranceAudio, is_silence, partial_decodes
from audio.whisper_decode import collapse_repetition, group_words
from audio.whisper_rescore import Lexicon, RescoreWeights, choose, context_lexicon

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class MoonshineSettings:
    """How :class:`MoonshineRecognizer` loads and runs Moonshine."""

    model_dir: Path
    """The converted model: encoder.onnx, decoder.onnx, tokenizer.bin (``hearth models install moonshine-base-en``)."""
    cpu_threads: int = 2
    """Threads for one decode."""
    pack_weights: bool = False
    """Let onnxruntime keep packed copies of the weights: a decoder step about an eighth faster
    on x86, for about 165 MB more memory."""
    partial_interval_s: float = 0.25
    """Cadence of partial decodes; a tick that finds a decode still running is skipped."""
    min_partial_audio_s: float = 0.3
    """No partial decode before this much utterance audio has arrived."""
    min_audio_s: float = 0.25
    """Shorter audio is padded with silence to this length (the encoder needs a few frames)."""
    tail_silence_s: float = 0.3
    """Silence put after the audio of every decode.  Audio cut off in the middle of a word (every
    partial's) sent Moonshine into loops ("mop, mop, mop", a sentence said twice) in 10 of 47
    partials of six requests; with 0.15 or 0.3 s of silence after it, in none, and 32 rather than
    24 partials began as the final does."""
    silence_rms: float = 0.001
    """If no 30 ms frame is louder than this RMS (-60 dBFS), the audio is silence and is not decoded."""
    max_tokens_per_s: float = 10.0
    """Cap on tokens per second of audio (plus ``token_slack``), so a repetition loop ends early;
    English speech runs at about 3-5 of Moonshine's tokens a second."""
    token_slack: int = 8
    """Tokens allowed beyond the per-second cap."""
    hypotheses: int = 1
    """How many hypotheses a final with a context keeps (a beam search this wide); above 1 the one
    that best fits the kitchen's words is heard, and the others are its rivals.  1 is the greedy
    decode that checks the last partial, the cheapest final."""
    rescore: RescoreWeights = field(default_factory=RescoreWeights)
    """How much the kitchen's words count when choosing among the hypotheses."""


@dataclass(frozen=True)
class MoonshineHypothesis:
    """A decode of the utterance so far, with its text."""

    text: str
    decoded: Decoded
    samples: int
    """Utterance samples it covers."""
    note: str = ""
    alternatives: tuple[tuple[str, float], ...] = ()
    """A beam search's hypotheses (text, mean token log-probability), the decoder's best first."""

    @property
    def avg_logprob(self) -> float | None:
        scores = self.decoded.logprobs
        return sum(scores) / len(scores) if scores else None


class MoonshineRecognizer:
    """Moonshine behind the :class:`~audio.protocols.Recognizer` protocol.

    Call :meth:`load` (blocking, about a second) and :meth:`warm` once at start-up, from a
    thread.  ``model`` replaces the onnxruntime model with anything of its shape (tests)."""

    sample_rate: int = SAMPLE_RATE
    language: str = "en"

    def __init__(self, settings: MoonshineSettings, model: Any = None, lexicon: Lexicon = Lexicon()) -> None:
        self.settings = settings
        self.lexicon = lexicon
        """The kitchen's own text the hypotheses are weighed by; each utterance's context adds the household's names."""
        self._model: Any = model
        self._injected = model is not None
        # One decode at a time per model, also across utterances: a cancelled
        # utterance's decode may still be running when the next one starts.
        self._lock = threading.Lock()
        self.last_decode_s: float | None = None
        """Wall time of the latest final decode (0 when a partial already covered all the audio)."""
        self.last_final: MoonshineHypothesis | None = None
        """The latest final, with how much of its draft it accepted."""

    @property
    def loaded(self) -> bool:
        return self._model is not None and (self._injected or self._model.loaded)

    def load(self) -> None:
        """Load the model (blocking); safe to call more than once."""
        with self._lock:
            if self._model is None:
                s = self.settings
                model = MoonshineModel(MoonshineFiles.in_dir(s.model_dir), s.cpu_threads, s.pack_weights)
                model.load()
                self._model = model

    def warm(self) -> None:
        """Decode a second of quiet noise, so that no real decode is the first (blocking)."""
        if self._injected:
            return
        self.load()
        noise = np.random.default_rng(0).normal(0.0, 0.01, SAMPLE_RATE).astype(np.float32)
        with self._lock:
            self._model.transcribe(noise, 4)

    def decode(self, samples: np.ndarray, context: str = "") -> str:
        """Blocking final decode of one utterance (16 kHz float32) to text."""
        return self.final(samples, context).text

    def final(self, samples: np.ndarray, context: str = "") -> Transcript:
        """Blocking final decode of one utterance (16 kHz float32), with its scores."""
        hypothesis = self._hypothesis(np.asarray(samples, dtype=np.float32), (), None, self._width(context, 1))
        if hypothesis is None:
            return Transcript("", True, audio_s=len(samples) / SAMPLE_RATE)
        return self._final_transcript(hypothesis)

    def _max_tokens(self, samples: int) -> int:
        s = self.settings
        return int(math.ceil(samples / SAMPLE_RATE * s.max_tokens_per_s)) + s.token_slack

    def _width(self, context: str, wanted: int) -> int:
        """How many hypotheses a final keeps: only one with the household's words is worth a beam search,
        unless its caller wants the n best."""
        return max(self.settings.hypotheses if context.strip() else 1, wanted)

    def _hypothesis(
        self, samples: np.ndarray, draft: tuple[int, ...], cancel: threading.Event | None, width: int = 1, context: str = "",
    ) -> MoonshineHypothesis | None:
        """Decode ``samples`` checking ``draft``, or by a beam search ``width`` wide (blocking); None if
        cancelled before the model was ours."""
        s = self.settings
        if cancel is not None and cancel.is_set():
            return None
        if is_silence(samples, s.silence_rms):
            return MoonshineHypothesis("", Decoded((), (), True), len(samples), "silence")
        if self._model is None:
            logger.warning("Moonshine model used before load(); loading now")
            self.load()
        audio = np.concatenate([samples, np.zeros(int(s.tail_silence_s * SAMPLE_RATE), dtype=np.float32)])
        shortest = int(s.min_audio_s * SAMPLE_RATE)
        if len(audio) < shortest:
            audio = np.concatenate([audio, np.zeros(shortest - len(audio), dtype=np.float32)])
        with self._lock:
            if cancel is not None and cancel.is_set():
                return None
            if width > 1:
                return self._chosen(audio, len(samples), width, context, cancel)
            decoded = self._model.transcribe(audio, self._max_tokens(len(audio)), draft, cancel)
        text = self._model.tokenizer.decode(decoded.tokens)
        note = ""
        if not decoded.ended and text:
            repaired = collapse_repetition(text)
            note = f"no end of text: {text!r} kept as {repaired!r}"
            text = repaired
        return MoonshineHypothesis(text, decoded, len(samples), note)

    def _chosen(self, audio: np.ndarray, samples: int, width: int, context: str, cancel: threading.Event | None) -> MoonshineHypothesis:
        """The beam search's hypothesis that best fits the kitchen's words, the others its alternatives
        (called holding the lock)."""
        started = time.perf_counter()
        found: list[Hypothesis] = self._model.hypotheses(audio, self._max_tokens(len(audio)), width, cancel)
        seconds = time.perf_counter() - started
        tokenizer = self._model.tokenizer
        heard = [(h, tokenizer.decode(h.tokens)) for h in found if h.ended]
        heard = [(h, text) for h, text in heard if text]
        if not heard:
            best = found[0] if found else Hypothesis((), (), True)
            text = tokenizer.decode(best.tokens)
            repaired = collapse_repetition(text) if text else text
            note = f"no hypothesis ended: {text!r} kept as {repaired!r}" if text else ""
            return MoonshineHypothesis(repaired, Decoded(best.tokens, best.logprobs, best.ended, 0, 0, seconds), samples, note)
        alternatives = tuple((text, round(h.score, 4)) for h, text in heard)
        index = choose(list(alternatives), self.lexicon | context_lexicon(context), self.settings.rescore) if len(heard) > 1 else 0
        chosen, text = heard[index]
        note = f"the kitchen's words chose {text!r} over {heard[0][1]!r}" if index else ""
        decoded = Decoded(chosen.tokens, chosen.logprobs[: len(chosen.tokens)], True, 0, 0, seconds)
        return MoonshineHypothesis(text, decoded, samples, note, alternatives)

    def _word_probs(self, hypothesis: MoonshineHypothesis) -> tuple[tuple[str, float], ...]:
        decoded = hypothesis.decoded
        if not decoded.tokens or not decoded.ended:
            return ()
        tokenizer = self._model.tokenizer
        pieces = [tokenizer.piece(t) for t in decoded.tokens]
        words = group_words(pieces, [math.exp(p) for p in decoded.logprobs])
        return tuple(("".join(pieces[i] for i in span).strip(), p) for span, p in words)

    def _final_transcript(self, hypothesis: MoonshineHypothesis) -> Transcript:
        text = hypothesis.text
        return Transcript(
            text, True, len(text), hypothesis.samples / SAMPLE_RATE, text, hypothesis.alternatives,
            avg_logprob=hypothesis.avg_logprob if text else None, word_probs=self._word_probs(hypothesis),
        )

    async def transcribe(self, audio: AsyncIterator[AudioChunk], context: str = "", *, hypotheses: int = 1) -> AsyncIterator[Transcript]:
        """Consume one utterance; yield partials while it grows and exactly one final at its end.

        ``context`` is the household's words (see :class:`~audio.protocols.Recognizer`): with
        ``hypotheses`` in the settings above 1 it makes the final a beam search weighed by them.
        ``hypotheses`` above 1 asks for the final's n best at least that many.
        """
        s = self.settings
        cancel = threading.Event()
        utterance = UtteranceAudio()
        policy = StablePrefix()
        newest: MoonshineHypothesis | None = None

        def draft() -> tuple[int, ...]:
            return newest.decoded.tokens if newest is not None else ()

        def decode(samples: np.ndarray) -> MoonshineHypothesis | None:
            # No decode runs while ``newest`` changes: the next one starts only after this one's result is taken.
            return self._hypothesis(samples, draft(), cancel)

        try:
            decodes = partial_decodes(audio, utterance, "Moonshine", s.partial_interval_s, int(s.min_partial_audio_s * SAMPLE_RATE), decode)
            async with aclosing(decodes):
                async for _, hypothesis in decodes:
                    newest = hypothesis
                    shown, stable = policy.update(hypothesis.text)
                    # A greedy decode of the same audio is what the final would be, so every partial can stand in for it.
                    yield Transcript(
                        shown, False, stable, hypothesis.samples / SAMPLE_RATE, hypothesis.text,
                        avg_logprob=hypothesis.avg_logprob,
                    )

            total = utterance.length
            if total == 0:
                yield Transcript("", True, hypothesis="")
                return
            width = self._width(context, hypotheses)
            if newest is not None and newest.samples == total and width <= 1:
                logger.debug("final reuses the last partial decode")
                self.last_decode_s = 0.0
                hypothesis: MoonshineHypothesis | None = newest
            else:
                hypothesis = await asyncio.to_thread(self._hypothesis, utterance.snapshot(), draft(), cancel, width, context)
                self.last_decode_s = hypothesis.decoded.seconds if hypothesis is not None else None
            self.last_final = hypothesis
            if hypothesis is None:
                yield Transcript("", True, audio_s=total / SAMPLE_RATE, hypothesis="")
            else:
                if hypothesis.note:
                    logger.info("final decode: %s", hypothesis.note)
                yield self._final_transcript(hypothesis)
        finally:
            cancel.set()
