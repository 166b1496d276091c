"""Front ends the hearing bench compares: functions from the microphone's samples to the samples the
voice detector and the recognizer get (16 kHz float32 in, the same length out).

A front end registers by name (``@front_end("name")``), or is named on the command line by its
import path, ``package.module:function``, so one that lives in the product (``audio/``) plugs in
without this module knowing it.  Each is called once per take, on the whole take; one that keeps
state must start afresh on each call.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

import numpy as np

RATE = 16000

FrontEnd = Callable[[np.ndarray], np.ndarray]

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
