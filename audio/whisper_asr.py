"""Speech recognition with Whisper (faster-whisper on CTranslate2), with partial results.

Whisper is not a streaming model: every hypothesis is a fresh decode of the
whole utterance so far.  On a 2-core CPU one decode costs about the same
(~0.35 s for tiny.en) whatever the audio length, because the encoder always
sees a 30 s window.  :class:`WhisperRecognizer` therefore re-decodes the
growing utterance on a fixed cadence, one decode at a time, and keeps the
partial text from flickering with :class:`StablePrefix` (LocalAgreement-2:
words two consecutive hypotheses agree on are committed and never retracted).

Whisper also invents text for silence and noise ("you", "Thank you.",
"이 영상은"), so each hypothesis goes through :func:`filter_hypothesis`.
"""

from __future__ import annotations

import asyncio
import logging
import re
import threading
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from audio.protocols import AudioChunk, Transcript

logger = logging.getLogger(__name__)

SAMPLE_RATE = 16000

DecodeFn = Callable[[np.ndarray], str]
"""Blocking decode of one utterance (16 kHz float32, no padding) to text; ``""`` for no speech."""

DEFAULT_HALLUCINATIONS: tuple[str, ...] = (
    "you",
    "thank you",
    "thanks for watching",
    "thank you for watching",
    "thank you so much for watching",
    "please subscribe",
    "bye",
    "i'm",
    "so",
    "uh",
    "um",
    "이 영상은",
    "감사합니다",
    "시청해 주셔서 감사합니다",
    "구독과 좋아요 부탁드립니다",
    "아",
    "음",
)
"""What Whisper says over silence or noise; dropped only when the model also doubts there was speech."""


@dataclass(frozen=True)
class WhisperSettings:
    """How :class:`WhisperRecognizer` loads and runs Whisper."""

    model_dir: Path
    """CTranslate2 model directory (model.bin, config.json, tokenizer.json, vocabulary.txt)."""
    language: str = "en"
    """Language code passed to Whisper ("en", "ko", ...); English-only models accept only "en"."""
    compute_type: str = "int8"
    """CTranslate2 compute type; int8 was fastest on x86 and gave the same text as float32."""
    cpu_threads: int = 2
    """Threads for one decode."""
    partial_interval_s: float = 0.5
    """Cadence of partial re-decodes; a tick that finds a decode still running is skipped."""
    min_partial_audio_s: float = 0.3
    """No partial decode before this much utterance audio has arrived."""
    lead_silence_s: float = 0.3
    """Silence put in front of the audio: tiny.en drops the first word without it."""
    beam_size: int = 1
    """1 is greedy search: several times cheaper than beam search on CPU."""
    initial_prompt: str | None = None
    """Optional text to bias the vocabulary (e.g. product names); no previous-text conditioning."""
    no_speech_threshold: float = 0.6
    """A segment with no_speech_prob above this and avg_logprob below ``logprob_threshold`` is dropped."""
    logprob_threshold: float = -1.0
    """See ``no_speech_threshold``."""
    compression_ratio_threshold: float = 2.4
    """A segment whose text compresses better than this is a repetition loop and is dropped."""
    hallucination_no_speech: float = 0.5
    """A text in ``hallucinations`` is dropped when no_speech_prob exceeds this."""
    hallucinations: tuple[str, ...] = DEFAULT_HALLUCINATIONS
    """Known phantom texts, compared case-, space- and punctuation-insensitively."""
    silence_rms: float = 0.001
    """If no 30 ms frame is louder than this RMS (-60 dBFS), the audio is silence and is not decoded."""
    max_tokens_per_s: float = 16.0
    """Cap on generated tokens per second of audio (plus 16), so a repetition loop ends early."""
    window: str = "full"
    """Encoder window: "full" pads every utterance to Whisper's 30 s; "fit" pads it only to
    ``min_window_s`` or the utterance plus ``window_margin_s``. The encoder's cost grows with
    the window (0.27 s for 30 s against 0.02-0.04 s for 4-10 s with tiny.en here), and on
    commands both gave the same text (see the README for the measured error rates)."""
    min_window_s: float = 8.0
    """Shortest encoder window in "fit" mode."""
    window_margin_s: float = 2.0
    """Silence beyond the utterance inside a "fit" window."""


@dataclass(frozen=True)
class _Segment:
    """A decode's text with the scores the hallucination filter reads."""

    text: str
    no_speech_prob: float
    avg_logprob: float
    compression_ratio: float


class SegmentLike(Protocol):
    """The fields of a faster-whisper ``Segment`` that the hallucination filter reads."""

    text: str
    no_speech_prob: float
    avg_logprob: float
    compression_ratio: float


_NON_WORD = re.compile(r"[\W_]+")


def _normalize(text: str) -> str:
    return _NON_WORD.sub("", text.lower())


def filter_hypothesis(segments: Sequence[SegmentLike], settings: WhisperSettings) -> str:
    """Join the segments that look like real speech; ``""`` when none do."""
    kept: list[SegmentLike] = []
    for seg in segments:
        if seg.compression_ratio > settings.compression_ratio_threshold:
            continue
        if seg.no_speech_prob > settings.no_speech_threshold and seg.avg_logprob < settings.logprob_threshold:
            continue
        if not _normalize(seg.text):
            continue
        kept.append(seg)
    if not kept:
        return ""
    text = " ".join(seg.text.strip() for seg in kept).strip()
    phantoms = {_normalize(h) for h in settings.hallucinations}
    if _normalize(text) in phantoms and max(s.no_speech_prob for s in kept) > settings.hallucination_no_speech:
        return ""
    return text


def is_silence(samples: np.ndarray, threshold_rms: float) -> bool:
    """True when no 30 ms frame of ``samples`` is louder than ``threshold_rms``."""
    frame = SAMPLE_RATE * 30 // 1000
    n = len(samples) - len(samples) % frame
    if n == 0:
        return float(np.sqrt(np.mean(np.square(samples)))) <= threshold_rms if len(samples) else True
    frames = samples[:n].reshape(-1, frame).astype(np.float64)
    return float(np.sqrt(np.mean(np.square(frames), axis=1)).max()) <= threshold_rms


def _word_key(word: str) -> str:
    return _normalize(word) or word


