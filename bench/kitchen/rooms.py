"""Kitchens as rooms: shoebox rooms whose impulse responses pyroomacoustics computes (image method).

A preset gives the room's size and reverberation time (the walls' absorption and the image order
come from Sabine's formula, ``pra.inverse_sabine``), where the microphone stands (on the counter),
how far the user talks from it, and the spots the kitchen's sounds come from (the hood over the
hob, the sink, the fridge in a corner, a shelf with a radio, another person).  The image method has
no randomness here (``use_rand_ism`` off), so a preset always gives the same responses; they are
cached by a hash of everything that shapes them, pyroomacoustics' version included.

Each response keeps the spherical spreading of its path (amplitude falling as 1/r: pyroomacoustics
0.10 leaves out the 4π of 1/(4πr), older versions keep it), so a response's level means nothing
by itself: levels are set after convolving (:mod:`bench.kitchen.mix`).  The filter delay pyroomacoustics puts in front of every response is
taken off, so the direct sound arrives at ``distance / c``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

RATE = 16000
MOUTH_M = 1.6
"""Height of a standing user's mouth."""
SPEED_OF_SOUND = 343.0


@dataclass(frozen=True)
class RoomPreset:
    """A kitchen: its shape, its reverberation, where the microphone, the user and the sounds are."""

    name: str
    """As given to ``--room``."""
    size_m: tuple[float, float, float]
    """Length, width, height."""
    rt60_s: float
    """Reverberation time (Sabine's), from which the walls' absorption is set."""
    mic: tuple[float, float, float]
    """The microphone, on the counter by the back wall (y = 0)."""
    talker_m: float
    """Distance from the user's mouth to the microphone."""
    talker_bearing_deg: float
    """Direction from the microphone to the user, in the floor plane (0° along x, 90° into the room)."""
    spots: tuple[tuple[str, tuple[float, float, float]], ...]
    """Where each kind of sound comes from (see :data:`bench.kitchen.noises.NoiseKind.spot`)."""
    what: str
    """One line for the docs."""

    @property
    def talker(self) -> tuple[float, float, float]:
        """The user's mouth: ``talker_m`` from the microphone, at :data:`MOUTH_M`."""
        rise = MOUTH_M - self.mic[2]
        across = math.sqrt(max(0.0, self.talker_m ** 2 - rise ** 2))
        angle = math.radians(self.talker_bearing_deg)
        return (self.mic[0] + across * math.cos(angle), self.mic[1] + across * math.sin(angle), MOUTH_M)

    def spot(self, name: str) -> tuple[float, float, float]:
        return dict(self.spots)[name]


def _spots(x: float, y: float) -> tuple[tuple[str, tuple[float, float, float]], ...]:
    """The sound sources of an ``x`` × ``y`` kitchen: a line of units along the back wall, the
    fridge in the far corner, a shelf and a second person across the room."""
    return (
        ("hood", (0.6, 0.3, 1.8)),
        ("hob", (0.6, 0.35, 1.0)),
        ("sink", (0.45 * x, 0.35, 0.95)),
        ("counter", (0.3 * x, 0.55, 0.95)),
        ("dishwasher", (0.6 * x, 0.35, 0.4)),
        ("fridge", (0.4, y - 0.4, 1.0)),
        ("shelf", (x - 0.3, y - 0.3, 1.5)),
        ("person", (0.3 * x, 0.75 * y, MOUTH_M)),
    )


PRESETS: dict[str, RoomPreset] = {p.name: p for p in (
    RoomPreset("kitchen-a", (4.0, 3.5, 2.6), 0.5, (3.0, 0.4, 1.0), 2.0, 120.0, _spots(4.0, 3.5),
               "4 × 3.5 × 2.6 m, RT60 0.5 s, the user 2 m from the microphone"),
    RoomPreset("kitchen-small", (3.0, 2.4, 2.4), 0.3, (2.4, 0.35, 1.0), 1.0, 110.0, _spots(3.0, 2.4),
               "a galley, 3 × 2.4 × 2.4 m, RT60 0.3 s, the user 1 m away"),
    RoomPreset("kitchen-near", (4.0, 3.5, 2.6), 0.5, (3.0, 0.4, 1.3), 0.5, 120.0, _spots(4.0, 3.5),
               "kitchen-a with the microphone on a shelf at 1.3 m and the user 0.5 m from it"),
    RoomPreset("kitchen-open", (7.0, 5.0, 2.8), 0.8, (5.5, 0.4, 1.0), 3.0, 125.0, _spots(7.0, 5.0),
               "open plan with hard surfaces, 7 × 5 × 2.8 m, RT60 0.8 s, the user 3 m away"),
)}
"""The kitchens ``--room`` knows; ``kitchen-a`` is the default."""

