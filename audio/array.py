"""A microphone array's geometry: where each microphone sits, and which captured channel it is.

Positions are metres from the array's centre, in the board's own frame: ``x`` to the right and
``y`` away from the back wall (into the room) when the board lies flat on the counter with its
connector to the wall, ``z`` up.  The boards made for the Pi are named (:data:`BOARDS`); any other
array is a TOML file (:func:`load_geometry`)::

    name = "my-square"
    capture_channels = 6          # what the sound card delivers (loopback channels included)
    mic_channels = [1, 2, 3, 4]   # which of them are microphones, in the order of `mics`
    mics = [[-0.032, 0.0, 0.0], [0.0, -0.032, 0.0], [0.032, 0.0, 0.0], [0.0, 0.032, 0.0]]

``capture_channels`` defaults to the number of microphones and ``mic_channels`` to the first
channels in order.  The bench renders a simulated kitchen for any geometry the same way, so a
recording made on a real board can be played back as its capture (channel order as listed).
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass
from pathlib import Path

Position = tuple[float, float, float]


@dataclass(frozen=True)
class ArrayGeometry:
    """Where the microphones of an array are and which channels carry them."""

    name: str
    """As given to ``audio.array`` and ``hearth bench --array``."""
    mics: tuple[Position, ...]
    """Each microphone's position in metres from the array's centre, in ``mic_channels`` order."""
    capture_channels: int
    """Channels the sound card delivers (microphones and any loopback channels)."""
    mic_channels: tuple[int, ...]
    """The captured channel of each microphone."""
    what: str = ""
    """One line for the docs and ``hearth mic-check``."""

    def __post_init__(self) -> None:
        if len(self.mics) < 2:
            raise ValueError(f"array {self.name!r}: an array needs at least two microphones")
        if len(self.mic_channels) != len(self.mics):
            raise ValueError(f"array {self.name!r}: {len(self.mics)} microphones but {len(self.mic_channels)} mic_channels")
        if len(set(self.mic_channels)) != len(self.mic_channels):
            raise ValueError(f"array {self.name!r}: a channel is listed for two microphones")
        if any(not 0 <= c < self.capture_channels for c in self.mic_channels):
            raise ValueError(f"array {self.name!r}: mic_channels must lie in 0..{self.capture_channels - 1}")
        for position in self.mics:
            if len(position) != 3 or any(not math.isfinite(v) or abs(v) > 1.0 for v in position):
                raise ValueError(f"array {self.name!r}: a position is three numbers in metres within 1 m of the centre")

    @property
    def count(self) -> int:
        """Number of microphones."""
        return len(self.mics)

    @property
    def aperture_m(self) -> float:
        """The largest distance between two microphones."""
        return max(math.dist(a, b) for a in self.mics for b in self.mics)


def _square(name: str, side_m: float, what: str, channels: int | None = None, first: int = 0) -> ArrayGeometry:
    h = side_m / 2
    mics = ((-h, -h, 0.0), (-h, h, 0.0), (h, h, 0.0), (h, -h, 0.0))
    return ArrayGeometry(name, mics, channels or 4, tuple(range(first, first + 4)), what)


def _circle(name: str, radius_m: float, count: int, what: str, channels: int | None = None) -> ArrayGeometry:
    mics = tuple((radius_m * math.cos(2 * math.pi * i / count), radius_m * math.sin(2 * math.pi * i / count), 0.0)
                 for i in range(count))
    return ArrayGeometry(name, mics, channels or count, tuple(range(count)), what)


BOARDS: dict[str, ArrayGeometry] = {g.name: g for g in (
    ArrayGeometry("respeaker-2mic", ((-0.029, 0.0, 0.0), (0.029, 0.0, 0.0)), 2, (0, 1),
                  "ReSpeaker 2-Mics Pi HAT: two microphones 58 mm apart"),
    _square("respeaker-4mic", 0.0572, "ReSpeaker 4-Mic Array for Raspberry Pi: a square, 57.2 mm a side (AC108)"),
    _square("respeaker-usb-4mic", 0.0453, "ReSpeaker USB Mic Array v2.0, six-channel firmware: channels 1-4 are the "
            "microphones on a 64 mm diagonal", channels=6, first=1),
    _circle("respeaker-6mic", 0.0463, 6, "ReSpeaker 6-Mic Circular Array for Raspberry Pi: radius 46.3 mm, "
            "8 channels, the last two the playback loopback", channels=8),
    _square("square-65mm", 0.065, "a 4-microphone square, 65 mm a side"),
)}
"""The arrays known by name."""


def load_geometry(name_or_path: str | Path) -> ArrayGeometry:
    """A board by name (:data:`BOARDS`), or the geometry in a TOML file; ValueError in one line."""
    text = str(name_or_path)
    if text in BOARDS:
        return BOARDS[text]
    path = Path(text).expanduser()
    if not path.suffix == ".toml":
        raise ValueError(f"no array {text!r} (known: {', '.join(BOARDS)}, or a .toml file)")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ValueError(f"array file {path}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"array file {path}: {exc}") from None
    try:
        mics = tuple((float(p[0]), float(p[1]), float(p[2])) for p in data["mics"])
    except (KeyError, TypeError, ValueError, IndexError):
        raise ValueError(f"array file {path}: `mics` must list [x, y, z] in metres, one per microphone") from None
    unknown = set(data) - {"name", "mics", "capture_channels", "mic_channels", "what"}
    if unknown:
        raise ValueError(f"array file {path}: unknown key {sorted(unknown)[0]!r}")
    channels = int(data.get("capture_channels", len(mics)))
    mic_channels = tuple(int(c) for c in data.get("mic_channels", range(len(mics))))
    return ArrayGeometry(str(data.get("name", path.stem)), mics, channels, mic_channels, str(data.get("what", "")))
