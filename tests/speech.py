"""Test speech made on the spot with Debian's espeak-ng (synthetic, robotic, but real audio)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np

from audio.wav import read_wav

RATE = 16000


def espeak(text: str, voice: str, directory: Path) -> np.ndarray:
    """Speech synthesized by espeak-ng, as 16 kHz float32."""
    out = directory / f"{voice}-{abs(hash(text))}.wav"
    subprocess.run(["espeak-ng", "-v", voice, "-w", str(out), text], check=True, capture_output=True)
    return read_wav(out, RATE).samples


def silence(seconds: float) -> np.ndarray:
    return np.zeros(int(seconds * RATE), dtype=np.float32)
