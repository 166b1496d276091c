"""Cut a streamed reply into spoken units as soon as each one is certain.

A unit ends at a sentence end (``. ! ? …`` and CJK stops followed by a space,
a newline, or the end of the reply).  A decimal point or an abbreviation does
not end a sentence.  The first unit may also end at a comma once it is long
enough: the listener is waiting for it, and synthesis time grows with its
length.  A very long sentence is cut at its last comma so the speaker does not
wait for it.
"""

from __future__ import annotations

import re

_ENDERS = ".!?…。！？"
_ABBREVIATIONS = frozenset(
    "mr mrs ms dr st vs etc e.g i.e approx min max tbsp tsp oz lb no jr sr prof u.s".split()
)
_LAST_WORD = re.compile(r"([A-Za-z.]+)\.$")


def _is_abbreviation(text: str) -> bool:
    match = _LAST_WORD.search(text)
    return bool(match) and match.group(1).lower().rstrip(".") in _ABBREVIATIONS


class SentenceSplitter:
    """Feed text pieces in, take finished units out; ``flush()`` at the end of the reply."""

    def __init__(self, max_chars: int = 160, min_chars: int = 2, first_unit_comma_chars: int | None = 24) -> None:
        self.max_chars = max_chars
        self.min_chars = min_chars
        self.first_unit_comma_chars = first_unit_comma_chars
        self._buffer = ""
        self._emitted = 0

    def feed(self, piece: str) -> list[str]:
        self._buffer += piece
        units: list[str] = []
        while True:
            cut = self._find_cut()
            if cut is None:
                break
            unit, self._buffer = self._buffer[:cut], self._buffer[cut:]
            if unit.strip():
                units.append(unit)
                self._emitted += 1
        return units

    def flush(self) -> list[str]:
        unit, self._buffer = self._buffer, ""
        if not unit.strip():
            return []
        self._emitted += 1
        return [unit]

    def _find_cut(self) -> int | None:
        text = self._buffer
        for i, ch in enumerate(text):
            if ch == "\n" and text[:i].strip():
                return i + 1
            # A sentence end needs the following character to be certain: "3." may be "3.5".
            if ch in _ENDERS and i + 1 < len(text):
                nxt = text[i + 1]
                if nxt in _ENDERS or nxt in "\"')”’":
                    continue
                if not nxt.isspace():
                    continue
                head = text[: i + 1]
                if len(head.strip()) < self.min_chars or (ch == "." and _is_abbreviation(head)):
                    continue
                return i + 2 if nxt == " " else i + 1
        if self._emitted == 0 and self.first_unit_comma_chars is not None:
            # ", " (with the space) so that "1,000" is not a clause boundary.
            for comma in (", ", "， ", "、"):
                at = text.find(comma, self.first_unit_comma_chars)
                if at > 0:
                    return at + len(comma)
        if len(text) > self.max_chars:
            comma = text.rfind(", ", 0, self.max_chars)
            if comma > 0:
                return comma + 2
        return None
