"""Which ear hears the user speak up while hearth talks: over its voice, or in its pauses.

With a working echo canceller the microphone, cleaned of hearth's own voice, is listened to all
the time hearth speaks (:class:`~agent.listening.barge_in.ReplyListener`): a stop word is heard
over the reply.  Without one (switched off, its library missing, or too little attenuation
measured) the microphone hears hearth as loudly as the user, and only Cadence's pauses are
listened to (:class:`~agent.listening.barge_in.PauseListener`).  Whether the canceller works is
measured on hearth's own replies, so the choice is made during the first one (pauses until then)
and made again if the measure changes (the speaker moved, the volume went up); each choice is one
line in the log.
"""

from __future__ import annotations

import logging
import math
from typing import Protocol

from agent.events import State
from audio.protocols import AudioChunk

log = logging.getLogger(__name__)

SPEAKING = (State.SPEAKING, State.PAUSING)


class Ear(Protocol):
    """What both listeners offer: fed the microphone all the time, listening only while open."""

    @property
    def is_open(self) -> bool: ...

    def open(self, at: float | None = None) -> None: ...

    def close(self) -> None: ...

    def accept(self, chunk: AudioChunk) -> None: ...


class Canceller(Protocol):
    """What is asked of :class:`audio.echo.EchoFilter` here."""

    @property
    def far_rms(self) -> float:
        """RMS of what hearth played under the audio just cleaned (the listener's residual-echo guard)."""
        ...

    @property
    def echo_gain(self) -> float:
        """The echo path's gain, as measured."""
        ...

    @property
    def erle_db(self) -> float | None: ...

    @property
    def erle_worst_db(self) -> float | None:
        """The ERLE of the canceller's worse frames (the listener's residual-echo guard)."""
        ...

    def clean(self, chunk: AudioChunk, captured_at: float) -> AudioChunk: ...

    def working(self) -> bool: ...

    def near_end_began(self, lookback_s: float) -> None:
        """The listener heard the user over hearth for about ``lookback_s`` (not echo to measure)."""
        ...

    def near_end_ended(self) -> None: ...


class SpeakingUp:
    """Feeds the microphone to the listener in use and opens it while hearth speaks.

    ``echo`` None means no canceller: ``off_reason`` says why, once, when :meth:`start` is called.
    """

    def __init__(
        self,
        pauses: Ear,
        over_voice: Ear | None = None,
        echo: Canceller | None = None,
        off_reason: str = "echo cancellation is off in the configuration",
        min_erle_db: float = 20.0,
        hysteresis_db: float = 3.0,
    ) -> None:
        self.pauses = pauses
        self.over_voice = over_voice if echo is not None else None
        self.echo = echo if over_voice is not None else None
        self.off_reason = off_reason
        self.min_erle_db = min_erle_db
        self.hysteresis_db = hysteresis_db
        """Listening over the voice goes back to the pauses only below ``min_erle_db`` less this."""
        self.ear: Ear = pauses
        self._state = State.IDLE
        self._hold_open = False
        self._verdict: bool | None = None  # None: not measured yet
        self._broken = False

    @property
    def hears_over_voice(self) -> bool:
        """True while the user is listened to over hearth's voice (echo cancellation works)."""
        return self.ear is self.over_voice

    def start(self) -> None:
        if self.echo is None:
            log.info("listening in hearth's pauses only: %s", self.off_reason)
        else:
            log.info("echo cancellation on: listening in hearth's pauses until it is measured on the first reply")

    def clean(self, chunk: AudioChunk, captured_at: float) -> AudioChunk:
        """The chunk without hearth's voice in it (as it came, once the canceller has failed)."""
        echo = self.echo
        if echo is None or self._broken:
            return chunk
        try:
            return echo.clean(chunk, captured_at)
        except Exception:  # noqa: BLE001 - a canceller's bug must not deafen the microphone
            log.exception("echo cancellation failed; listening in hearth's pauses only from now on")
            self._broken = True
            self._use(self.pauses)
            return chunk

    def accept(self, chunk: AudioChunk) -> None:
        if self.echo is not None and not self._broken:
            self._judge()
        self.ear.accept(chunk)

    def close(self) -> None:
        """Stop listening now, an utterance being recognized included (a press takes over)."""
        if self.ear.is_open:
            self.ear.close()

    def follow(self, state: State, hold_open: bool = False) -> None:
        """hearth's state changed; ``hold_open`` keeps the voice listener open while nothing is
        said (a timer rings between its announcements, waiting for a "stop")."""
        self._state = state
        self._hold_open = hold_open
        self._apply()

    def _apply(self) -> None:
        ear, state = self.ear, self._state
        if ear is self.over_voice:
            if state in SPEAKING or (self._hold_open and state == State.IDLE):
                if not ear.is_open:
                    ear.open()
            elif ear.is_open and not getattr(ear, "deciding", False):
                # Deciding: the reply was cut at the onset (hearth went quiet because of it) and
                # what was said is still being recognized; its verdict closes it (see DeviceLoop).
                ear.close()
        elif state == State.PAUSING:
            ear.open()  # every pause anew: the guard for the last unit's echo starts now
        else:
            ear.close()

    def _judge(self) -> None:
        assert self.echo is not None
        erle = self.echo.erle_db
        if erle is None or math.isnan(erle):
            if self._verdict and not getattr(self.ear, "deciding", False):
                # The figures were set aside: the echo path moved and the canceller is not on it
                # yet.  The guard would expect the echo of the reference as tracked, not where it
                # now comes, and after 20 ms steps on the bench's room the residual took onsets
                # (see README, "When the echo path moves"); the pauses are safe until it is measured.
                self._verdict = False
                log.warning("listening in hearth's pauses only: the echo path moved, until the echo cancellation is measured on it")
                self._use(self.pauses)
            return  # nothing played yet to measure it on
        # Once trusted, a dip of a few dB (a loud pan, a door) does not flip the listener back.
        needed = self.min_erle_db - self.hysteresis_db if self._verdict else self.min_erle_db
        working = erle >= needed and (bool(self._verdict) or self.echo.working())
        if working == self._verdict:
            return
        self._verdict = working
        if working:
            log.info("listening over hearth's voice: echo cancellation measured %.1f dB (at least %.1f dB needed)", erle, self.min_erle_db)
            self._use(self.over_voice)
        else:
            log.warning(
                "listening in hearth's pauses only: echo cancellation measured %.1f dB, less than the %.1f dB needed",
                erle, needed,
            )
            self._use(self.pauses)

    def _use(self, ear: Ear | None) -> None:
        if ear is None or ear is self.ear:
            return
        if self.ear.is_open:
            self.ear.close()
        self.ear = ear
        self._apply()
