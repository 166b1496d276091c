"""Voice activity detection with Silero VAD, run by sherpa-onnx.

:class:`SileroVad` turns a stream of 16 kHz samples into speech start/stop
events.  Offsets count samples from the start of the stream (or the last
:meth:`SileroVad.reset`), so a caller can cut the utterance out of its own
ring buffer.

sherpa-onnx's detector ORs the speech decision of every window in one
``accept_waveform`` call, so transitions inside a long call would be lost; we
therefore feed it exactly one window at a time and look at its state after
each window.  A start event carries the start sherpa-onnx reports, which it
backdates by two windows plus ``min_speech_duration_s`` so that the onset of
the first word is kept.  A stop event comes ``min_silence_duration_s`` after
speech ended (the hangover), and its offset is where the speech ended.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from audio.levels import finite_samples
from audio.protocols import VadEvent

logger = logging.getLogger(__name__)

SAMPLE_RATE = 16000

# sherpa-onnx counts buffered samples in int32; rebase well before 2**31
# (about 37 hours at 16 kHz) while no speech is open.
_REBASE_AFTER_SAMPLES = 2**30


@dataclass(frozen=True)
class VadSettings:
    """How :class:`SileroVad` decides what is speech."""

    model_path: Path
    """The Silero VAD ONNX file (``silero_vad.onnx`` or ``silero_vad_16k_op15.onnx``)."""
    threshold: float = 0.5
    """Speech probability above which a window counts as speech."""
    min_silence_duration_s: float = 0.5
    """Silence that must follow speech before it is declared over (the hangover)."""
    min_speech_duration_s: float = 0.25
    """Speech shorter than this is ignored (clicks, knocks)."""
    max_speech_duration_s: float = 20.0
    """After this much continuous speech sherpa-onnx raises its threshold to force a split."""
    window_size: int = 512
    """Samples per model window; Silero v4/v5 at 16 kHz wants 512."""
    num_threads: int = 1
    """ONNX Runtime threads; one is plenty for ~0.13 ms per 32 ms window."""
    buffer_size_s: float = 60.0
    """Initial size of sherpa-onnx's sample buffer (it grows during long speech)."""


class SileroVad:
    """Silero VAD behind the :class:`~audio.protocols.VoiceActivityDetector` protocol.

    Construct with settings, then call :meth:`load` (or let the first
    :meth:`accept` load the model).  Not thread-safe: feed it from one place.
    """

    sample_rate: int = SAMPLE_RATE

    def __init__(self, settings: VadSettings) -> None:
        self.settings = settings
        self._vad: Any = None
        self._pending = np.zeros(0, dtype=np.float32)
        # Samples fed to sherpa-onnx since its last reset, and how many came before that.
        self._native_fed = 0
        self._base = 0
        self._in_speech = False

    @property
    def loaded(self) -> bool:
        return self._vad is not None

    @property
    def in_speech(self) -> bool:
        """True between a start event and its stop event."""
        return self._in_speech

    @property
    def position(self) -> int:
        """Samples accepted since the start of the stream (including any not yet windowed)."""
        return self._base + self._native_fed + len(self._pending)

    def load(self) -> None:
        """Load the model (a few milliseconds); safe to call more than once."""
        if self._vad is not None:
            return
        import sherpa_onnx

        s = self.settings
        path = Path(s.model_path)
        if not path.is_file():
            raise FileNotFoundError(f"Silero VAD model not found: {path}")
        config = sherpa_onnx.VadModelConfig(
            silero_vad=sherpa_onnx.SileroVadModelConfig(
                model=str(path),
                threshold=s.threshold,
                min_silence_duration=s.min_silence_duration_s,
                min_speech_duration=s.min_speech_duration_s,
                window_size=s.window_size,
                max_speech_duration=s.max_speech_duration_s,
            ),
            sample_rate=self.sample_rate,
            num_threads=s.num_threads,
            provider="cpu",
        )
        self._vad = sherpa_onnx.VoiceActivityDetector(config, buffer_size_in_seconds=s.buffer_size_s)
        logger.debug("loaded Silero VAD from %s", path)

    def accept(self, samples: np.ndarray) -> list[VadEvent]:
        """Feed any number of samples; return the start/stop events they completed."""
        if self._vad is None:
            self.load()
        samples = finite_samples(samples)  # NaN or infinity from a broken source must not reach the model
        if len(self._pending):
            samples = np.concatenate([self._pending, samples])
        window = self.settings.window_size
        whole = len(samples) - len(samples) % window
        events: list[VadEvent] = []
        for i in range(0, whole, window):
            self._feed_window(samples[i : i + window], events)
        self._pending = samples[whole:].copy()
        return events

    def flush(self) -> list[VadEvent]:
        """End the stream: close an open speech region at the current position."""
        events: list[VadEvent] = []
        if self._in_speech:
            events.append(VadEvent(speech=False, sample=self.position))
            self._in_speech = False
        self._reset_native()
        self._base = self.position
        self._native_fed = 0
        self._pending = np.zeros(0, dtype=np.float32)
        return events

    def reset(self) -> None:
        """Forget all state; offsets count from zero again."""
        self._reset_native()
        self._pending = np.zeros(0, dtype=np.float32)
        self._native_fed = 0
        self._base = 0
        self._in_speech = False

    def _reset_native(self) -> None:
        if self._vad is not None:
            self._vad.reset()

    def _feed_window(self, window: np.ndarray, events: list[VadEvent]) -> None:
        vad = self._vad
        vad.accept_waveform(window)
        self._native_fed += len(window)
        detected = vad.is_speech_detected()
        if detected and not self._in_speech:
            # Copying current_segment costs O(segment); at the onset it is ~0.3 s long.
            events.append(VadEvent(speech=True, sample=self._base + vad.current_segment.start))
            self._in_speech = True
        closed = False
        while not vad.empty():
            segment = vad.front
            start = self._base + segment.start
            end = start + len(segment.samples)
            vad.pop()
            if not self._in_speech:
                events.append(VadEvent(speech=True, sample=start))
            events.append(VadEvent(speech=False, sample=end))
            self._in_speech = False
            closed = True
        if not detected and self._in_speech and not closed:
            # sherpa-onnx ended the speech without queueing a segment (empty buffer).
            events.append(VadEvent(speech=False, sample=self._base + self._native_fed))
            self._in_speech = False
        if not self._in_speech and self._native_fed >= _REBASE_AFTER_SAMPLES:
            vad.reset()
            self._base += self._native_fed
            self._native_fed = 0
