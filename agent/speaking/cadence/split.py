"""Cutting a reply into spoken units: the rules, on a whole text and live on a token stream.

A unit ends at the first paragraph or sentence boundary.  When that would make it longer than
``weak_open_chars`` (or there is none), the clause tier opens: the unit ends at the last clause
boundary that keeps it within the limit, or, failing one, at the first boundary of any tier after
it.  After ``max_units - 1`` cuts the rest of the reply is one unit (the tail is merged).

:func:`split_units` applies the rules to a finished text; :class:`UnitStream` applies the same
rules to a text that arrives in pieces, and gives out each unit as soon as its end is certain.
Both call :func:`find_cut`, and a cut :func:`find_cut` reports on a prefix is the cut it reports
on every longer text, so the two agree on every text however it is cut into pieces.
"""

from __future__ import annotations

import bisect
import sys
from dataclasses import dataclass, replace

from agent.speaking.cadence.boundaries import (
    Boundary,
    Region,
    Scan,
    Tier,
    candidates,
    ends_sentence_here,
    scan,
    scan_region,
    settled_end,
    whole_sentences,
)


@dataclass(frozen=True)
class CadenceRules:
    """How a reply is cut into units."""

    enabled: bool = True
    """False: the whole reply is one unit (what the model wrote, unchanged)."""
    weak_open_chars: int = 40
    """A unit longer than this (counting the spaces after it) may end at a clause boundary."""
    min_clause_chars: int = 8
    """A clause boundary closer than this to the unit's start, or to the sentence's end, does not
    count: no "So, " units and no "too." units."""
    max_units: int = 5
    """Units per reply at most; the text after the last allowed cut is one unit."""
    language: str | None = None
    """"en" or "ko": only that language's word rules (clause words, Korean endings); None: both."""


def find_cut(text: str, start: int, final: bool, rules: CadenceRules, units_before: int) -> int | None:
    """Where the unit that begins at ``start`` ends, if that is certain; None otherwise.

    ``final``: ``text`` is the whole reply.  Otherwise it may still grow, and None means "wait".
    ``units_before``: units already cut from this reply.
    """
    if not rules.enabled or units_before >= rules.max_units - 1:
        return None
    region = text[start:]
    content = start + len(region) - len(region.lstrip())
    if content == len(text):
        return None
    return _choose(text, start, content, scan(text, start, final, rules.language), final, rules)


def _choose(text: str, start: int, content: int, found: Scan, final: bool, rules: CadenceRules) -> int | None:
    """:func:`find_cut` once the unit's boundaries are known; ``content``: where its words begin."""
    # A unit's length is that of its text as cut, the spaces after it included: the seed's own
    # example ends its first unit at -니까 because the sentence is 41 characters with its space.
    limit = start + rules.weak_open_chars
    strong = next((b for b in found.boundaries if b.tier >= Tier.SENTENCE), None)
    if strong is not None and strong.cut <= limit:
        return strong.cut
    if strong is None:
        # Too long is certain once the boundaries up to the limit are (or the text is whole).
        too_long = len(text) > limit if final else found.settled > limit
        if not too_long:
            return None
    # The last clause boundary within the limit, unless too little would follow it before the
    # sentence ends ("... / until pale." is fine, "... / too." is not); that needs to be known.
    clauses = [b for b in found.boundaries if b.tier == Tier.CLAUSE and b.cut <= limit and b.mark - content >= rules.min_clause_chars]
    later = [b for b in found.boundaries if b.cut > limit]
    for b in [*reversed(clauses), *later]:
        if b.tier >= Tier.SENTENCE:
            return b.cut
        room = _room_after(b, found, text, final, rules.min_clause_chars)
        if room is None:
            return None
        if room >= rules.min_clause_chars:
            return b.cut
    return None


def _room_after(clause: Boundary, found: Scan, text: str, final: bool, min_room: int) -> int | None:
    """Characters from ``clause`` to the next sentence end (or the text's end); None: not known yet."""
    strong = next((b for b in found.boundaries if b.tier >= Tier.SENTENCE and b.mark > clause.cut), None)
    if strong is not None:
        return strong.mark - clause.cut
    if final:
        return len(text.rstrip()) - clause.cut
    known = found.settled - 1 - clause.cut  # no sentence ends there, and more may follow
    return known if known >= min_room else None


def split_units(text: str, rules: CadenceRules = CadenceRules()) -> list[str]:
    """``text`` cut into units; they join back into ``text`` exactly."""
    cuts: list[int] = []
    start = 0
    while (cut := find_cut(text, start, True, rules, len(cuts))) is not None:
        cuts.append(cut)
        start = cut
    bounds = [0, *cuts, len(text)]
    units = [text[a:b] for a, b in zip(bounds, bounds[1:])]
    return [u for u in units if u] or ([text] if text else [])


