"""Streaming speech recognition with a sherpa-onnx transducer (zipformer).

Unlike Whisper, a streaming transducer decodes audio as it arrives, so each
chunk costs only its own share of work and partials come for free.  The model
directory is laid out as in k2-fsa's releases, e.g.
``sherpa-onnx-streaming-zipformer-en-20M-2023-02-17``::

    encoder-epoch-99-avg-1.onnx   encoder-epoch-99-avg-1.int8.onnx
    decoder-epoch-99-avg-1.onnx   decoder-epoch-99-avg-1.int8.onnx
    joiner-epoch-99-avg-1.onnx    joiner-epoch-99-avg-1.int8.onnx
    tokens.txt

Any ``encoder*.onnx`` / ``decoder*.onnx`` / ``joiner*.onnx`` names are found;
plain ``encoder.onnx`` works too.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from audio.protocols import AudioChunk, Transcript
from audio.utterance import StablePrefix

logger = logging.getLogger(__name__)

SAMPLE_RATE = 16000

_INT8_SUFFIX = ".int8.onnx"


@dataclass(frozen=True)
class StreamingSettings:
    """How :class:`SherpaStreamingRecognizer` loads and runs a streaming transducer."""

    model_dir: Path
    """Directory with encoder/decoder/joiner ONNX files and tokens.txt."""
    language: str = "en"
    """What the model recognizes; reported as ``Recognizer.language``, not passed to the model."""
    num_threads: int = 2
    """ONNX Runtime threads."""
    prefer_int8: bool = True
    """Use the int8 encoder and joiner where present; the small decoder stays float, as
    sherpa-onnx's own apps pair them, because an int8 decoder costs accuracy and saves little."""
    decoding_method: str = "greedy_search"
    """"greedy_search" or "modified_beam_search"."""
    max_active_paths: int = 4
    """Beam width for modified_beam_search."""
    model_type: str = "zipformer"
    """"zipformer" for the 2023-02 models, "zipformer2" for later ones; a wrong or empty
    value makes sherpa-onnx load the model twice to find out."""
    tail_padding_s: float = 0.66
    """Silence fed after the last chunk so the encoder's right context flushes the last word."""
    feature_dim: int = 80
    """Fbank dimension the model was trained with."""


@dataclass(frozen=True)
class TransducerFiles:
    """The four files a transducer needs."""

    encoder: Path
    decoder: Path
    joiner: Path
    tokens: Path


def find_transducer_files(model_dir: Path, prefer_int8: bool = True) -> TransducerFiles:
    """Locate the model files; raise FileNotFoundError naming what is missing (one line)."""
    model_dir = Path(model_dir)
    if not model_dir.is_dir():
        raise FileNotFoundError(f"streaming model directory {model_dir} does not exist")
    missing: list[str] = []
    found: dict[str, Path] = {}
    for part in ("encoder", "decoder", "joiner"):
        candidates = sorted(p for p in model_dir.glob(f"{part}*.onnx") if p.is_file())
        quantized = [p for p in candidates if p.name.endswith(_INT8_SUFFIX)]
        full = [p for p in candidates if not p.name.endswith(_INT8_SUFFIX)]
        groups = (quantized, full) if prefer_int8 and part != "decoder" else (full, quantized)
        chosen = next((g for g in groups if g), None)
        if chosen is None:
            missing.append(f"{part}*.onnx")
            continue
        if len(chosen) > 1:
            names = ", ".join(p.name for p in chosen)
            raise ValueError(f"streaming model directory {model_dir} has several {part} files: {names}")
        found[part] = chosen[0]
    tokens = model_dir / "tokens.txt"
    if not tokens.is_file():
        missing.append("tokens.txt")
    if missing:
        raise FileNotFoundError(f"streaming model directory {model_dir} is incomplete: missing {', '.join(missing)}")
    return TransducerFiles(found["encoder"], found["decoder"], found["joiner"], tokens)


