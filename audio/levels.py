"""How much of a chunk of audio is quiet at its edges, and samples made safe to hand on.

A voice leaves a little silence before and after what it says (piper: about 0.06 s before and
0.15 s after a sentence).  A pause between two spoken units is heard as that silence plus
whatever is inserted, so whoever times pauses needs to know it.
"""

from __future__ import annotations

import numpy as np

from audio.protocols import AudioChunk

QUIET = 0.01
"""Peak level (of full scale 1.0) below which a sample counts as silence: about -40 dBFS."""


def leading_quiet_s(chunk: AudioChunk, threshold: float = QUIET) -> float:
    """Seconds of silence at the start of ``chunk`` (all of it when it is silent throughout)."""
    loud = np.flatnonzero(np.abs(chunk.samples) >= threshold)
    return float(loud[0] if len(loud) else len(chunk.samples)) / chunk.sample_rate


def trailing_quiet_s(chunk: AudioChunk, threshold: float = QUIET) -> float:
    """Seconds of silence at the end of ``chunk`` (all of it when it is silent throughout)."""
    loud = np.flatnonzero(np.abs(chunk.samples) >= threshold)
    return float(len(chunk.samples) - 1 - loud[-1] if len(loud) else len(chunk.samples)) / chunk.sample_rate


def finite_samples(samples: np.ndarray) -> np.ndarray:
    """``samples`` as float32 in one dimension, every value finite and within [-1, 1].

    A sound card's float stream, a broken driver or a file can hold NaN, infinity or values far
    past full scale; the detector and the recognizers would turn them into silence, nonsense or
    an error.  NaN becomes silence, the rest is clipped as a converter clips.  Clean input (the
    usual case) comes back as it is, without a copy.
    """
    with np.errstate(over="ignore", invalid="ignore"):  # float64 past float32's range becomes infinity, clipped below
        flat = np.asarray(samples, dtype=np.float32).reshape(-1)
    if len(flat) == 0:
        return flat
    low, high = float(np.min(flat)), float(np.max(flat))  # NaN anywhere makes both NaN
    if -1.0 <= low and high <= 1.0:
        return flat
    return np.clip(np.nan_to_num(flat, nan=0.0, posinf=1.0, neginf=-1.0), -1.0, 1.0)
