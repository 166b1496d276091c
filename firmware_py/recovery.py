"""A lost sound device is opened again, with backoff, while the status light shows the fault.

A USB speaker knocked out of its socket, a sound server restarted by the system: the
device comes back a moment or a minute later, and hearth must be serving again by then
without anyone restarting it.  :class:`DeviceReopener` tries at once, then waits longer
and longer between tries (0.5 s doubling to 30 s, each wait shifted a little at random so
that two devices lost together are not retried in lockstep), and a press cuts the wait
short: someone wants hearth now.  :class:`FaultLight` shows the fault meanwhile.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from agent.events import State
from audio.protocols import AudioDeviceError
from firmware_py.gpio import StatusLight

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class BackoffSettings:
    """How often a lost device is tried again."""

    first_s: float = 0.5
    """The wait after the first failed try (the first try is made at once)."""
    factor: float = 2.0
    """Each wait is this many times the one before."""
    max_s: float = 30.0
    """The longest wait between two tries."""
    jitter: float = 0.1
    """Each wait is up to this fraction longer or shorter, at random."""


def backoff_delays(settings: BackoffSettings, uniform: Callable[[], float] = random.random) -> Iterator[float]:
    """The waits between tries, without end; ``uniform`` gives numbers in [0, 1)."""
    delay = settings.first_s
    while True:
        yield delay * (1.0 + settings.jitter * (2.0 * uniform() - 1.0))
        delay = min(settings.max_s, delay * settings.factor)


@runtime_checkable
class Reopenable(Protocol):
    """A device that ``close()`` and then ``start()`` open anew."""

    async def start(self) -> None: ...

    async def close(self) -> None: ...


@runtime_checkable
class WatchedSpeaker(Reopenable, Protocol):
    """A speaker that tells when it is lost, even while it has nothing to play."""

    async def lost(self) -> AudioDeviceError: ...


async def wait_or_wake(delay: float, wake: asyncio.Event) -> None:
    """Wait ``delay`` seconds, or less if ``wake`` is set meanwhile."""
    try:
        await asyncio.wait_for(wake.wait(), delay)
    except TimeoutError:
        pass


class DeviceReopener:
    """Opens one lost device again: at once, then with exponential backoff until it works.

    It logs one line when the device is lost, one each time the reason it cannot be opened
    changes (not one per try), and one when it is back.
    """

    def __init__(
        self,
        name: str,
        device: Reopenable,
        settings: BackoffSettings | None = None,
        uniform: Callable[[], float] = random.random,
        wait: Callable[[float, asyncio.Event], Awaitable[None]] = wait_or_wake,
    ) -> None:
        self.name = name
        self.device = device
        self.settings = settings or BackoffSettings()
        self.uniform = uniform
        self.wait = wait
        self.attempts = 0
        """Tries made by the latest :meth:`reopen`."""
        self._wake = asyncio.Event()

    def try_now(self) -> None:
        """Cut the current wait short (a press: the user wants hearth now)."""
        self._wake.set()

    async def reopen(self, error: AudioDeviceError) -> int:
        """Close the lost device and open it again; return the tries it took."""
        log.warning("%s; reopening it", error)
        lost_at = time.monotonic()
        await self.device.close()
        delays = backoff_delays(self.settings, self.uniform)
        last_reason: str | None = None
        self.attempts = 0
        self._wake.clear()
        while True:
            self.attempts += 1
            try:
                await self.device.start()
            except AudioDeviceError as exc:
                delay = next(delays)
                reason = str(exc)
                if reason != last_reason:
                    last_reason = reason
                    log.warning("%s still unavailable (try %d): %s; trying again, at most %.0f s apart",
                                self.name, self.attempts, reason, self.settings.max_s)
                else:
                    log.debug("%s still unavailable (try %d), next in %.1f s", self.name, self.attempts, delay)
                await self.wait(delay, self._wake)
                self._wake.clear()
                continue
            log.warning("%s is back after %d tries (%.1f s)", self.name, self.attempts, time.monotonic() - lost_at)
            return self.attempts


class FaultLight:
    """The status light, showing :attr:`State.FAULT` instead of idle while any device is lost.

    A turn still shows what it does (a reply can be heard while the microphone is lost); when
    it is over, the light goes back to the fault rather than to idle.
    """

    def __init__(self, light: StatusLight) -> None:
        self.light = light
        self.faults: set[str] = set()
        """The devices lost now."""
        self._state = State.IDLE

    def show(self, state: State) -> None:
        self._state = state
        self.light.show(State.FAULT if self.faults and state == State.IDLE else state)

    def fault(self, device: str) -> None:
        self.faults.add(device)
        self.show(self._state)

    def clear(self, device: str) -> None:
        self.faults.discard(device)
        self.show(self._state)

    def close(self) -> None:
        self.light.close()