class SherpaStreamingRecognizer:
    """A sherpa-onnx streaming transducer behind the :class:`~audio.protocols.Recognizer` protocol.

    Call :meth:`load` and :meth:`warm` once at start-up, from a thread.
    ``engine`` replaces the ``sherpa_onnx.OnlineRecognizer`` with any object
    of the same shape (used to test the streaming logic without a model).
    """

    sample_rate: int = SAMPLE_RATE

    def __init__(self, settings: StreamingSettings, engine: Any = None) -> None:
        self.settings = settings
        self.language = settings.language
        self._engine: Any = engine
        # Decoding two streams at once would only split the same cores.
        self._lock = threading.Lock()

    @property
    def loaded(self) -> bool:
        return self._engine is not None

    def load(self) -> None:
        """Load the model (blocking); safe to call more than once."""
        if self._engine is not None:
            return
        s = self.settings
        files = find_transducer_files(s.model_dir, s.prefer_int8)
        import sherpa_onnx

        started = time.perf_counter()
        self._engine = sherpa_onnx.OnlineRecognizer.from_transducer(
            tokens=str(files.tokens),
            encoder=str(files.encoder),
            decoder=str(files.decoder),
            joiner=str(files.joiner),
            num_threads=s.num_threads,
            sample_rate=SAMPLE_RATE,
            feature_dim=s.feature_dim,
            # The utterance is delimited by push-to-talk or our VAD, not by the recognizer.
            enable_endpoint_detection=False,
            decoding_method=s.decoding_method,
            max_active_paths=s.max_active_paths,
            model_type=s.model_type,
            provider="cpu",
        )
        logger.info("loaded streaming transducer %s in %.2f s", Path(s.model_dir).name, time.perf_counter() - started)

    def warm(self) -> None:
        """Decode 1 s of silence so that the first real decode is not slow (blocking)."""
        self.load()
        stream = self._engine.create_stream()
        self._feed(stream, SAMPLE_RATE, np.zeros(SAMPLE_RATE, dtype=np.float32), threading.Event())
        self._finish(stream, threading.Event())

    def _decode_ready(self, stream: Any, cancel: threading.Event) -> str:
        engine = self._engine
        with self._lock:
            while not cancel.is_set() and engine.is_ready(stream):
                engine.decode_stream(stream)
        return str(engine.get_result(stream)).strip()

    def _feed(self, stream: Any, sample_rate: int, samples: np.ndarray, cancel: threading.Event) -> str:
        # sherpa-onnx resamples internally when the rate differs from the model's.
        stream.accept_waveform(sample_rate, samples)
        return self._decode_ready(stream, cancel)

    def _finish(self, stream: Any, cancel: threading.Event) -> str:
        tail = np.zeros(int(self.settings.tail_padding_s * SAMPLE_RATE), dtype=np.float32)
        stream.accept_waveform(SAMPLE_RATE, tail)
        stream.input_finished()
        return self._decode_ready(stream, cancel)

    async def transcribe(self, audio: AsyncIterator[AudioChunk], context: str = "", *, hypotheses: int = 1) -> AsyncIterator[Transcript]:
        """Consume one utterance; yield partials while it grows and exactly one final at its end.

        ``context`` and ``hypotheses`` are not used: greedy transducer search has no way to take
        a context, nor an n best to give (the final's ``alternatives`` stay empty).  A partial is
        never a whole hypothesis (the last words come only with the tail padding).
        """
        if self._engine is None:
            logger.warning("streaming recognizer used before load(); loading now")
            await asyncio.to_thread(self.load)
        cancel = threading.Event()
        stream = self._engine.create_stream()
        policy = StablePrefix()
        shown: tuple[str, int] = ("", 0)
        total = 0
        try:
            async for chunk in audio:
                samples = np.asarray(chunk.samples, dtype=np.float32).reshape(-1)
                if not len(samples):
                    continue
                total += len(samples) * SAMPLE_RATE // chunk.sample_rate
                text = await asyncio.to_thread(self._feed, stream, chunk.sample_rate, samples, cancel)
                partial = policy.update(text)
                if partial != shown:
                    shown = partial
                    yield Transcript(partial[0], False, partial[1], total / SAMPLE_RATE)
            final = await asyncio.to_thread(self._finish, stream, cancel) if total else ""
            yield Transcript(final, True, len(final), total / SAMPLE_RATE, final)
        finally:
            # A decode loop still running in its thread stops at its next step.
            cancel.set()
