"""Cadence as the speaker uses it: units out of the model's stream, and the pause before each."""

from __future__ import annotations

from agent.speaking.cadence.pacing import LivePacer, PaceSettings
from agent.speaking.cadence.split import CadenceRules, UnitStream


class Cadence:
    """One reply's units and pauses, worked out while the model is still writing.

    ``feed`` and ``flush`` give out the units to speak (blank ones are dropped: there is nothing
    to say and nothing to pause for); ``end`` says the reply is complete; ``pause_before(i)`` is
    the silence to leave before unit ``i``.  The command ``hearth cadence`` runs this same object.
    """

    def __init__(self, rules: CadenceRules = CadenceRules(), pace: PaceSettings = PaceSettings()) -> None:
        self.stream = UnitStream(rules)
        self.pacer = LivePacer(pace)

    def feed(self, piece: str) -> list[str]:
        return self._keep(self.stream.feed(piece))

    def flush(self) -> list[str]:
        """End the current unit here (the end of the reply, or before a tool runs)."""
        return self._keep(self.stream.flush())

    def settle(self) -> list[str]:
        """The units held only for want of the next word, if the text so far ends a sentence
        (for a writer that has paused; see :meth:`UnitStream.settle`)."""
        return self._keep(self.stream.settle())

    @property
    def held(self) -> str:
        """The text fed and not yet given out in a unit."""
        return self.stream.held

    def sentences_only(self) -> None:
        """Cut the rest only at sentences (see :meth:`UnitStream.sentences_only`)."""
        self.stream.sentences_only()

    def drop_unfinished(self) -> str:
        """Forget what is held after its last whole sentence (see :meth:`UnitStream.drop_unfinished`)."""
        return self.stream.drop_unfinished()

    def end(self) -> None:
        self.pacer.end()

    def pause_before(self, index: int) -> float:
        return self.pacer.pause_before(index)

    def paused(self, index: int, seconds: float) -> None:
        """Note the pause before unit ``index`` as it was heard (it counts against the budget)."""
        self.pacer.used(index, seconds)

    @property
    def units(self) -> list[str]:
        return self.pacer.units

    def _keep(self, units: list[str]) -> list[str]:
        spoken = [u for u in units if u.strip()]
        for unit in spoken:
            self.pacer.add(unit)
        return spoken
