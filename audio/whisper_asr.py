"""Speech recognition with Whisper (faster-whisper on CTranslate2), with partial results.

Whisper is not a streaming model: every hypothesis is a fresh decode of the
whole utterance so far.  :class:`WhisperRecognizer` re-decodes the growing
utterance on a fixed cadence, one decode at a time, and keeps the partial text
from flickering with :class:`StablePrefix` (LocalAgreement-2: words two
consecutive hypotheses agree on are shown as stable).

Partials are for showing and for thinking ahead, so they are decoded in a short
encoder window (the utterance plus a margin), which is several times cheaper.
The final transcript is what hearth acts on, so it is decoded the way Whisper
was trained, in the full 30 s window (see :mod:`audio.whisper_decode` for why,
and for the checks every decode goes through).  A partial stands in for the
final only when it was decoded that same way, passed the checks and heard all
the audio; the final is always a whole hypothesis of its own, never the partials'
stable prefix with words missing at the end.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import AsyncIterator
from contextlib import aclosing
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

import numpy as np

from audio.protocols import AudioChunk, Transcript
from audio.utterance import SAMPLE_RATE, StablePrefix, UtteranceAudio, is_silence, partial_decodes
from audio.whisper_decode import (
    FULL_WINDOW_S,
    Checks,
    CTranslate2Decoder,
    Decode,
    WindowDecoder,
    WordProbabilities,
    WordScorer,
    collapse_repetition,
    distrust,
    load_whisper,
    speech_text,
)
from audio.whisper_rescore import Lexicon, RescoreWeights, choose, context_lexicon

logger = logging.getLogger(__name__)


Window = Literal["fit", "full"]


@dataclass(frozen=True)
class WhisperSettings:
    """How :class:`WhisperRecognizer` loads and runs Whisper."""

    model_dir: Path
    """CTranslate2 model directory (model.bin, config.json, tokenizer.json, vocabulary.txt)."""
    language: str = "en"
    """Language code passed to Whisper ("en", "ko", ...); English-only models accept only "en"."""
    compute_type: str = "int8"
    """CTranslate2 compute type; int8 was fastest on x86 and gave the same text as float32."""
    device: str = "cpu"
    """"cpu", or "cuda" (a Jetson with CTranslate2 built for CUDA; falls back to the CPU without it)."""
    cpu_threads: int = 2
    """Threads for one decode."""
    partial_interval_s: float = 0.5
    """Cadence of partial re-decodes; a tick that finds a decode still running is skipped."""
    min_partial_audio_s: float = 0.3
    """No partial decode before this much utterance audio has arrived."""
    lead_silence_s: float = 0.3
    """Silence put in front of the audio: tiny.en drops the first word without it."""
    beam_size: int = 1
    """1 is greedy search: several times cheaper than beam search on CPU, and no worse on commands here."""
    hypotheses: int = 1
    """How many hypotheses a final decode with a context keeps (beam search of that width);
    above 1 the one that best fits the kitchen's words is chosen (:mod:`audio.whisper_rescore`).
    Partials stay greedy."""
    score_words: bool = True
    """Say how sure the decoder is of each word of a final (``Transcript.word_probs``): the chosen
    text forced once more through the decoder, about 20 ms with tiny.en on two x86 cores."""
    rescore: RescoreWeights = field(default_factory=RescoreWeights)
    """How much the kitchen's words count when choosing among the hypotheses."""
    checks: Checks = field(default_factory=Checks)
    """When a decode is not believed, and when its text is a phantom of silence."""
    silence_rms: float = 0.001
    """If no 30 ms frame is louder than this RMS (-60 dBFS), the audio is silence and is not decoded."""
    max_tokens_per_s: float = 16.0
    """Cap on generated tokens per second of audio (plus 16), so a repetition loop ends early."""
    partial_window: Window = "fit"
    """Encoder window of partial decodes: "fit" pads the utterance only to ``min_window_s`` or the
    utterance plus ``window_margin_s`` (0.02-0.04 s of encoder with tiny.en here instead of 0.27 s);
    "full" pads it to Whisper's 30 s."""
    final_window: Window = "full"
    """Encoder window of the final decode.  "fit" is cheaper, and a decode that fails a check
    (empty, no end-of-text, a loop, a prompt echo) is done again in the full window; but a
    short window can also drop or change words without failing any check, differently on
    each CPU, so the default is "full"."""
    min_window_s: float = 8.0
    """Shortest encoder window in "fit" mode."""
    window_margin_s: float = 2.0
    """Silence beyond the utterance inside a "fit" window."""


