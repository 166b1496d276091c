"""A short two-note chime, made rather than stored, so it matches any output rate."""

from __future__ import annotations

import numpy as np

from audio.protocols import AudioChunk


def chime(sample_rate: int = 22050, notes_hz: tuple[float, ...] = (880.0, 1318.5), note_s: float = 0.18, level: float = 0.3) -> AudioChunk:
    """Notes one after another, each with a soft attack and a bell-like decay (no clicks)."""
    n = int(note_s * sample_rate)
    t = np.arange(n) / sample_rate
    fade_out = np.minimum(1.0, (note_s - t) / 0.01)  # the decay alone still ends above zero: a click
    envelope = np.minimum(1.0, t / 0.005) * np.exp(-t * 9.0) * fade_out
    notes = [np.sin(2 * np.pi * hz * t) * envelope for hz in notes_hz]
    samples = (level * np.concatenate(notes)).astype(np.float32)
    return AudioChunk(samples, sample_rate)
