"""Neural Korean speech from Kokoro-82M, run by ONNX Runtime, read from Korean phonemes.

Kokoro has no Korean voice, but it reads IPA, and its Japanese voices say Korean sounds well
once Korean text is turned into them (:mod:`audio.korean_phonemes`): Whisper base understands
them far better than espeak-ng's Korean.  The model directory is what ``hearth models install
kokoro-82m-ja`` writes: ``model.onnx`` (Kokoro-82M, int8), ``voices.npz`` (one 510×1×256 style
table per voice) and ``vocab.json`` (phoneme → token id).

Each sentence is one model run (Kokoro does not stream within an utterance), so the first
sentence plays while the next is computed.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import threading
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from audio.korean_phonemes import phonemize as korean_phonemes
from audio.piper_tts import clean_text
from audio.protocols import AudioChunk

log = logging.getLogger(__name__)

MODEL_FILES = ("model.onnx", "voices.npz", "vocab.json")
MAX_TOKENS = 510
"""Kokoro's context is 512 tokens, two of them the pads around every input."""
_SENTENCE_END = re.compile(r"(?<=[.?!…])\s+")
_CLAUSE_END = re.compile(r"(?<=[,])\s+")


class KokoroError(RuntimeError):
    """The Kokoro model is missing, incomplete or lacks the voice; the message says how to fix it."""


@dataclass(frozen=True)
class KokoroSettings:
    """Where the Kokoro model lives and how it speaks."""

    model_dir: Path
    """Directory holding ``model.onnx``, ``voices.npz`` and ``vocab.json`` (the model store's ``kokoro-82m-ja``)."""
    voice: str = "jf_nezumi"
    """Style vector to speak with, one of ``voices.npz``: jf_alpha, jf_gongitsune, jf_nezumi, jf_tebukuro, jm_kumo.
    jf_nezumi was the one Whisper base understood best in Korean (bench.voice.ko_intelligibility)."""
    speed: float = 1.0
    """Speaking rate; 1.0 is the voice's own.  Slower was not heard better: Whisper base's CER was 0.16 at 1.0,
    0.21 at 0.9 and 0.20 at 0.8 (every third bench line, jf_nezumi)."""
    language: str = "ko"
    """Language this voice speaks, as the rest of hearth names it."""
    num_threads: int = 1
    """ONNX Runtime threads.  A sentence's whole run comes before its first sound, so threads
    shorten first audio directly (hearth's configuration gives Korean two: ``tts.n_threads_ko``)."""
    volume: float = 1.0
    """Gain applied to the model's output."""
    lead_s: float = 0.03
    """Silence kept before the first sound of each sentence (the model pads more)."""
    tail_s: float = 0.15
    """Silence kept after the last sound of each sentence: the pause before the next."""
    sample_rate: int = 24000
    """Kokoro's output rate."""


class KokoroSynthesizer:
    """Kokoro-82M behind the :class:`~audio.protocols.Synthesizer` contract.

    Construct, then ``await load()`` (reads the model, about a second) and ``await warm()``
    (one short sentence, so the first real one does not pay for ONNX Runtime's first-run
    allocations).  ``phonemize`` turns text into Kokoro's phonemes; the default reads Korean.
    """

    def __init__(self, settings: KokoroSettings, phonemize: Callable[[str], str] = korean_phonemes) -> None:
        self.settings = settings
        self.language = settings.language
        self.sample_rate = settings.sample_rate
        self._phonemize = phonemize
        self._session: Any = None
        self._vocab: dict[str, int] = {}
        self._styles: np.ndarray | None = None
        # One model run at a time: a second would only halve the speed of the first.
        self._run_lock = threading.Lock()

    @property
    def loaded(self) -> bool:
        return self._session is not None

    async def load(self) -> None:
        """Load the model, the voice and the vocabulary (blocking work runs in a worker thread)."""
        if self._session is None:
            await asyncio.to_thread(self._load)

    async def warm(self) -> None:
        """Synthesize a short sentence and throw it away."""
        async for _ in self.synthesize("안녕하세요."):
            pass

    def _load(self) -> None:
        s = self.settings
        model_dir = Path(s.model_dir)
        missing = [name for name in MODEL_FILES if not (model_dir / name).is_file()]
        if missing:
            raise KokoroError(
                f"Kokoro model incomplete in {model_dir} (missing {', '.join(missing)}): "
                "run `hearth models install kokoro-82m-ja`"
            )
        import onnxruntime  # imported here: only a loaded synthesizer needs it

        with np.load(model_dir / "voices.npz") as voices:
            if s.voice not in voices.files:
                raise KokoroError(f"Kokoro has no voice {s.voice!r}; it has {', '.join(sorted(voices.files))}")
            styles = np.asarray(voices[s.voice], dtype=np.float32).reshape(-1, 256)
        vocab = json.loads((model_dir / "vocab.json").read_text(encoding="utf-8"))["vocab"]
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = s.num_threads
        options.inter_op_num_threads = 1
        session = onnxruntime.InferenceSession(str(model_dir / "model.onnx"), sess_options=options,
                                               providers=["CPUExecutionProvider"])
        self._vocab = {str(symbol): int(token) for symbol, token in vocab.items()}
        self._styles = styles
        self._session = session
        log.info("loaded Kokoro from %s, voice %s, %d thread(s)", model_dir, s.voice, s.num_threads)

    def phonemes(self, text: str) -> list[str]:
        """The phoneme strings sent to the model, one per sentence, each short enough for one run."""
        cleaned = clean_text(text)
        if not any(ch.isalnum() for ch in cleaned):
            return []
        pieces: list[str] = []
        for sentence in _SENTENCE_END.split(self._phonemize(cleaned)):
            pieces.extend(_fit(sentence.strip(), MAX_TOKENS))
        # Punctuation alone would synthesize a breath or a click.
        return [piece for piece in pieces if any(ch.isalpha() for ch in piece)]

    def tokens(self, phonemes: str) -> list[int]:
        """Token ids of ``phonemes``; symbols the vocabulary lacks are dropped (logged once per call)."""
        if not self._vocab:
            raise RuntimeError("KokoroSynthesizer.load() has not been called")
        known = [self._vocab[ch] for ch in phonemes if ch in self._vocab]
        if len(known) != len(phonemes):
            log.debug("phonemes not in Kokoro's vocabulary, skipped: %r", {ch for ch in phonemes if ch not in self._vocab})
        return known[:MAX_TOKENS]

    def _run(self, phonemes: str) -> np.ndarray:
        assert self._session is not None and self._styles is not None
        tokens = self.tokens(phonemes)
        if not tokens:
            return np.zeros(0, np.float32)
        # Each voice has one style per input length; the model was trained to pick it that way.
        style = self._styles[min(len(tokens), len(self._styles)) - 1].reshape(1, 256)
        with self._run_lock:
            audio = self._session.run(None, {
                "tokens": np.array([[0, *tokens, 0]], dtype=np.int64),
                "style": style,
                "speed": np.array([self.settings.speed], dtype=np.float32),
            })[0]
        return self._finish(np.asarray(audio, dtype=np.float32).ravel())

    def _finish(self, audio: np.ndarray) -> np.ndarray:
        s = self.settings
        loud = np.flatnonzero(np.abs(audio) > 0.01)
        if len(loud):
            audio = audio[max(0, loud[0] - int(s.lead_s * s.sample_rate)): loud[-1] + int(s.tail_s * s.sample_rate)]
        if s.volume != 1.0:
            audio = audio * s.volume
        return np.clip(audio, -1.0, 1.0).astype(np.float32, copy=False)

    async def synthesize(self, text: str) -> AsyncIterator[AudioChunk]:
        """Yield one chunk per sentence as soon as it is synthesized.

        Cancelling the consumer (or closing the generator) sets a flag the worker checks
        before every sentence, so synthesis stops after the sentence in progress.
        """
        if self._session is None:
            raise RuntimeError("KokoroSynthesizer.load() has not been called")
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[np.ndarray | BaseException | None] = asyncio.Queue()
        cancel = threading.Event()

        def post(item: np.ndarray | BaseException | None) -> None:
            try:
                loop.call_soon_threadsafe(queue.put_nowait, item)
            except RuntimeError:  # the loop closed while the worker ran: nobody is listening
                cancel.set()

        def work() -> None:
            try:
                for sentence in self.phonemes(text):
                    if cancel.is_set():
                        return
                    post(self._run(sentence))
            except BaseException as exc:  # noqa: BLE001 - handed to the consumer
                post(exc)
            finally:
                post(None)

        worker = loop.run_in_executor(None, work)
        try:
            while (item := await queue.get()) is not None:
                if isinstance(item, BaseException):
                    raise item
                if len(item):
                    yield AudioChunk(item, self.sample_rate)
        finally:
            cancel.set()
            # Not awaited on purpose: a cancelled consumer must not wait for the sentence in
            # progress; the worker stops after it on its own.
            worker.add_done_callback(_ignore_result)


def _fit(phonemes: str, limit: int) -> list[str]:
    """Split a sentence longer than the model takes at commas, else at spaces, else anywhere."""
    if len(phonemes) <= limit:
        return [phonemes] if phonemes else []
    parts = _CLAUSE_END.split(phonemes)
    if len(parts) == 1:
        parts = phonemes.split(" ")
    if len(parts) == 1:
        return [phonemes[i:i + limit] for i in range(0, len(phonemes), limit)]
    pieces: list[str] = []
    current = ""
    for part in parts:
        if len(part) > limit:
            pieces.extend([current] if current else [])
            pieces.extend(_fit(part, limit))
            current = ""
        elif current and len(current) + 1 + len(part) > limit:
            pieces.append(current)
            current = part
        else:
            current = f"{current} {part}".strip()
    if current:
        pieces.append(current)
    return pieces


def _ignore_result(future: asyncio.Future[None]) -> None:
    if not future.cancelled():
        future.exception()
