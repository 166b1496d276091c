"""The two echo cancellers that install offline: WebRTC's APM (through livekit) and speexdsp (pyaec).

Both take 10 ms frames of 16 kHz audio as int16: the microphone and the far-end reference already
lined up with it (see :mod:`audio.echo_reference`), and give back the cleaned microphone frame.
The native state is made on the first frame, not in the constructor.
"""

from __future__ import annotations

import ctypes
import ctypes.util
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


class _SystemSpeex:
    """speexdsp itself (``libspeexdsp.so.1``, which PulseAudio and PipeWire already depend on),
    set up the way speexdsp's own example and pyaec do: the echo canceller, then the preprocessor
    told of it (residual echo suppression, noise suppression)."""

    ECHO_SET_SAMPLING_RATE = 24
    PREPROCESS_SET_ECHO_STATE = 24

    def __init__(self, lib: Any, frame: int, filter_len: int, rate: int, preprocess: bool) -> None:
        p = ctypes.c_void_p
        lib.speex_echo_state_init.restype = p
        lib.speex_echo_state_init.argtypes = [ctypes.c_int, ctypes.c_int]
        lib.speex_echo_ctl.argtypes = [p, ctypes.c_int, p]
        lib.speex_echo_cancellation.argtypes = [p, p, p, p]
        lib.speex_echo_state_destroy.argtypes = [p]
        lib.speex_preprocess_state_init.restype = p
        lib.speex_preprocess_state_init.argtypes = [ctypes.c_int, ctypes.c_int]
        lib.speex_preprocess_ctl.argtypes = [p, ctypes.c_int, p]
        lib.speex_preprocess_run.argtypes = [p, p]
        lib.speex_preprocess_state_destroy.argtypes = [p]
        self.lib = lib
        self.echo = lib.speex_echo_state_init(frame, filter_len)
        if not self.echo:
            raise RuntimeError("speexdsp could not make an echo canceller")
        r = ctypes.c_int(rate)
        lib.speex_echo_ctl(self.echo, self.ECHO_SET_SAMPLING_RATE, ctypes.addressof(r))
        self.pre = None
        if preprocess:
            self.pre = lib.speex_preprocess_state_init(frame, rate)
            lib.speex_preprocess_ctl(self.pre, self.PREPROCESS_SET_ECHO_STATE, self.echo)

    def cancel(self, rec: np.ndarray, play: np.ndarray, out: np.ndarray) -> None:
        self.lib.speex_echo_cancellation(self.echo, rec.ctypes.data, play.ctypes.data, out.ctypes.data)
        if self.pre is not None:
            self.lib.speex_preprocess_run(self.pre, out.ctypes.data)

    def destroy(self) -> None:
        if self.pre is not None:
            self.lib.speex_preprocess_state_destroy(self.pre)
            self.pre = None
        if self.echo:
            self.lib.speex_echo_state_destroy(self.echo)
            self.echo = None


class _PyaecSpeex:
    """The speexdsp bundled in the ``pyaec`` wheel (x86_64 only at 1.0.1)."""

    def __init__(self, frame: int, filter_len: int, rate: int, preprocess: bool) -> None:
        import pyaec

        self.lib = pyaec.lib
        self.state = self.lib.AecNew(frame, filter_len, rate, preprocess)
        if not self.state:
            raise RuntimeError("speexdsp could not make an echo canceller")

    def cancel(self, rec: np.ndarray, play: np.ndarray, out: np.ndarray) -> None:
        ptr = ctypes.POINTER(ctypes.c_int16)
        self.lib.AecCancelEcho(self.state, rec.ctypes.data_as(ptr), play.ctypes.data_as(ptr), out.ctypes.data_as(ptr), len(out))

    def destroy(self) -> None:
        if self.state:
            self.lib.AecDestroy(self.state)
            self.state = None


def _system_speexdsp() -> Any:
    name = ctypes.util.find_library("speexdsp")
    return ctypes.CDLL(name) if name else None


class SpeexCanceller:
    """speexdsp's MDF echo canceller with its preprocessor's residual echo suppression.

    From the ``pyaec`` wheel where it is built (x86_64: on hearth's PulseAudio path it converged
    within the first reply where the system's build did not), else from the system's
    ``libspeexdsp`` (Debian's ``libspeexdsp1``, which PulseAudio and PipeWire depend on: a
    Raspberry Pi has it)."""

    sample_rate = RATE
    frame = FRAME

    def __init__(self, filter_s: float = 0.25, preprocess: bool = True, library: str = "auto") -> None:
        self.filter_s = filter_s
        """Length of the adaptive filter: the room's tail plus the alignment's slack."""
        self.preprocess = preprocess
        """speexdsp's preprocessor after the filter (residual echo and noise suppression)."""
        self.library = library
        """"pyaec", "system" (libspeexdsp), or "auto": pyaec's if installed, else the system's."""
        self.latency = FRAME if preprocess else 0
        """Samples by which the cleaned output trails the input (the preprocessor's overlap)."""
        self._state: Any = None
        self._out = np.zeros(FRAME, np.int16)

    def _make(self) -> Any:
        args = (FRAME, int(self.filter_s * RATE), RATE, self.preprocess)
        if self.library in ("auto", "pyaec"):
            try:
                return _PyaecSpeex(*args)
            except ImportError:
                if self.library == "pyaec":
                    raise
        lib = _system_speexdsp()
        if lib is None:
            raise RuntimeError("neither pyaec nor libspeexdsp is installed (Debian: apt install libspeexdsp1)")
        return _SystemSpeex(lib, *args)

    def process(self, near: np.ndarray, far: np.ndarray) -> np.ndarray:
        if self._state is None:
            self._state = self._make()
        rec = np.ascontiguousarray(to_int16(near))
        play = np.ascontiguousarray(to_int16(far))
        self._state.cancel(rec, play, self._out)
        return to_float(self._out)

    def reset(self) -> None:
        self._destroy()

    def _destroy(self) -> None:
        if self._state is not None:
            self._state.destroy()
            self._state = None

    def __del__(self) -> None:
        try:
            self._destroy()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass
