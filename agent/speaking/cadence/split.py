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

from dataclasses import dataclass

from agent.speaking.cadence.boundaries import Boundary, Scan, Tier, scan


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
    found = scan(text, start, final, rules.language)
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


class UnitStream:
    """Feed the reply's text as it is written; take out each unit once its end is certain.

    ``flush()`` ends the current unit wherever the text is (the end of the reply, or a tool call
    that must be spoken before it runs) and gives out what is left; the unit count goes on, so
    a reply stays within ``max_units`` across a tool call.
    """

    def __init__(self, rules: CadenceRules = CadenceRules()) -> None:
        self.rules = rules
        self.units = 0
        """Units given out so far."""
        self._text = ""

    def feed(self, piece: str) -> list[str]:
        # A piece that only lengthens the word being written cannot complete a boundary that
        # matters now; skipping the scan then only delays a cut, never changes one (a cut found
        # on a text is the cut found on any longer text), and it halves the cost per token.
        grows_word = piece.isalnum() and self._text[-1:].isalnum()
        self._text += piece
        return [] if grows_word else self._cut(final=False)

    def flush(self) -> list[str]:
        out = self._cut(final=True)
        rest, self._text = self._text, ""
        if rest:
            out.append(rest)
            self.units += bool(rest.strip())
        return out

    def _cut(self, final: bool) -> list[str]:
        out: list[str] = []
        while (cut := find_cut(self._text, 0, final, self.rules, self.units)) is not None:
            out.append(self._text[:cut])
            self._text = self._text[cut:]
            self.units += 1
        return out
