"""The two echo cancellers that install offline: WebRTC's APM (through livekit) and speexdsp (pyaec).

Both take 10 ms frames of 16 kHz audio as int16: the microphone and the far-end reference already
lined up with it (see :mod:`audio.echo_reference`), and give back the cleaned microphone frame.
The native state is made on the first frame, not in the constructor.
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np

RATE = 16000
FRAME = 160


def to_int16(x: np.ndarray) -> np.ndarray:
    return np.clip(np.rint(x * 32767.0), -32768, 32767).astype(np.int16)


def to_float(x: np.ndarray) -> np.ndarray:
    return x.astype(np.float32) / 32767.0


class ApmCanceller:
    """WebRTC's audio processing module (AEC3) from the ``livekit`` package."""

    sample_rate = RATE
    frame = FRAME

    def __init__(self, noise_suppression: bool = False, high_pass_filter: bool = True, stream_delay_ms: int = 0) -> None:
        self.noise_suppression = noise_suppression
        self.high_pass_filter = high_pass_filter
        self.stream_delay_ms = stream_delay_ms
        self.latency = 128
        """Samples by which the cleaned output trails the input (AEC3's suppressor works on
        overlapping blocks; measured with an uncorrelated near end)."""
        """What APM is told of the delay between reference and echo: the reference comes already
        aligned, so close to nothing (AEC3 searches around it by itself)."""
        self._apm: Any = None

    def _make(self) -> Any:
        from livekit import rtc

        return rtc.AudioProcessingModule(
            echo_cancellation=True,
            noise_suppression=self.noise_suppression,
            high_pass_filter=self.high_pass_filter,
            auto_gain_control=False,  # levels matter to the listener's energy guard
        )

    def process(self, near: np.ndarray, far: np.ndarray) -> np.ndarray:
        from livekit import rtc

        if self._apm is None:
            self._apm = self._make()
        far_frame = rtc.AudioFrame(bytearray(to_int16(far).tobytes()), RATE, 1, FRAME)
        self._apm.process_reverse_stream(far_frame)
        near_frame = rtc.AudioFrame(bytearray(to_int16(near).tobytes()), RATE, 1, FRAME)
        self._apm.set_stream_delay_ms(self.stream_delay_ms)
        self._apm.process_stream(near_frame)
        return to_float(np.frombuffer(near_frame.data, dtype=np.int16))

    def reset(self) -> None:
        self._apm = None  # the handle is released with the object; the next frame starts afresh


class SpeexCanceller:
    """speexdsp's MDF echo canceller (with its preprocessor's residual echo suppression) from ``pyaec``."""

    sample_rate = RATE
    frame = FRAME

    def __init__(self, filter_s: float = 0.25, preprocess: bool = True) -> None:
        self.filter_s = filter_s
        """Length of the adaptive filter: the room's tail plus the alignment's slack."""
        self.preprocess = preprocess
        """speexdsp's preprocessor after the filter (residual echo and noise suppression)."""
        self.latency = FRAME if preprocess else 0
        """Samples by which the cleaned output trails the input (the preprocessor's overlap)."""
        self._lib: Any = None
        self._state: Any = None
        self._out = np.zeros(FRAME, np.int16)

    def process(self, near: np.ndarray, far: np.ndarray) -> np.ndarray:
        if self._state is None:
            import pyaec

            self._lib = pyaec.lib
            self._state = self._lib.AecNew(FRAME, int(self.filter_s * RATE), RATE, self.preprocess)
            if not self._state:
                raise RuntimeError("speexdsp could not make an echo canceller")
        rec = np.ascontiguousarray(to_int16(near))
        echo = np.ascontiguousarray(to_int16(far))
        ptr = ctypes.POINTER(ctypes.c_int16)
        self._lib.AecCancelEcho(
            self._state, rec.ctypes.data_as(ptr), echo.ctypes.data_as(ptr), self._out.ctypes.data_as(ptr), FRAME
        )
        return to_float(self._out)

    def reset(self) -> None:
        self._destroy()

    def _destroy(self) -> None:
        if self._state is not None:
            self._lib.AecDestroy(self._state)
            self._state = None

    def __del__(self) -> None:
        try:
            self._destroy()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass
