"""Has the speaker finished their turn?  Smart Turn v3, an audio model run by onnxruntime.

Smart Turn (from the pipecat project, BSD-2-Clause) reads the last 8 s of an
utterance, as Whisper-style log-mel features, and gives the probability that
the speaker has finished, from the words' sound and the voice's fall rather
than from the length of the silence.  ``hearth models install`` takes the ONNX
file out of the ``pipecat-ai`` wheel; nothing of pipecat is imported.

The features are faster-whisper's log-mel extractor over an 8 s window of the
zero-mean, unit-variance waveform, padded at the front, as the model was trained
(checked against pipecat's own extractor to within 4e-7).
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

logger = logging.getLogger(__name__)

SAMPLE_RATE = 16000
WINDOW_S = 8


@dataclass(frozen=True)
class SmartTurnSettings:
    """Where the model is and how it runs."""

    model_path: Path
    """The ``smart-turn-v3.2-cpu.onnx`` file."""
    num_threads: int = 1
    """onnxruntime threads; one call takes 50-110 ms on one thread here, and the recognizer needs the rest."""


class SmartTurnModel:
    """Smart Turn behind the :class:`~audio.protocols.TurnEndModel` protocol.

    Call :meth:`load` (blocking) before the first :meth:`probability`.  Safe to call
    from one thread at a time; a lock keeps two callers from sharing the session.
    """

    sample_rate: int = SAMPLE_RATE

    def __init__(self, settings: SmartTurnSettings) -> None:
        self.settings = settings
        self._session: Any = None
        self._features: Any = None
        self._lock = threading.Lock()
        self.last_s: float | None = None
        """Wall time of the latest call."""

    @property
    def loaded(self) -> bool:
        return self._session is not None

    def load(self) -> None:
        """Open the ONNX file (blocking, ~0.1 s); safe to call more than once."""
        if self._session is not None:
            return
        path = Path(self.settings.model_path)
        if not path.is_file():
            raise FileNotFoundError(f"end-of-turn model not found: {path}")
        import onnxruntime as ort
        from faster_whisper.feature_extractor import FeatureExtractor

        options = ort.SessionOptions()
        options.intra_op_num_threads = self.settings.num_threads
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        session = ort.InferenceSession(str(path), sess_options=options, providers=["CPUExecutionProvider"])
        names = [i.name for i in session.get_inputs()]
        if names != ["input_features"]:
            raise ValueError(f"{path} is not a Smart Turn model (inputs {names})")
        self._features = FeatureExtractor(feature_size=80, chunk_length=WINDOW_S)
        self._session = session
        logger.info("loaded end-of-turn model %s", path.name)

    def warm(self) -> None:
        """One call on silence, so the first real one is not slow (blocking)."""
        self.load()
        self.probability(np.zeros(SAMPLE_RATE, dtype=np.float32))

    def probability(self, samples: np.ndarray) -> float:
        """P(the speaker has finished) for an utterance that ends with ``samples`` (blocking)."""
        if self._session is None:
            self.load()
        started = time.perf_counter()
        features = turn_features(samples, self._features)
        with self._lock:
            out = self._session.run(None, {"input_features": features[None]})
        self.last_s = time.perf_counter() - started
        return float(np.asarray(out[0]).reshape(-1)[0])


def turn_features(samples: np.ndarray, extractor: Any) -> np.ndarray:
    """The model's input for the last 8 s of ``samples``: (80, 800) float32 log-mel."""
    n = WINDOW_S * SAMPLE_RATE
    audio = np.asarray(samples, dtype=np.float32).reshape(-1)[-n:]
    audio = np.pad(audio, (n - len(audio), 0))
    audio = (audio - audio.mean()) / np.sqrt(audio.var() + 1e-7)
    return np.ascontiguousarray(extractor(audio.astype(np.float32), padding=0)[:, : WINDOW_S * 100], dtype=np.float32)