DEFAULT_ROOM = "kitchen-a"


def room_preset(name: str) -> RoomPreset:
    try:
        return PRESETS[name]
    except KeyError:
        raise ValueError(f"no room {name!r} (known: {', '.join(PRESETS)})") from None


def _key(preset: RoomPreset, max_order: int | None, mics: tuple[tuple[float, float, float], ...] | None = None) -> str:
    import pyroomacoustics as pra

    shape = {"preset": asdict(preset), "max_order": max_order, "rate": RATE, "pra": pra.__version__}
    if mics is not None:
        shape["mics"] = [list(m) for m in mics]
    return hashlib.sha256(json.dumps(shape, sort_keys=True).encode()).hexdigest()[:16]



def impulse_responses(
    preset: RoomPreset, cache_dir: Path | None, max_order: int | None = None, mics: tuple[tuple[float, float, float], ...] | None = None,
) -> dict[str, np.ndarray]:
    """The responses from the talker (``"talker"``) and every spot to the microphone, cached.

    ``max_order`` caps the image order (tests keep it small); None takes Sabine's.  With ``mics``
    (an array's positions, metres from the preset's microphone, which is the array's centre) each
    response is ``(len(mics), samples)``, one row per microphone.
    """
    path = cache_dir / "bench-kitchen" / f"rir-{_key(preset, max_order, mics)}.npz" if cache_dir is not None else None
    if path is not None and path.is_file():
        with np.load(path) as data:
            return {name: data[name] for name in data.files}
    responses = compute_responses(preset, max_order, mics)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f"{path.stem}.{os.getpid()}.part.npz")
        try:
            np.savez(partial, **responses)
            os.replace(partial, path)
        finally:
            partial.unlink(missing_ok=True)
    return responses


def compute_responses(
    preset: RoomPreset, max_order: int | None = None, mics: tuple[tuple[float, float, float], ...] | None = None,
) -> dict[str, np.ndarray]:
    import pyroomacoustics as pra

    absorption, sabine_order = pra.inverse_sabine(preset.rt60_s, list(preset.size_m))
    room = pra.ShoeBox(
        list(preset.size_m), fs=RATE, materials=pra.Material(absorption),
        max_order=sabine_order if max_order is None else max_order, use_rand_ism=False, air_absorption=False,
    )
    names = ["talker", *(name for name, _ in preset.spots)]
    for position in [preset.talker, *(where for _, where in preset.spots)]:
        room.add_source(list(position))
    if mics is None:
        room.add_microphone(list(preset.mic))
    else:
        room.add_microphone_array(np.array([[preset.mic[k] + m[k] for m in mics] for k in range(3)]))
    room.compute_rir()
    lead = pra.constants.get("frac_delay_length") // 2  # the fractional-delay filter's own delay
    if mics is None:
        responses = {name: np.asarray(room.rir[0][i][lead:], dtype=np.float64) for i, name in enumerate(names)}
    else:  # one row per microphone, all as long as the longest
        responses = {}
        for i, name in enumerate(names):
            rows = [np.asarray(room.rir[m][i][lead:], dtype=np.float64) for m in range(len(mics))]
            length = max(len(r) for r in rows)
            responses[name] = np.stack([np.pad(r, (0, length - len(r))) for r in rows])
    log.info("room %s: %d responses, %d samples and more", preset.name, len(responses), min(len(r) for r in responses.values()))
    return responses


def direct_delay_s(preset: RoomPreset, source: tuple[float, float, float]) -> float:
    """When the direct sound from ``source`` reaches the microphone."""
    return math.dist(source, preset.mic) / SPEED_OF_SOUND
