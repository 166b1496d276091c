"""Foresight: the first words of a reply, made into audio before the turn may say them.

Between the decision and the first sound a turn often waits: for the end of the user's turn to
be sure (a tapped turn's silence), or for the final transcript the Thinker's decision is checked
against.  What it will say first is known by then in two cases: an act's confirmation follows from
its arguments (``ToolSpec.foretell``: "Pasta timer set for 11 minutes."), and a look-up fetched
early has its answer back.  :class:`Foresight` cuts that text as the reply path will (the same
filters and Cadence) and asks the voice to make its first unit ahead
(:class:`audio.ready_voice.ReadyVoice`).  A wrong guess only costs the synthesis: the turn says
what the tool returned, and a line not made ahead is synthesized as before.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from agent.deciding.tool_use import pretool_lines
from agent.speaking.cadence import Cadence
from agent.speaking.filters import FilterChain
from agent.speaking.phrases import Phrase, phrase
from agent.timeline import Timeline
from tools.executor import ToolResult
from tools.registry import ToolRegistry

log = logging.getLogger(__name__)


def units_of(text: str, filters: FilterChain, cadence: Cadence) -> list[str]:
    """The units a reply of ``text`` alone is cut into, stripped as they are synthesized."""
    units = cadence.feed(filters.feed(text))
    units += cadence.feed(filters.flush())
    units += cadence.flush()
    return [u.strip() for u in units if u.strip()]


def first_unit(text: str, filters: FilterChain, cadence: Cadence) -> str | None:
    """The first unit a reply of ``text`` alone is cut into."""
    return next(iter(units_of(text, filters, cadence)), None)


def lines_said_often(language: str) -> list[str]:
    """Fixed lines said right after a wait, worth keeping made for good: the lines before a slow
    tool (the first audio of a look-up not fetched early) and the asking again after words not
    heard or not understood."""
    return [*pretool_lines(language), phrase(language, Phrase.NOT_HEARD), phrase(language, Phrase.SAY_ANOTHER_WAY)]


class Foresight:
    """Makes ahead the audio of the first unit a turn's call will most likely have said."""

    def __init__(
        self,
        prepare: Callable[[str], None],
        registry: ToolRegistry,
        cut: Callable[[str], str | None],
        spoken: Callable[[ToolResult], str],
        timeline: Timeline,
    ) -> None:
        self.prepare = prepare
        """Starts making a line's audio (:meth:`audio.ready_voice.ReadyVoice.prepare`)."""
        self.registry = registry
        self.cut = cut
        """A reply's text to its first unit (:func:`first_unit` with the turn's filters and Cadence)."""
        self.spoken = spoken
        """A result as the turn says it (:func:`agent.deciding.tool_use.spoken_result`)."""
        self.timeline = timeline
        self.foreseen: list[str] = []
        """The lines asked for, in order."""

    def act(self, tool: str, args: dict[str, Any]) -> None:
        """An act about to be made: its success's words, when the tool can tell them."""
        spec = self.registry.get(tool)
        if spec is None or spec.foretell is None:
            return
        try:
            text = spec.foretell(spec.args.model_validate(args))
        except Exception as exc:  # noqa: BLE001 - arguments the call will refuse: nothing to say ahead
            log.debug("nothing foretold for %s: %s", tool, exc)
            return
        self._ahead(text, tool)

    def result(self, result: ToolResult) -> None:
        """A call's result already back (fetched early): its words."""
        self._ahead(self.spoken(result), result.name)

    def _ahead(self, text: str, tool: str) -> None:
        unit = self.cut(text)
        if not unit or unit in self.foreseen:
            return
        self.foreseen.append(unit)
        self.timeline.mark("voice_ahead", tool=tool, text=unit)
        self.prepare(unit)
