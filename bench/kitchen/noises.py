"""A kitchen's sounds, synthesized from what each physically is (no registry package ships kitchen recordings).

Every generator is ``make(n, rng) -> samples``: ``n`` samples at 16 kHz, dry (as at the source,
before the room), unit RMS, and a pure function of the generator ``rng`` (seeded by the caller),
so a condition and a seed always give the same sound on any machine.

- **fan**: an extractor hood.  Turbulent flow is broadband and falls about 6 dB an octave above a
  few hundred hertz; the motor hums at twice the mains frequency; the impeller's blades pass the
  outlet ``blades × rpm / 60`` times a second, a tone (the blade-pass frequency) with harmonics,
  wobbling a little as the load changes; the flow gusts slowly.
- **fridge**: a compressor: mains hum and its harmonics (50–300 Hz) over a low rumble, and a faint
  hiss of refrigerant through the capillary.
- **dishwasher**: the circulation pump's hum, and water sprayed at the dishes: a band of noise
  (300 Hz–5 kHz) swelling as the spray arm turns, with short splashes.
- **tap**: running water is bubbles (Minnaert): each bubble trapped by the stream rings at
  ``f ≈ 3.26 / r`` Hz (radius ``r`` in metres, 0.5–4 mm here: 0.8–6.5 kHz), a damped sinusoid
  whose pitch rises as it nears the surface, thousands a second, over the splash's hiss.
- **sizzle**: frying: a steady hiss above 2 kHz (water boiling off) with random crackles (droplets
  bursting in the oil), whose sizes have a heavy tail.
- **dishes**: plates, cups and cutlery set down: sparse impacts, each a click and a few damped,
  inharmonic partials (the object's modes), sometimes two or three at once.
- **knife**: chopping on a board: chops three or four a second in runs, each a thud (the board's
  low modes) and the blade's click, with pauses while the food is moved.
- **music**: synthesized: a chord progression (I–V–vi–IV) as plucked arpeggios and pads over a
  bass, a beat (kick, snare, hi-hat), through a small speaker's band.
- **radio**: a human reading (the LibriVox recording the ``en-human`` suite also plays, from the
  ``moonshine-voice`` wheel) through a small radio's band (250 Hz–4.5 kHz) and its compression.
- **voice**: a second person in the room: another human reader (``beckett.wav`` from the same
  wheel), full band, looped with breaths between.

Neither human voice is hearth's own piper voice, which speaks the synthetic requests.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

log = logging.getLogger(__name__)

RATE = 16000

Generator = Callable[[int, np.random.Generator], np.ndarray]


@dataclass(frozen=True)
class NoiseKind:
    """One kind of kitchen sound."""

    name: str
    """Its name in a condition (``fan@10``)."""
    make: Generator
    """``(n, rng) -> n`` samples at 16 kHz, dry, unit RMS."""
    spot: str
    """Where in the room it sounds (a spot of :class:`bench.kitchen.rooms.RoomPreset`)."""
    impulsive: bool
    """Sparse events: its level is measured over the whole excerpt, not only where the request speaks
    (over a short request a clink may or may not fall)."""
    what: str
    """One line on what it is."""


def _unit(x: np.ndarray) -> np.ndarray:
    rms = float(np.sqrt(np.mean(np.square(x)))) if len(x) else 0.0
    return (x / rms if rms > 0 else x).astype(np.float64)


def _freqs(n: int) -> np.ndarray:
    return np.fft.rfftfreq(n, 1 / RATE)


def shaped(rng: np.random.Generator, n: int, gain: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """Gaussian noise with amplitude spectrum ``gain(f)``, unit RMS."""
    spectrum = np.fft.rfft(rng.standard_normal(n)) * gain(_freqs(n))
    return _unit(np.fft.irfft(spectrum, n))


def band(lo: float, hi: float, order: int = 2) -> Callable[[np.ndarray], np.ndarray]:
    """An amplitude response passing ``lo``–``hi`` Hz, falling ``6 × order`` dB an octave outside."""
    def gain(f: np.ndarray) -> np.ndarray:
        f = np.maximum(f, 1e-3)
        return 1 / np.sqrt(1 + (lo / f) ** (2 * order)) / np.sqrt(1 + (f / hi) ** (2 * order))
    return gain


def slow(rng: np.random.Generator, n: int, rate_hz: float) -> np.ndarray:
    """A smooth random wobble, zero mean and unit deviation, changing about ``rate_hz`` times a second."""
    points = max(2, int(n / RATE * rate_hz) + 3)
    knots = rng.standard_normal(points)
    wobble = np.interp(np.arange(n), np.linspace(0, n, points), knots)
    return (wobble - wobble.mean()) / (wobble.std() or 1.0)


def tone(rng: np.random.Generator, n: int, hz: float, wobble: float = 0.002) -> np.ndarray:
    """A sine at ``hz`` whose frequency drifts by about ``wobble`` of itself, from a random phase."""
    f = hz * (1 + wobble * slow(rng, n, 2.0))
    return np.sin(2 * np.pi * np.cumsum(f) / RATE + rng.uniform(0, 2 * np.pi))


def ring(n: int, hz: float, decay_s: float, rise: float = 0.0) -> np.ndarray:
    """A damped sinusoid: ``n`` samples, amplitude falling by e every ``decay_s``; pitch rising by
    ``rise`` of itself per decay time (a bubble nearing the surface)."""
    t = np.arange(n) / RATE
    f = hz * (1 + rise * t / decay_s)
    return np.exp(-t / decay_s) * np.sin(2 * np.pi * np.cumsum(f) / RATE)


def _add(out: np.ndarray, at: int, event: np.ndarray) -> None:
    if at >= len(out):
        return
    end = min(len(out), at + len(event))
    out[at:end] += event[: end - at]


def _events(rng: np.random.Generator, n: int, per_s: float) -> np.ndarray:
    """Poisson event times (samples) over ``n`` samples."""
    count = rng.poisson(per_s * n / RATE)
    return np.sort(rng.integers(0, max(1, n), count))


# -- steady -----------------------------------------------------------------------------------------

def fan(n: int, rng: np.random.Generator) -> np.ndarray:
    rpm = rng.uniform(2700, 3000)
    blades = int(rng.integers(5, 8))
    blade_pass = blades * rpm / 60  # 225-350 Hz
    flow = shaped(rng, n, lambda f: (f / (f + 40)) / np.sqrt(1 + (f / 300) ** 2)) * (1 + 0.1 * slow(rng, n, 0.7))
    hum = 0.25 * tone(rng, n, 100, 0.0005) + 0.1 * tone(rng, n, 200, 0.0005)
    blades_tone = sum(a * tone(rng, n, k * blade_pass, 0.003) for k, a in ((1, 0.6), (2, 0.3), (3, 0.12)))
    return _unit(flow + hum + blades_tone)


def fridge(n: int, rng: np.random.Generator) -> np.ndarray:
    rumble = shaped(rng, n, band(20, 250))
    hum = sum(a * tone(rng, n, hz, 0.0005) for hz, a in ((50, 0.5), (100, 1.0), (150, 0.4), (200, 0.3), (300, 0.15)))
    hiss = 0.05 * shaped(rng, n, band(2000, 4000))
    return _unit(0.5 * rumble + hum + hiss)


def dishwasher(n: int, rng: np.random.Generator) -> np.ndarray:
    pump = sum(a * tone(rng, n, hz, 0.001) for hz, a in ((48, 0.3), (96, 0.5), (144, 0.2)))
    t = np.arange(n) / RATE
    arm = 1 + 0.5 * np.sin(2 * np.pi * rng.uniform(0.6, 1.0) * t + rng.uniform(0, 2 * np.pi))
    spray = shaped(rng, n, band(300, 5000)) * arm
    splashes = np.zeros(n)
    for at in _events(rng, n, 8.0):
        length = int(rng.uniform(0.02, 0.06) * RATE)
        burst = shaped(rng, length, band(1000, 6000)) * np.hanning(length)
        _add(splashes, int(at), burst * rng.uniform(0.5, 1.5))
    return _unit(0.6 * pump + spray + 0.5 * splashes)


# -- water and frying -------------------------------------------------------------------------------

def tap(n: int, rng: np.random.Generator) -> np.ndarray:
    out = np.zeros(n)
    # Bubble radii spread log-uniformly over 0.5-4 mm: Minnaert frequencies 0.8-6.5 kHz.
    for at in _events(rng, n, 1500.0):
        radius = np.exp(rng.uniform(np.log(0.0005), np.log(0.004)))
        hz = 3.26 / radius
        decay = 1 / (0.13 * hz + 0.0072 * hz ** 1.5)  # viscous, thermal and radiation damping (van den Doel)
        length = min(int(5 * decay * RATE), RATE // 10)
        amplitude = (radius / 0.001) ** 0.5 * rng.lognormal(0, 0.5)
        _add(out, int(at), amplitude * ring(length, hz, decay, rise=0.1))
    splash = shaped(rng, n, band(1500, 7000, order=1))
    return _unit(_unit(out) + 0.4 * splash)


def sizzle(n: int, rng: np.random.Generator) -> np.ndarray:
    hiss = shaped(rng, n, band(2000, 7500)) * (1 + 0.3 * slow(rng, n, 3.0)).clip(0.2)
    crackles = np.zeros(n)
    for at in _events(rng, n, 120.0):
        length = max(8, int(rng.uniform(0.0005, 0.004) * RATE))
        burst = rng.standard_normal(length) * np.exp(-np.arange(length) / (length / 4))
        # The difference leaves what is above ~1 kHz; a few droplets pop much louder than the rest.
        _add(crackles, int(at), np.diff(burst, prepend=0.0) * min(rng.lognormal(0, 0.7), 8.0))
    return _unit(hiss + 0.8 * _unit(crackles))


# -- impulsive --------------------------------------------------------------------------------------

OBJECTS = {
    # name: (fundamental range Hz, partial ratios, decay range s); ratios are a ceramic plate's, a cup's
    # and a free bar's (cutlery) modes, inharmonic.
    "plate": ((700, 1400), (1.0, 1.72, 2.41, 3.12, 3.89), (0.08, 0.3)),
    "cup": ((1800, 3200), (1.0, 1.58, 2.33, 3.17), (0.1, 0.4)),
    "cutlery": ((2500, 4500), (1.0, 2.76, 5.40), (0.03, 0.12)),
}


def clink(rng: np.random.Generator, kind: str) -> np.ndarray:
    """One object struck: a short click and its modes, each with its own jitter and decay."""
    (lo, hi), ratios, (d_lo, d_hi) = OBJECTS[kind]
    f0 = rng.uniform(lo, hi)
    length = int(d_hi * 5 * RATE)
    event = np.zeros(length)
    for k, ratio in enumerate(ratios):
        hz = f0 * ratio * rng.uniform(0.97, 1.03)
        if hz > 0.45 * RATE:
            break
        event += rng.uniform(0.3, 1.0) / (1 + k) * ring(length, hz, rng.uniform(d_lo, d_hi) / (1 + 0.5 * k))
    click = rng.standard_normal(16) * np.hanning(16)
    event[:16] += 0.5 * click
    return event


def dishes(n: int, rng: np.random.Generator) -> np.ndarray:
    out = np.zeros(n)
    # At least one: the level is measured over the excerpt, and a kitchen with dishes has some.
    times = np.concatenate([[rng.integers(0, max(1, n // 2))], _events(rng, n, 1.2)])
    for at in times:
        for hit in range(int(rng.choice([1, 1, 1, 2, 3]))):  # a stack set down: two or three at once
            kind = str(rng.choice(list(OBJECTS)))
            _add(out, int(at) + hit * int(rng.uniform(0.02, 0.09) * RATE), rng.lognormal(0, 0.5) * clink(rng, kind))
    return _unit(out)


def knife(n: int, rng: np.random.Generator) -> np.ndarray:
    out = np.zeros(n)
    board = (rng.uniform(170, 250), rng.uniform(420, 600))
    length = int(0.12 * RATE)
    at = int(rng.uniform(0, 0.3) * RATE)
    while at < n:
        period = rng.uniform(0.25, 0.33)  # three or four chops a second
        for _ in range(int(rng.integers(8, 20))):
            thud = ring(length, board[0], 0.03) + 0.5 * ring(length, board[1], 0.02)
            click = np.zeros(length)
            click[:32] = np.diff(rng.standard_normal(33)) * np.exp(-np.arange(32) / 6)
            _add(out, at, rng.uniform(0.7, 1.2) * (thud + 0.6 * click))
            at += int((period + rng.normal(0, 0.01)) * RATE)
        at += int(rng.uniform(0.5, 2.0) * RATE)  # the food moved along
    return _unit(out)


# -- music and voices -------------------------------------------------------------------------------

def _note_hz(midi: float) -> float:
    return 440.0 * 2 ** ((midi - 69) / 12)


def music(n: int, rng: np.random.Generator) -> np.ndarray:
    bpm = rng.uniform(96, 126)
    beat = int(60 / bpm * RATE)
    root = int(rng.integers(45, 57))
    progression = ((0, "maj"), (7, "maj"), (9, "min"), (5, "maj"))  # I-V-vi-IV
    out = np.zeros(n + 4 * beat)
    drums = np.zeros_like(out)
    start = -int(rng.integers(0, 16)) * beat  # somewhere into the song
    bar = 0
    while start + bar * 4 * beat < n:
        at = start + bar * 4 * beat
        offset, quality = progression[bar % 4]
        chord = [root + offset, root + offset + (4 if quality == "maj" else 3), root + offset + 7]
        for step in range(8):  # plucked arpeggio in eighths, an octave up
            hz = _note_hz(chord[step % 3] + 12 * (1 + step // 6))
            note = sum(ring(beat, k * hz, 0.25 / k) / k for k in (1, 2, 3))
            _add_at(out, at + step * beat // 2, 0.3 * note)
        pad = sum(sum(ring(4 * beat, k * _note_hz(m), 1.5) / k ** 1.5 for k in (1, 2, 3, 4)) for m in chord)
        _add_at(out, at, 0.15 * pad)
        for b in (0, 2):  # bass on the first and third beats
            _add_at(out, at + b * beat, 0.6 * (ring(beat, _note_hz(chord[0] - 12), 0.3) + 0.3 * ring(beat, _note_hz(chord[0]), 0.2)))
        for b in range(4):
            kick = np.exp(-np.arange(beat) / (0.05 * RATE)) * np.sin(2 * np.pi * np.cumsum(45 + 80 * np.exp(-np.arange(beat) / 600)) / RATE)
            if b in (0, 2):
                _add_at(drums, at + b * beat, kick)
            else:
                snare = shaped(rng, beat, band(1000, 5000)) * np.exp(-np.arange(beat) / (0.04 * RATE))
                _add_at(drums, at + b * beat, 0.5 * snare + 0.3 * ring(beat, 185, 0.05))
            for half in (0, 1):
                hat = shaped(rng, beat // 4, band(6000, 7900)) * np.exp(-np.arange(beat // 4) / (0.008 * RATE))
                _add_at(drums, at + b * beat + half * beat // 2, 0.15 * hat)
        bar += 1
    mixed = np.fft.irfft(np.fft.rfft(out + drums) * band(120, 7000)(_freqs(len(out))), len(out))  # a small speaker
    return _unit(mixed[:n])


def _add_at(out: np.ndarray, at: int, event: np.ndarray) -> None:
    if at < 0:
        event, at = event[-at:], 0
    _add(out, at, event)


RECORDINGS = {
    "radio": "pypi:moonshine-voice==0.1.5/moonshine_voice/assets/two_cities.wav",
    "voice": "pypi:moonshine-voice==0.1.5/moonshine_voice/assets/beckett.wav",
}
"""The human readings the voices are made of (fetched from the registry wheel on first use)."""


@functools.lru_cache(maxsize=4)
def recording(name: str) -> np.ndarray:
    """A reading of :data:`RECORDINGS`, 16 kHz mono, fetched and cached like a suite's recordings."""
    from audio.wav import read_wav
    from bench.suites.scenarios import resolve_audio
    from bench.suites.schema import Scenario

    holder = Scenario(id=f"noise-{name}", text="a reading", category="speech", expect=[], audio=RECORDINGS[name], synthetic=False)
    return read_wav(resolve_audio(holder), RATE).samples.astype(np.float64)


