"""How much of a chunk of audio is quiet at its edges.

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