class StablePrefix:
    """LocalAgreement-2 over whole-utterance hypotheses.

    Each hypothesis is split into words.  The words two consecutive hypotheses
    agree on (case and punctuation aside) are committed, except the newest
    hypothesis' last word, which may be a word cut in half.  Committed words
    are never retracted: every later text, the final one included, starts
    with them, followed by the newest hypothesis' words after that position.
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
        return self._render(words)

    def finalize(self, hypothesis: str) -> str:
        """Take the final hypothesis; return the final text (everything in it is stable)."""
        text, _ = self._render(hypothesis.split())
        return text

    def _render(self, words: list[str]) -> tuple[str, int]:
        stable = " ".join(self._committed)
        text = " ".join(self._committed + words[len(self._committed) :])
        return text, len(stable)


class _Utterance:
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


class WhisperRecognizer:
    """Whisper behind the :class:`~audio.protocols.Recognizer` protocol.

    Call :meth:`load` (blocking, seconds) and :meth:`warm` once at start-up,
    from a thread.  ``decode`` replaces the model with any blocking function
    from audio to text (used to test the partial-result logic without a model).
    """

    sample_rate: int = SAMPLE_RATE

    def __init__(self, settings: WhisperSettings, decode: DecodeFn | None = None) -> None:
        self.settings = settings
        self.language = settings.language
        self._injected = decode
        self._model: Any = None
        # One decode at a time per model, also across utterances: a cancelled
        # utterance's decode may still be running when the next one starts.
        self._lock = threading.Lock()
        self._fitted: tuple[Any, list[int], list[int]] | None = None  # tokenizer, prompt, suppressed tokens
        self.last_decode_s: float | None = None
        """Wall time of the latest model decode, generator iteration included."""

    @property
    def loaded(self) -> bool:
        return self._model is not None or self._injected is not None

    def load(self) -> None:
        """Load the model (blocking); safe to call more than once."""
        if self._model is not None or self._injected is not None:
            return
        with self._lock:
            if self._model is None:
                self._model = self._load_model()

    def _load_model(self) -> Any:
        s = self.settings
        model_dir = Path(s.model_dir)
        if not model_dir.is_dir():
            raise FileNotFoundError(f"Whisper model directory {model_dir} does not exist")
        for name in ("model.bin", "config.json", "tokenizer.json"):
            # Without tokenizer.json faster-whisper would fetch one from the network.
            if not (model_dir / name).is_file():
                raise FileNotFoundError(f"Whisper model directory {model_dir} is incomplete: missing {name}")
        from faster_whisper import WhisperModel

        started = time.perf_counter()
        model = WhisperModel(
            str(model_dir),
            device="cpu",
            compute_type=s.compute_type,
            cpu_threads=s.cpu_threads,
            num_workers=1,
            local_files_only=True,
        )
        if not model.model.is_multilingual and s.language != "en":
            raise ValueError(f"Whisper model {model_dir} is English-only; language {s.language!r} is not available")
        logger.info("loaded Whisper %s (%s) in %.2f s", model_dir.name, s.compute_type, time.perf_counter() - started)
        return model

    def warm(self) -> None:
        """Decode 1 s of silence so that the first real decode is not slow (blocking)."""
        if self._injected is not None:
            return
        self.load()
        with self._lock:
            self._run_model(np.zeros(SAMPLE_RATE, dtype=np.float32))

    def decode(self, samples: np.ndarray) -> str:
        """Blocking decode of one utterance (16 kHz float32) to filtered text."""
        return self._decode(samples, None) or ""

    def _decode(self, samples: np.ndarray, cancel: threading.Event | None) -> str | None:
        """Decode unless ``cancel`` is set by the time the model is ours; None if cancelled."""
        if cancel is not None and cancel.is_set():
            return None
        if self._injected is not None:
            return self._injected(samples)
        if is_silence(samples, self.settings.silence_rms):
            return ""
        if self._model is None:
            logger.warning("Whisper model used before load(); loading now")
            self.load()
        with self._lock:
            # A cancelled utterance's decode may have held the lock until now.
            if cancel is not None and cancel.is_set():
                return None
            segments = self._run_model(samples)
        return filter_hypothesis(segments, self.settings)

    def _run_model(self, samples: np.ndarray) -> list[Any]:
        s = self.settings
        lead = np.zeros(int(s.lead_silence_s * SAMPLE_RATE), dtype=np.float32)
        audio = np.concatenate([lead, samples.astype(np.float32, copy=False)])
        window_s = min(len(audio) / SAMPLE_RATE, 30.0)
        # faster-whisper rejects prompt + max_new_tokens beyond 448.
        max_new_tokens = min(int(16 + s.max_tokens_per_s * window_s), 440)
        fit_s = max(s.min_window_s, len(audio) / SAMPLE_RATE + s.window_margin_s)
        if s.window == "fit" and fit_s < 30.0:
            return self._run_fitted(audio, fit_s, max_new_tokens)
        started = time.perf_counter()
        segments, _info = self._model.transcribe(
            audio,
            language=s.language,
            task="transcribe",
            beam_size=s.beam_size,
            best_of=1,
            temperature=0.0,
            condition_on_previous_text=False,
            initial_prompt=s.initial_prompt,
            without_timestamps=True,
            word_timestamps=False,
            vad_filter=False,
            # Filtering is ours (filter_hypothesis); these would only hide segments from it.
            no_speech_threshold=None,
            log_prob_threshold=None,
            compression_ratio_threshold=None,
            max_new_tokens=max_new_tokens,
        )
        # transcribe() is lazy: the work happens while iterating.
        result = list(segments)
        elapsed = time.perf_counter() - started
        self.last_decode_s = elapsed
        logger.debug("decoded %.2f s of audio in %.3f s", len(audio) / SAMPLE_RATE, elapsed)
        return result

    def _run_fitted(self, audio: np.ndarray, window_s: float, max_new_tokens: int) -> list[_Segment]:
        """One greedy decode with the encoder seeing ``window_s`` seconds instead of 30."""
        import ctranslate2
        from faster_whisper.tokenizer import Tokenizer
        from faster_whisper.transcribe import get_compression_ratio, get_suppressed_tokens

        s, model = self.settings, self._model
        started = time.perf_counter()
        frames = int(round(window_s * 100))  # the feature extractor's hop is 10 ms
        padded = np.zeros(frames * 160, dtype=np.float32)
        padded[: len(audio)] = audio[: len(padded)]
        features = model.feature_extractor(padded)[:, :frames]
        encoded = model.model.encode(ctranslate2.StorageView.from_array(np.ascontiguousarray(features[None])), to_cpu=False)
        if self._fitted is None:
            # The same for every decode; building it encodes the non-speech symbols each time.
            tokenizer = Tokenizer(model.hf_tokenizer, model.model.is_multilingual, task="transcribe", language=s.language)
            previous = tokenizer.encode(" " + s.initial_prompt.strip()) if s.initial_prompt else []
            prompt = model.get_prompt(tokenizer, previous, without_timestamps=True)
            self._fitted = (tokenizer, prompt, get_suppressed_tokens(tokenizer, [-1]))
        tokenizer, prompt, suppressed = self._fitted
        result = model.model.generate(
            encoded,
            [prompt],
            beam_size=s.beam_size,
            max_length=len(prompt) + max_new_tokens,
            return_scores=True,
            return_no_speech_prob=True,
            suppress_blank=True,
            suppress_tokens=suppressed,
        )[0]
        tokens = result.sequences_ids[0]
        text = tokenizer.decode(tokens).strip()
        segment = _Segment(
            text=text,
            no_speech_prob=float(result.no_speech_prob),
            # Same recovery of the mean log-probability as faster-whisper's (length penalty 1).
            avg_logprob=float(result.scores[0]) * len(tokens) / (len(tokens) + 1),
            compression_ratio=get_compression_ratio(text) if text else 0.0,
        )
        self.last_decode_s = time.perf_counter() - started
        logger.debug("decoded %.2f s of audio in a %.1f s window in %.3f s", len(audio) / SAMPLE_RATE, window_s, self.last_decode_s)
        return [segment]

    async def transcribe(self, audio: AsyncIterator[AudioChunk]) -> AsyncIterator[Transcript]:
        """Consume one utterance; yield partials while it grows and exactly one final at its end."""
        s = self.settings
        loop = asyncio.get_running_loop()
        cancel = threading.Event()
        utterance = _Utterance()
        policy = StablePrefix()
        reader = asyncio.ensure_future(_read(audio, utterance))
        job: asyncio.Future[str | None] | None = None
        job_len = 0
        latest: tuple[int, str] | None = None  # (samples covered, text) of the newest finished decode
        # Ticks count from the first request for a transcript, not from the first chunk.
        next_tick = loop.time() + s.partial_interval_s
        min_partial = int(s.min_partial_audio_s * SAMPLE_RATE)
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
                    text = job.result()
                    job = None
                    if text is not None:
                        latest = (job_len, text)
                        # Yielded even when the text is unchanged: that it now covers more
                        # audio tells the listener whether it can stand in for the final.
                        partial = policy.update(text)
                        yield Transcript(partial[0], False, partial[1], job_len / SAMPLE_RATE)
                    # Ticks that passed while the decode ran are skipped, not made up.
                    while next_tick <= now:
                        next_tick += s.partial_interval_s
                    continue
                if reader.done():
                    break
                if job is None and now >= next_tick:
                    while next_tick <= now:
                        next_tick += s.partial_interval_s
                    covered = latest[0] if latest else 0
                    if utterance.length >= min_partial and utterance.length != covered:
                        job_len = utterance.length
                        job = asyncio.ensure_future(asyncio.to_thread(self._decode, utterance.snapshot(), cancel))
            reader.result()  # the audio source's error, if any, is the caller's

            total = utterance.length
            if job is not None:
                text = await job
                job = None
                if text is not None:
                    latest = (job_len, text)
                    # The listener may know this already covers all the speech and stop here.
                    partial = policy.update(text)
                    yield Transcript(partial[0], False, partial[1], job_len / SAMPLE_RATE)
            if total == 0:
                final = policy.finalize("")
            elif latest is not None and latest[0] == total:
                logger.debug("final reuses the last partial decode")
                final = policy.finalize(latest[1])
            else:
                text = await asyncio.to_thread(self._decode, utterance.snapshot(), cancel)
                final = policy.finalize(text or "")
            yield Transcript(final, True, len(final), total / SAMPLE_RATE)
        finally:
            cancel.set()
            if reader.done() and not reader.cancelled():
                reader.exception()  # retrieved, so asyncio does not log it a second time
            reader.cancel()
            if job is not None:
                # The thread cannot be stopped; its result is dropped.
                job.cancel()


async def _read(audio: AsyncIterator[AudioChunk], utterance: _Utterance) -> None:
    async for chunk in audio:
        if chunk.sample_rate != SAMPLE_RATE:
            raise ValueError(f"Whisper needs {SAMPLE_RATE} Hz audio, got a {chunk.sample_rate} Hz chunk")
        samples = np.asarray(chunk.samples, dtype=np.float32).reshape(-1)
        if len(samples):
            utterance.append(samples)
