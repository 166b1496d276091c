"""The reply path: the answer's text through the stream filters, then Cadence, into the turn's units.

Whoever writes the answer (the plain model stream, or the Responder with its tools) feeds text
into a :class:`ReplyPath`; the turn's speaker takes the units off its queue as they are cut.
``flush()`` is the boundary before a tool and at the end of the reply: every filter in order,
each one's held text fed through the next, then Cadence, so every unit queued so far is
complete and the line before a tool is heard before the tool runs.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TypeVar

from agent.events import Event, ReplyTextAppended
from agent.speaking.cadence import Cadence
from agent.speaking.filters import FilterChain
from agent.speaking.phrases import Phrase, phrase
from agent.speaking.speech_out import UnitSpeaker

log = logging.getLogger(__name__)

T = TypeVar("T")


SOURCES = ("template", "tool", "reasoner", "repeat", "talker")
"""Who wrote a reply's text: a fixed line of hearth's (a phrase, a question asked back, the line
before a tool), a tool's result as hearth says it, the reasoner's answer, the last reply said
again, or the talker's own free text (which a turn on tools never speaks)."""

CLAUSE_RESERVE = 32
"""Within this many tokens of a model's cap (counted as its stream's pieces, one or more tokens
each), units end only at sentences: the sentence being written may be cut off at the cap, and no
clause of it may have been said by then."""


def _drop_tail(items: list[T], chars: int, text_of: Callable[[T], str], with_text: Callable[[T, str], T]) -> None:
    """Drop the last ``chars`` characters of the texts in ``items``, emptied items and all."""
    while chars > 0 and items:
        last = items.pop()
        text = text_of(last)
        if len(text) > chars:
            items.append(with_text(last, text[: len(text) - chars]))
        chars -= len(text)


class ReplyPath:
    """One reply's text on its way to the speaker: filters, Cadence, then ``units``.

    ``kind`` labels the units cut while it is set ("pretool" for the line before a tool).
    ``source`` says who wrote the text fed while it is set (:data:`SOURCES`); every piece passed on
    is kept in :attr:`sources` with it, so a turn can tell which of its words came from where.
    ``written()`` waits until the units queued so far are with the speaker.  ``end()`` says no
    more text comes; a reply with nothing to say gets the fallback line, and ``gave_nothing``
    tells the turn so.
    """

    def __init__(
        self,
        out: UnitSpeaker,
        filters: FilterChain,
        cadence: Cadence,
        units: asyncio.Queue[int | None],
        language: str,
        emit: Callable[[Event], None] = lambda _e: None,
    ) -> None:
        self.out = out
        self.filters = filters
        self.cadence = cadence
        out.cadence = cadence  # the speaker paces by the units this reply cuts
        self.units = units
        self.language = language
        self.emit = emit
        self.parts: list[str] = []
        self.kind = "answer"
        self.source = "template"
        self.sources: list[tuple[str, str]] = []
        """(source, text) for every piece fed, in order (a run of one source's pieces as one)."""
        self.queued: list[int] = []
        self.gave_nothing = False
        """The reply ended with no usable text: the fallback line was said instead."""
        self._after_boundary = False

    def feed(self, piece: str) -> None:
        self._keep_source(self.source, piece)  # as fed: the filters may hold a piece past the next one, written by another
        self._pass_on(self.filters.feed(piece))

    def _keep_source(self, source: str, text: str) -> None:
        if not text:
            return
        if self.sources and self.sources[-1][0] == source:
            self.sources[-1] = (source, self.sources[-1][1] + text)
        else:
            self.sources.append((source, text))

    def flush(self) -> None:
        self._pass_on(self.filters.flush())
        for unit in self.cadence.flush():
            self._queue(unit)
        self._after_boundary = True

    def feed_counted(self, piece: str, count: int, cap: int | None) -> None:
        """:meth:`feed` the ``count``-th piece of a stream capped at ``cap`` tokens (None: no cap
        known); near the cap (:data:`CLAUSE_RESERVE`) the rest is cut only at sentences, so that if
        the cap falls mid-sentence (:meth:`cut_short`) nothing of that sentence was said."""
        if cap is not None and count == max(1, cap - CLAUSE_RESERVE):
            self.cadence.sentences_only()
        self.feed(piece)

    def cut_short(self) -> None:
        """The writer was stopped mid-way (its token cap, its wall time): :meth:`flush`, but the
        sentence it was writing is dropped, neither spoken nor kept in :attr:`text`. Units given
        out before stay: they were certain, and may have been heard."""
        self._pass_on(self.filters.flush())
        dropped = self.cadence.drop_unfinished()
        if dropped:
            log.info("the reply was cut off mid-sentence; not saying %r", dropped[:200])
            self._take_back(len(dropped))
        self.flush()

    def _take_back(self, chars: int) -> None:
        """Drop the last ``chars`` characters passed on (still held by Cadence, never a unit)."""
        _drop_tail(self.parts, chars, lambda part: part, lambda _part, kept: kept)
        _drop_tail(self.sources, chars, lambda piece: piece[1], lambda piece, kept: (piece[0], kept))

    def _pass_on(self, text: str) -> None:
        if text:
            if self._after_boundary and self.parts and not self.parts[-1][-1:].isspace() and not text[:1].isspace():
                text = " " + text  # the line before a tool was flushed: what follows is a new sentence
            self._after_boundary = False
            self.parts.append(text)
            self.emit(ReplyTextAppended(text))
            for unit in self.cadence.feed(text):
                self._queue(unit)

    def _queue(self, unit: str) -> None:
        index = self.out.add(unit, self.kind, place=len(self.cadence.units) - 1)
        self.queued.append(index)
        self.units.put_nowait(index)

    async def written(self) -> None:
        for index in self.queued:
            await self.out.written(index).wait()

    def end(self) -> None:
        """No more text: a reply with nothing to say gets the fallback line; the speaker may stop."""
        self.cadence.end()
        if not any(ch.isalpha() for ch in self.text):
            log.warning("the model gave no usable reply: %r", self.text[:200])
            self.gave_nothing = True
            self._keep_source("template", phrase(self.language, Phrase.NO_ANSWER))
            index = self.out.add(phrase(self.language, Phrase.NO_ANSWER), "phrase")
            self.queued.append(index)
            self.units.put_nowait(index)
        self.units.put_nowait(None)

    def close(self) -> None:
        """The reply is over, however it ended: what Cadence still held is kept as a unit (unheard)."""
        for unit in self.cadence.flush():
            self.out.add(unit, self.kind)

    @property
    def text(self) -> str:
        return "".join(self.parts)