RESUME_MARGIN = 64
"""How far behind the certain part of a growing unit a scan may resume.  Every construct that can
still change what is found before a point reads less than this past it (a quote closes within
:data:`~agent.speaking.cadence.spans.QUOTE_MAX_CHARS`, a date or an aside within about 30); the
constructs that can reach further (code, an unclosed quote) hold the certain part back instead."""

FENCE = "```"


def _has_space(text: str, start: int) -> bool:
    return any(c.isspace() for c in text[start:])


def _last_word_start(text: str) -> int:
    """Where the text's last word begins (the spaces after it, if any, follow it)."""
    at = len(text)
    while at > 0 and text[at - 1].isspace():
        at -= 1
    while at > 0 and not text[at - 1].isspace():
        at -= 1
    return at


class UnitStream:
    """Feed the reply's text as it is written; take out each unit once its end is certain.

    ``flush()`` ends the current unit wherever the text is (the end of the reply, or a tool call
    that must be spoken before it runs) and gives out what is left; the unit count goes on, so
    a reply stays within ``max_units`` across a tool call.

    A unit that keeps growing without an end (code, a long run without punctuation) is not
    rescanned from its start on every piece: the scan resumes at a point far enough behind the
    certain part that nothing after it can change what was found before it, and while a code
    fence is open and nothing but its closing can end the unit, no scan runs at all.  The units
    and the piece they come out on are exactly :func:`find_cut`'s on the whole unit; the cost is
    linear in the reply's length (tests/test_fuzz_cadence.py counts it in :attr:`scanned`).
    """

    def __init__(self, rules: CadenceRules = CadenceRules()) -> None:
        self.rules = rules
        self.units = 0
        """Units given out so far."""
        self.scanned = 0
        """Characters handed to the boundary scan so far: the stream's cost, linear in the reply."""
        self._text = ""
        self._reset()

    def _reset(self) -> None:
        """Forget what was learnt about the unit being written (it was cut, or the reply ended)."""
        self._content: int | None = None  # where the unit's words begin, once there are any
        self._begin = 0  # where the next scan resumes
        self._before: tuple[Boundary, ...] = ()  # the unit's boundaries with mark < _begin
        self._candidates_before = False  # whether the text before _begin held a candidate boundary
        self._searched = 0  # resume points up to here were considered already
        self._open_code: tuple[int, str] | None = None  # open code that alone keeps the unit from ending, and what closes it
        self._quiet_from: int | None = None  # no candidate boundary in the unit, and none can start before this

    def feed(self, piece: str) -> list[str]:
        # A piece that only lengthens the word being written cannot complete a boundary that
        # matters now; skipping the scan then only delays a cut, never changes one (a cut found
        # on a text is the cut found on any longer text), and it halves the cost per token.
        grows_word = piece.isalnum() and self._text[-1:].isalnum()
        self._text += piece
        if grows_word:
            return []
        if self._open_code is not None and self._still_open(self._open_code, len(piece)):
            return []  # nothing can be cut while the code is open (see _watch_open_code)
        self._open_code = None
        return self._cut()

    def _still_open(self, code: tuple[int, str], added: int) -> bool:
        opened, closer = code
        if closer == FENCE:
            return self._text.find(FENCE, max(opened + 3, len(self._text) - added - 2)) < 0
        tail = self._text[len(self._text) - added:]
        return "\n" not in tail and (closer == "\n" or "`" not in tail)

    def flush(self) -> list[str]:
        out: list[str] = []
        while (cut := find_cut(self._text, 0, True, self.rules, self.units)) is not None:
            self.scanned += len(self._text)
            out.append(self._take(cut))
        self.scanned += len(self._text)
        rest, self._text = self._text, ""
        self._reset()
        if rest:
            out.append(rest)
            self.units += bool(rest.strip())
        return out

    @property
    def held(self) -> str:
        """The text fed and not yet given out in a unit."""
        return self._text

    def sentences_only(self) -> None:
        """From now on a unit ends only at a sentence or paragraph: the clause tier never opens
        (the writer is near its cap, and may be cut off in the sentence it is writing)."""
        self.rules = replace(self.rules, weak_open_chars=sys.maxsize)

    def drop_unfinished(self) -> str:
        """Forget the held text after its last whole sentence (its writer was cut off mid-sentence),
        and return what was forgotten; the units given out already stay."""
        keep = len(whole_sentences(self._text, self.rules.language))
        dropped, self._text = self._text[keep:], self._text[:keep]
        if dropped:
            self._reset()
        return dropped

    def settle(self) -> list[str]:
        """What :meth:`flush` gives out, but only if the text held ends a sentence; else nothing.

        For a writer that has paused: the units held back only because the word after a sentence
        end was not seen yet.  They are the units :func:`split_units` makes of the whole reply
        whenever what comes next begins a new sentence.  Nothing is given out in the reply's
        tail (after ``max_units - 1`` cuts), which stays one unit, nor with the rules disabled.
        """
        rules = self.rules
        if not rules.enabled or self.units >= rules.max_units - 1 or not ends_sentence_here(self._text, rules.language):
            return []
        return self.flush()

    def _take(self, cut: int) -> str:
        unit, self._text = self._text[:cut], self._text[cut:]
        self.units += 1
        self._reset()
        return unit

    def _cut(self) -> list[str]:
        out: list[str] = []
        while (cut := self._find()) is not None:
            out.append(self._take(cut))
        return out

    def _find(self) -> int | None:
        """:func:`find_cut` on the unit being written (not final), resuming the last scan."""
        rules, text = self.rules, self._text
        if not rules.enabled or self.units >= rules.max_units - 1:
            return None
        if self._content is None:
            stripped = len(text) - len(text.lstrip())
            if stripped == len(text):
                return None
            self._content = stripped
        if self._quiet_from is not None:
            # Without a single candidate boundary nothing can be cut; a new one can only start in
            # the last word or the spaces after it (see boundaries.candidates).
            if not candidates(text, self._quiet_from, self._content, rules.language):
                self.scanned += len(text) - self._quiet_from
                self._quiet_from = _last_word_start(text)
                return None
            self._quiet_from = None
        region = scan_region(text, False, rules.language, self._begin, self._content, self._candidates_before, with_spans=True)
        self.scanned += len(text) - self._begin
        settled = min(settled_end(text), region.found.settled)
        found = Scan(self._before + tuple(b for b in region.found.boundaries if self._begin <= b.mark < settled), settled)
        cut = _choose(text, 0, self._content, found, False, rules)
        if cut is None and not region.candidates and not self._candidates_before:
            self._quiet_from = _last_word_start(text)
        elif cut is None:
            self._watch_open_code(region, found)
            self._resume_later(region, found)
        return cut

    def _watch_open_code(self, region: Region, found: Scan) -> None:
        """Stop scanning while open code is all that keeps the unit from ending.

        When the certain part ends just inside a code fence that runs to the end of the text, or
        just after an inline-code backtick that nothing has closed and no line break follows
        (and that code already holds a space, so the last word cannot hold the unit back
        instead), no boundary can become certain after the code's first backtick, and those
        before it are settled: :func:`find_cut` gives the same "not yet" on every longer text
        until the code is closed (three backticks for a fence; a backtick or a line break
        for inline code, only a line break after "``", which inline code cannot start with).
        """
        text = self._text
        opened = found.settled - 1
        if opened < self._begin or text[opened:opened + 1] != "`" or not _has_space(text, opened + 1):
            return
        last = region.spans[-1] if region.spans else None
        if last is not None and last.start == opened and last.end == len(text) and text.startswith(FENCE, opened):
            if text.find(FENCE, opened + 3) < 0:  # not closed right at the end of the text
                self._open_code = (opened, FENCE)
            return
        inside = any(span.start <= opened < span.end for span in region.spans)
        if inside or text.find("\n", opened + 1) >= 0 or len(text) < opened + 3 or text.startswith(FENCE, opened):
            return
        if text[opened + 1] == "`":
            self._open_code = (opened, "\n")  # "``x": inline code needs a character before its closing backtick
        elif text.find("`", opened + 1) < 0:
            self._open_code = (opened, "`")

    def _resume_later(self, region: Region, found: Scan) -> None:
        """Move the point the next scan starts from as far on as is safe.

        A point ``w`` is safe when it is at least :data:`RESUME_MARGIN` behind the certain part,
        starts a word after a space (every boundary pattern ends with the spaces before a word,
        so no match runs across it), lies inside no protected span, and no candidate boundary
        before it reaches it (a sentence end's trailer such as "ㅋㅋ" or "(웃음)" moves its cut on).
        Then no text still to come can change what a scan finds before ``w``, and a scan from
        ``w`` finds what a scan from the start would find after it.
        """
        text = self._text
        target = min(found.settled, len(text)) - RESUME_MARGIN
        low = max(self._begin, self._searched)
        if target <= low:
            return
        self._searched = target
        marks = [mark for mark, _ in region.reach]
        furthest: list[int] = []
        for _, reach in region.reach:
            furthest.append(max(reach, furthest[-1]) if furthest else reach)
        starts = [span.start for span in region.spans]
        w = target
        while w > low:
            if text[w - 1].isspace() and not text[w].isspace():
                n = bisect.bisect_left(marks, w)  # candidates with mark < w
                s = bisect.bisect_left(starts, w) - 1  # the last span starting before w
                if (n == 0 or furthest[n - 1] < w) and (s < 0 or region.spans[s].end <= w):
                    break
            w -= 1
        else:
            return
        self._before += tuple(b for b in found.boundaries if self._begin <= b.mark < w)
        self._candidates_before = self._candidates_before or region.candidates and bool(marks) and marks[0] < w
        self._begin = w