@dataclass(frozen=True)
class Hypothesis:
    """A checked decode of the utterance so far."""

    text: str
    """What was heard (empty for silence or noise)."""
    trusted: bool
    """It passed the checks (see :func:`audio.whisper_decode.distrust`)."""
    window: Window
    """The window it was finally decoded in."""
    note: str = ""
    """Why a decode was redone or its text repaired, for the log and the timeline."""
    alternatives: tuple[tuple[str, float], ...] = ()
    """A final's n best that passed the checks (text, mean token log-probability), the decoder's best first."""
    avg_logprob: float | None = None
    """The mean token log-probability of ``text`` as decoded (None for silence, which is not decoded)."""
    no_speech_prob: float | None = None
    """The decoder's probability that the audio held no speech."""
    word_probs: WordProbabilities = ()
    """A final's words with how sure the decoder is of each (empty for a partial, or a decoder
    that cannot say)."""


class WhisperRecognizer:
    """Whisper behind the :class:`~audio.protocols.Recognizer` protocol.

    Call :meth:`load` (blocking, seconds) and :meth:`warm` once at start-up,
    from a thread.  ``decoder`` replaces the model with any function of the
    :class:`~audio.whisper_decode.WindowDecoder` shape (used to test the partial,
    checking and fallback logic with recorded decoder outputs, without a model).
    """

    sample_rate: int = SAMPLE_RATE

    def __init__(self, settings: WhisperSettings, decoder: WindowDecoder | None = None, lexicon: Lexicon = Lexicon()) -> None:
        self.settings = settings
        self.lexicon = lexicon
        """The kitchen's own text (requests hearth serves, units) that hypotheses are weighed by;
        each utterance's context adds the household's names."""
        self._context_lexicons: dict[str, Lexicon] = {}
        self.language = settings.language
        self._decoder: WindowDecoder | None = decoder
        self._injected = decoder is not None
        # One decode at a time per model, also across utterances: a cancelled
        # utterance's decode may still be running when the next one starts.
        self._lock = threading.Lock()
        self.last_decode_s: float | None = None
        """Wall time of the latest final decode (a fallback included)."""
        self.last_final: Hypothesis | None = None
        """The latest final hypothesis, with the note on how it was reached."""

    @property
    def loaded(self) -> bool:
        return self._decoder is not None

    def load(self) -> None:
        """Load the model (blocking); safe to call more than once."""
        if self._decoder is not None:
            return
        s = self.settings
        with self._lock:
            if self._decoder is None:
                model = load_whisper(Path(s.model_dir), s.compute_type, s.cpu_threads, s.language, s.device)
                self._decoder = CTranslate2Decoder(model, s.language, s.beam_size, s.max_tokens_per_s, s.checks)

    def warm(self) -> None:
        """Decode 1 s of silence in each window used, so that no real decode is the first (blocking)."""
        if self._injected:
            return
        self.load()
        silence = np.zeros(SAMPLE_RATE, dtype=np.float32)
        for window in {self.settings.partial_window, self.settings.final_window}:
            self._run(silence, window, "")

    def decode(self, samples: np.ndarray, context: str = "") -> str:
        """Blocking final decode of one utterance (16 kHz float32) to text."""
        return self.final(samples, context).text

    def final(self, samples: np.ndarray, context: str = "") -> Transcript:
        """Blocking final decode of one utterance (16 kHz float32), with its scores."""
        hypothesis = self._hypothesis(samples, True, context, None)
        if hypothesis is None:
            return Transcript("", True, audio_s=len(samples) / SAMPLE_RATE)
        return _final_transcript(hypothesis, len(samples))

    def _window_s(self, window: Window, audio_samples: int) -> float:
        s = self.settings
        if window == "full":
            return FULL_WINDOW_S
        return min(FULL_WINDOW_S, max(s.min_window_s, audio_samples / SAMPLE_RATE + s.window_margin_s))

    def _run(self, samples: np.ndarray, window: Window, context: str, hypotheses: int = 1) -> Decode:
        assert self._decoder is not None
        lead = np.zeros(int(self.settings.lead_silence_s * SAMPLE_RATE), dtype=np.float32)
        audio = np.concatenate([lead, samples.astype(np.float32, copy=False)])
        window_s = self._window_s(window, len(audio))
        if hypotheses > 1:
            return self._decoder(audio, window_s, context, hypotheses)
        return self._decoder(audio, window_s, context)

    def _lexicon_for(self, context: str) -> Lexicon:
        lexicon = self._context_lexicons.get(context)
        if lexicon is None:
            lexicon = self.lexicon | context_lexicon(context)
            if len(self._context_lexicons) > 16:
                self._context_lexicons.clear()
            self._context_lexicons[context] = lexicon
        return lexicon

    def _checked_alternatives(self, decode: Decode, context: str) -> list[tuple[str, float]]:
        """The n best that pass the checks, the decoder's best first."""
        return [
            (text, score) for text, score in decode.alternatives
            if text and distrust(replace(decode, text=text), context, self.settings.checks) is None
        ]

    def _rescored(self, decode: Decode, candidates: list[tuple[str, float]], context: str) -> str:
        """The alternative that best fits the kitchen's words, among those that pass the checks."""
        if len(candidates) < 2 or candidates[0][0] != decode.text:
            return decode.text
        return candidates[choose(candidates, self._lexicon_for(context), self.settings.rescore)][0]

    def _hypothesis(
        self, samples: np.ndarray, final: bool, context: str, cancel: threading.Event | None, wanted: int = 1
    ) -> Hypothesis | None:
        """Decode and check (blocking); None if ``cancel`` was set before the model was ours.
        ``wanted``: the n best a final is asked for, at least (beam search that wide)."""
        s = self.settings
        window: Window = s.final_window if final else s.partial_window
        if cancel is not None and cancel.is_set():
            return None
        if is_silence(samples, s.silence_rms):
            return Hypothesis("", True, window, no_speech_prob=1.0)
        # Only a final with the household's words is worth a beam search, unless its caller wants the n best.
        hypotheses = max(s.hypotheses if context.strip() else 1, wanted) if final else 1
        if self._decoder is None:
            logger.warning("Whisper model used before load(); loading now")
            self.load()
        with self._lock:
            # A cancelled utterance's decode may have held the lock until now.
            if cancel is not None and cancel.is_set():
                return None
            decode = self._run(samples, window, context, hypotheses)
            spent = decode.seconds
            reason = distrust(decode, context, s.checks)
            text = speech_text(decode, s.checks)
            note = ""
            if final and window == "fit" and (reason is not None or not text):
                # Outside its training the short window fails in ways that change with the CPU;
                # the full window is what Whisper was trained on.
                note = f"fit window distrusted ({reason or 'empty'}); decoded again in the full window"
                window = "full"
                decode = self._run(samples, window, context, hypotheses)
                spent += decode.seconds
                reason = distrust(decode, context, s.checks)
                text = speech_text(decode, s.checks)
            alternatives: list[tuple[str, float]] = []
            words: WordProbabilities = ()
            logprob = decode.avg_logprob
            if final:
                self.last_decode_s = spent
                alternatives = self._checked_alternatives(decode, context) if reason is None and text else []
                if alternatives:
                    chosen = self._rescored(decode, alternatives, context)
                    if chosen != text:
                        logprob = dict(alternatives).get(chosen, logprob)
                        note = (note + "; " if note else "") + f"the kitchen's words chose {chosen!r} over {text!r}"
                        text = chosen
                if reason in ("repetition", "no_end") and text:
                    repaired = collapse_repetition(text)
                    note = (note + "; " if note else "") + f"{reason}: {text!r} kept as {repaired!r}"
                    text = repaired
                if note:
                    logger.info("final decode: %s", note)
                if text and s.score_words and isinstance(self._decoder, WordScorer):
                    # Scored on the audio just decoded, so still under the lock.
                    words = self._decoder.word_probabilities(text)
        return Hypothesis(text, reason is None, window, note, tuple(alternatives), logprob, decode.no_speech_prob, words)

    def _whole(self, hypothesis: Hypothesis) -> bool:
        """Whether a partial is what the final decode of the same audio would say."""
        return hypothesis.trusted and hypothesis.window == self.settings.final_window and (bool(hypothesis.text) or hypothesis.window == "full")

    async def transcribe(self, audio: AsyncIterator[AudioChunk], context: str = "", *, hypotheses: int = 1) -> AsyncIterator[Transcript]:
        """Consume one utterance; yield partials while it grows and exactly one final at its end.

        ``context`` is text likely to be said (see :class:`~audio.protocols.Recognizer`); it
        becomes Whisper's prompt.  ``hypotheses`` above 1: the final is a beam search at least
        that wide, and its checked n best are the final's ``alternatives`` (a partial decode, being
        greedy, never stands in for such a final).
        """
        s = self.settings
        cancel = threading.Event()
        utterance = UtteranceAudio()
        policy = StablePrefix()
        whole: tuple[int, Hypothesis] | None = None  # (samples covered, decode) of the newest partial that can be the final

        def partial(covered: int, hypothesis: Hypothesis) -> Transcript | None:
            nonlocal whole
            if not hypothesis.trusted:
                logger.debug("partial not shown: %r", hypothesis.text[:80])
                return None
            candidate = hypothesis.text if self._whole(hypothesis) else None
            if candidate is not None:
                whole = (covered, hypothesis)
            shown, stable = policy.update(hypothesis.text)
            # Yielded even when the text is unchanged: that it now covers more
            # audio tells the listener whether it can stand in for the final.
            return Transcript(
                shown, False, stable, covered / SAMPLE_RATE, candidate,
                avg_logprob=hypothesis.avg_logprob, no_speech_prob=hypothesis.no_speech_prob,
            )

        def decode(samples: np.ndarray) -> Hypothesis | None:
            return self._hypothesis(samples, False, context, cancel)

        try:
            decodes = partial_decodes(audio, utterance, "Whisper", s.partial_interval_s, int(s.min_partial_audio_s * SAMPLE_RATE), decode)
            async with aclosing(decodes):
                async for covered, hypothesis in decodes:
                    shown = partial(covered, hypothesis)
                    if shown is not None:
                        # The last may already cover all the speech, and the listener stop there.
                        yield shown

            total = utterance.length
            if total == 0:
                yield Transcript("", True, hypothesis="")
            elif whole is not None and whole[0] == total and hypotheses <= 1:
                logger.debug("final reuses the last partial decode")
                yield _final_transcript(whole[1], total)
            else:
                hypothesis = await asyncio.to_thread(self._hypothesis, utterance.snapshot(), True, context, cancel, hypotheses)
                self.last_final = hypothesis
                if hypothesis is None:
                    yield Transcript("", True, audio_s=total / SAMPLE_RATE, hypothesis="")
                else:
                    yield _final_transcript(hypothesis, total)
        finally:
            cancel.set()


def _final_transcript(hypothesis: Hypothesis, samples: int) -> Transcript:
    text = hypothesis.text
    return Transcript(
        text, True, len(text), samples / SAMPLE_RATE, text, hypothesis.alternatives,
        avg_logprob=hypothesis.avg_logprob if text else None, no_speech_prob=hypothesis.no_speech_prob,
        word_probs=hypothesis.word_probs,
    )
