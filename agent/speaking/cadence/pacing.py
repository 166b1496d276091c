"""The pause before each spoken unit.

The delay starts as a person's: the time to type the unit at ``chars_per_s`` (9 characters a
second), times three weights (closeness to the user, how busy hearth is, mood; 1.0 is neutral,
below 1 is quicker).  The delays of one reply share a budget: when they add up to more than
``budget_s``, each is scaled down in proportion.  The first unit has none.

Typing a sentence takes seconds; saying one does not leave a gap that long.  So the typed delay
is mapped to a silence between spoken units: ``speech_ratio`` of it (a tenth), kept between
``min_pause_s`` and ``max_pause_s``.  A 20-character unit gets about 0.22 s, a 40-character
one 0.44 s, and nothing waits longer than 0.6 s: short, like a breath, never a stall.  A long
reply's delays hit the budget, so its pauses shrink toward ``min_pause_s`` and it keeps moving.
The silences are kept within the budget too.

The pause is the gap the listener hears: when the next unit was not ready in time (the model
or a tool still busy), the wait already heard counts toward it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class PaceSettings:
    """How long the pauses between units are."""

    chars_per_s: float = 9.0
    """Base typing speed the delay is derived from."""
    closeness: float = 1.0
    """Weight for how close hearth is to the household: below 1 for family, above for a guest."""
    busy: float = 1.0
    """Weight for how busy hearth is: above 1 slows the pacing."""
    mood: float = 1.0
    """Weight for mood: below 1 lively, above 1 calm or tired."""
    budget_s: float = 6.0
    """Most the typed delays of one reply may add up to; more is scaled down in proportion."""
    speech_ratio: float = 0.1
    """Fraction of the typed delay that becomes silence in speech."""
    min_pause_s: float = 0.12
    """Shortest silence between two units, so that the boundary is heard."""
    max_pause_s: float = 0.6
    """Longest silence between two units."""

    @property
    def weight(self) -> float:
        return self.closeness * self.busy * self.mood


def _spoken_chars(unit: str) -> int:
    return len(unit.strip())


def typed_delays(units: Sequence[str], pace: PaceSettings = PaceSettings()) -> list[float]:
    """Each unit's delay as a person typing (0 for the first), within the budget."""
    delays = [0.0] + [_spoken_chars(u) / pace.chars_per_s * pace.weight for u in units[1:]]
    return _within(delays[: len(units)], pace.budget_s)


def speech_pauses(units: Sequence[str], pace: PaceSettings = PaceSettings()) -> list[float]:
    """The silence before each unit when spoken (0 for the first)."""
    delays = typed_delays(units, pace)
    pauses = [0.0] + [min(pace.max_pause_s, max(pace.min_pause_s, d * pace.speech_ratio)) for d in delays[1:]]
    pauses = pauses[: len(units)]
    return _within(pauses, pace.budget_s)


def _within(delays: list[float], budget: float) -> list[float]:
    total = sum(delays)
    if total <= budget or total == 0:
        return delays
    scale = budget / total
    return [d * scale for d in delays]


class LivePacer:
    """Pauses for a reply whose units are still arriving.

    :meth:`pause_before` is the best answer now: :func:`speech_pauses` of the units known so far,
    capped by what is left of the budget after the pauses already used.  It can only shrink as
    more units arrive (the budget tightens), and once the reply is complete it is exactly
    :func:`speech_pauses` of its units.  The speaker asks again for every slice of silence it
    writes, so a pause is decided as late as it can be.
    """

    def __init__(self, pace: PaceSettings = PaceSettings()) -> None:
        self.pace = pace
        self.units: list[str] = []
        self.complete = False
        self._used: dict[int, float] = {}
        self._pauses: list[float] | None = None

    def add(self, unit: str) -> None:
        self.units.append(unit)
        self._pauses = None

    def end(self) -> None:
        self.complete = True

    def pause_before(self, index: int) -> float:
        """The silence to leave before unit ``index`` (which must have been added)."""
        if index == 0:
            return 0.0
        if self._pauses is None:
            self._pauses = speech_pauses(self.units, self.pace)
        spent = sum(s for i, s in self._used.items() if i < index)
        return max(0.0, min(self._pauses[index], self.pace.budget_s - spent))

    def used(self, index: int, seconds: float) -> None:
        """The pause before unit ``index`` as it was heard."""
        self._used[index] = seconds