def looped(reading: np.ndarray, n: int, rng: np.random.Generator, gap_s: tuple[float, float]) -> np.ndarray:
    """``n`` samples of ``reading`` from a random point, over again with a breath of ``gap_s`` between."""
    out = np.zeros(n)
    at = -int(rng.integers(0, len(reading)))
    while at < n:
        _add_at(out, at, reading)
        at += len(reading) + int(rng.uniform(*gap_s) * RATE)
    return out


def radio(n: int, rng: np.random.Generator) -> np.ndarray:
    speech = _unit(looped(recording("radio"), n, rng, (0.3, 0.8)))
    # Broadcast compression: the gain rides a 50 ms envelope, bringing the quiet syllables up;
    # then the small speaker's band (after, so the gain's changes leave no rumble).
    window = int(0.05 * RATE)
    envelope = np.sqrt(np.convolve(speech ** 2, np.ones(window) / window, "same")) + 0.05
    squeezed = speech * envelope ** -0.6
    return _unit(np.fft.irfft(np.fft.rfft(squeezed) * band(250, 4500, order=4)(_freqs(n)), n))


def voice(n: int, rng: np.random.Generator) -> np.ndarray:
    return _unit(looped(recording("voice"), n, rng, (0.4, 1.5)))


NOISES: dict[str, NoiseKind] = {kind.name: kind for kind in (
    NoiseKind("fan", fan, "hood", False, "extractor hood: flow noise, motor hum, blade-pass tone"),
    NoiseKind("fridge", fridge, "fridge", False, "fridge compressor: mains hum and harmonics, rumble"),
    NoiseKind("dishwasher", dishwasher, "dishwasher", False, "dishwasher: pump hum, water spray, splashes"),
    NoiseKind("tap", tap, "sink", False, "running tap: Minnaert bubbles over splash hiss"),
    NoiseKind("sizzle", sizzle, "hob", False, "frying: hiss with crackles"),
    NoiseKind("dishes", dishes, "sink", True, "dishes: sparse clinks of plates, cups and cutlery"),
    NoiseKind("knife", knife, "counter", True, "a knife chopping on a board"),
    NoiseKind("music", music, "shelf", False, "synthesized music: chords, bass, a beat, small speaker"),
    NoiseKind("radio", radio, "shelf", False, "a human voice on the radio (LibriVox reading)"),
    NoiseKind("voice", voice, "person", False, "a second person talking (another human reader)"),
)}
"""Every kind of kitchen sound, by name."""
