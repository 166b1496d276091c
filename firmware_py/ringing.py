"""A finished timer rings until someone hears it.

A kitchen timer that chimes once while the tap runs is a timer nobody heard.  So a
finished timer is announced (a chime and its name) again and again, with a pause
between, until the user answers: a press stops it at once (the press also starts
listening, so "stop" or "그만" is simply heard as the next request), and a press at
any time after a ring counts as heard too.  It gives up after ``times`` rings.

With echo cancellation working hearth hears over its own voice, so a spoken stop word stops the
timer as well, without starting a turn: said during a ring it cuts the announcement short (as a
press does), said in the silence after one it counts as heard (the device loop listens for it
while :attr:`Ringers.active`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

from audio.protocols import AudioChunk, AudioDeviceError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RingSettings:
    """How a finished timer rings."""

    times: int = 5
    """At most this many announcements of one timer; 1 rings once."""
    interval_s: float = 15.0
    """Silence between two announcements, in which a press counts as heard."""


class Announcer(Protocol):
    turns_started: int
    """Counts presses that started a turn: one after a ring means the ring was heard."""
    stops_heard: int
    """Counts stop words heard ("stop", "그만"): one after a ring means the ring was heard."""

    async def announce(self, text: str, sound: AudioChunk | None = None) -> bool: ...


async def ring_until_heard(
    announcer: Announcer,
    text: str,
    sound: AudioChunk | None,
    settings: RingSettings,
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
) -> int:
    """Announce ``text`` until a press or a stop word answers it or ``settings.times`` is reached; the rings made.

    A ring the speaker could not play (the device is lost) does not count: it is tried again
    after the interval, until the speaker is back.
    """
    rings = 0
    told_unplayed = False
    while True:
        before = announcer.turns_started + announcer.stops_heard
        try:
            if not await announcer.announce(text, sound):
                return rings + 1  # a press cut it short: heard
            rang = True
            rings += 1
        except AudioDeviceError as exc:
            rang = False
            if not told_unplayed:
                told_unplayed = True
                log.warning("could not ring %r (%s); trying again every %.0f s", text, exc, settings.interval_s)
        if rings >= max(1, settings.times):
            break
        await sleep(settings.interval_s)
        if rang and announcer.turns_started + announcer.stops_heard != before:
            return rings  # the user pressed, or said "stop", after it: heard
    log.info("rang %d times, nobody answered: %r", settings.times, text)
    return settings.times


class Ringers:
    """The rings in progress, one task per finished timer, so one timer never waits for another."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[int]] = set()

    @property
    def active(self) -> bool:
        """True while some timer rings (or waits between two of its rings) for someone to answer."""
        return any(not task.done() for task in self._tasks)

    def start(self, ringing: Awaitable[int]) -> None:
        task = asyncio.ensure_future(ringing)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def stop(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError):
                await task
