"""How much of a chunk of audio is quiet at its edges, and samples made safe to hand on.

A voice leaves a little silence before and after what it says (piper: about 0.06 s before and
0.15 s after a sentence).  A pause between two spoken units is heard as that silence plus
whatever is inserted, so whoever times pauses needs to know it.

Levels in dBFS, frame by frame within a band of frequencies, are what ``hearth mic-check`` measures
the room and the voice in.
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


SILENCE_DBFS = -120.0
"""The level given to digital silence (no power at all), so that levels stay finite numbers."""


def dbfs(power: float | np.ndarray) -> float | np.ndarray:
    """Mean power (of full scale 1.0) in dB: 0 dBFS is an RMS of 1.0, the level hearth counts from
    everywhere (-40 dBFS is an RMS of 0.01; a full-scale sine is -3 dBFS).  Never below
    :data:`SILENCE_DBFS`."""
    level = 10.0 * np.log10(np.maximum(power, 10.0 ** (SILENCE_DBFS / 10.0)))
    return float(level) if np.ndim(level) == 0 else level


def band_power(samples: np.ndarray, sample_rate: int, frame: int, low_hz: float, high_hz: float) -> np.ndarray:
    """The mean power of each whole ``frame`` of ``samples`` between ``low_hz`` and ``high_hz``.

    Measured on the frame's spectrum (a Hann window, corrected so that a tone or noise inside the
    band reads the power it has), so no filter state carries from one frame to the next and a
    frame reads the same wherever it is cut from.  A trailing part frame is left out.
    """
    x = finite_samples(samples)
    n = len(x) // frame
    if n == 0:
        return np.zeros(0)
    frames = x[: n * frame].reshape(n, frame).astype(np.float64)
    window = 0.5 - 0.5 * np.cos(2.0 * np.pi * np.arange(frame) / frame)
    spectrum = np.fft.rfft(frames * window, axis=1)
    freqs = np.fft.rfftfreq(frame, 1.0 / sample_rate)
    inside = (freqs >= low_hz) & (freqs < high_hz) & (freqs > 0) & (freqs < sample_rate / 2)
    # Parseval: each bin other than DC and Nyquist stands for itself and its mirror.
    return 2.0 * np.sum(np.abs(spectrum[:, inside]) ** 2, axis=1) / (frame * np.sum(window**2))


def speech_snr_db(samples: np.ndarray, sample_rate: int, speech: tuple[int, int], frame_s: float = 0.02) -> float | None:
    """How far the voice stands above the room in one utterance, in dB, or None when it cannot tell.

    ``speech`` is the (start, end) sample span the voice detector called speech.  The voice's
    level is the mean power of the louder half of the frames in that span, in the voice's band
    (150 Hz–4 kHz, where hum and hiss do not count); the room's is the median of the frames
    outside it (from the press to the speech, and after it).  The room's power is taken off
    the voice's, so speech over a loud fan reads low even though the sum is loud.
    """
    frame = max(1, int(frame_s * sample_rate))
    power = band_power(samples, sample_rate, frame, 150.0, 4000.0)
    if len(power) < 5:
        return None
    first, last = max(0, speech[0] // frame), min(len(power), -(-speech[1] // frame))
    inside = power[first:last]
    outside = np.concatenate([power[:first], power[last:]])
    if len(inside) < 5:
        return None
    if len(outside) < 3:
        return None  # no room heard apart from the voice; the quiet between words is too unsure a guess
    room = float(np.median(outside))
    loud = np.sort(inside)[len(inside) // 2 :]
    voice = float(np.mean(loud)) - room
    floor = 10.0 ** (SILENCE_DBFS / 10.0)
    return max(-30.0, float(dbfs(max(voice, floor)) - dbfs(max(room, floor))))
