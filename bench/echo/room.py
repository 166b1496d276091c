"""A kitchen made of PulseAudio: hearth's speaker heard by its own microphone, and a person talking.

On a PulseAudio server of its own (:class:`bench.drills.pulse_server.PrivatePulseServer`: nothing else
shares it), two null sinks stand for the air: hearth plays into ``speaker``; its microphone records
``room``'s monitor.  The room hears the speaker through ``module-loopback`` (the direct path: a
latency and a gain), plus a second, later and quieter loopback (a reflection off the wall), so the
echo hearth must cancel has a delay PulseAudio chooses and keeps adjusting, a tail, and two clocks
between the sound card's and the room's streams.  A person is a WAV file played into ``room``
(``paplay``) at a chosen level.

    room = KitchenRoom(RoomSettings()); room.open()   # sets PULSE_SERVER/PULSE_SINK/PULSE_SOURCE
    ...; await room.say(path)                          # the person speaks
    room.close()
"""

from __future__ import annotations

import asyncio
import os
import re
from dataclasses import dataclass
from pathlib import Path

from bench.drills.pulse_server import NullSink, PrivatePulseServer, PulseError, pactl

SPEAKER = "hearth_speaker"
ROOM = "hearth_room"


@dataclass(frozen=True)
class RoomSettings:
    """The echo path and the person's level."""

    delay_ms: int = 60
    """Latency of the direct path (``module-loopback latency_msec``): driver buffers plus air."""
    gain_db: float = -6.0
    """Level of hearth's voice at the microphone, against what it plays."""
    reflection_ms: int = 130
    """Latency of the reflection (a second loopback)."""
    reflection_db: float = -16.0
    """Level of the reflection."""
    voice_db: float = 0.0
    """Level the person's WAV is played at (paplay's volume, dB)."""
    rate: int = 16000
    """Rate of both null sinks."""
    adjust_time_s: int = 0
    """``module-loopback adjust_time``: how often the loopback re-tunes its resampler to hold its
    latency.  PulseAudio's default (10 s) moves the echo by a millisecond or more within a minute,
    in steps, which no room and no single sound card does (both null sinks run on one clock, so
    nothing needs re-tuning); 0 keeps the path still.  Clock drift between a separate DAC and ADC
    is a steady slope, simulated in :mod:`bench.echo.choice`."""


def _db_volume(db: float) -> str:
    return f"{db:+.1f}dB"


class KitchenRoom:
    """The sinks, the loopbacks, and the environment that points PortAudio at them."""

    def __init__(self, settings: RoomSettings | None = None) -> None:
        self.settings = settings or RoomSettings()
        self.server = PrivatePulseServer()
        self.speaker = NullSink(self.server.address, SPEAKER, self.settings.rate)
        self.room = NullSink(self.server.address, ROOM, self.settings.rate)
        self._modules: list[str] = []
        self._saved_env: dict[str, str | None] = {}

    def open(self) -> None:
        """Start the server, make the sinks and the echo paths, and point this process at them."""
        s = self.settings
        self.server.start()
        try:
            self.speaker.load()
            self.room.load()
            self._loopback(s.delay_ms, s.gain_db)
            if s.reflection_db > -90:
                self._loopback(s.reflection_ms, s.reflection_db)
        except PulseError:
            self.close()
            raise
        for key, value in (("PULSE_SERVER", self.server.address), ("PULSE_SINK", SPEAKER), ("PULSE_SOURCE", f"{ROOM}.monitor")):
            self._saved_env[key] = os.environ.get(key)
            os.environ[key] = value
        _rescan_portaudio()

    def _loopback(self, latency_ms: int, gain_db: float) -> None:
        address = self.server.address
        done = pactl(
            address, "load-module", "module-loopback", f"source={SPEAKER}.monitor", f"sink={ROOM}",
            f"latency_msec={latency_ms}", f"adjust_time={self.settings.adjust_time_s}", "source_dont_move=true", "sink_dont_move=true",
        )
        module = done.stdout.strip()
        self._modules.append(module)
        listing = pactl(address, "list", "sink-inputs").stdout
        for block in listing.split("Sink Input #")[1:]:
            index = block.split()[0]
            if re.search(rf"Owner Module: {re.escape(module)}\b", block):
                pactl(address, "set-sink-input-volume", index, _db_volume(gain_db))
                return
        raise PulseError(f"the loopback (module {module}) has no sink input to set its gain on")

    def move(self, by_ms: int) -> None:
        """The echo paths' latency steps by ``by_ms`` (from the settings' on every call, not
        adding up), as a sound card's does after an underrun: the loopbacks are loaded again."""
        s = self.settings
        for module in reversed(self._modules):
            pactl(self.server.address, "unload-module", module, check=False)
        self._modules.clear()
        self._loopback(s.delay_ms + by_ms, s.gain_db)
        if s.reflection_db > -90:
            self._loopback(s.reflection_ms + by_ms, s.reflection_db)

    async def say(self, path: Path, db: float | None = None) -> None:
        """The person says the WAV at ``path`` into the room (returns when it has been played)."""
        level = self.settings.voice_db if db is None else db
        volume = str(max(0, round(65536 * 10 ** (level / 20))))
        process = await asyncio.create_subprocess_exec(
            "paplay", f"--server={self.server.address}", f"--device={ROOM}", f"--volume={volume}", str(path),
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
        )
        _, err = await process.communicate()
        if process.returncode != 0:
            raise PulseError(f"paplay {path.name}: {err.decode(errors='replace').strip()}")

    def close(self) -> None:
        for key, value in self._saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        self._saved_env.clear()
        for module in reversed(self._modules):
            pactl(self.server.address, "unload-module", module, check=False)
        self._modules.clear()
        self.room.unload()
        self.speaker.unload()
        self.server.close()
        _rescan_portaudio()


def _rescan_portaudio() -> None:
    """Make PortAudio see the server now named in the environment (it reads it when initialized)."""
    import sys

    sd = sys.modules.get("sounddevice")
    if sd is not None:
        sd._terminate()
        sd._initialize()
