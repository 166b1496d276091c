"""What the Wyoming server needs from the rest of hearth, as protocols."""

from __future__ import annotations

from typing import AsyncIterator, Protocol


class TextAnswers(Protocol):
    """Answers a transcript the way a spoken turn would be answered."""

    def answer_text(self, text: str) -> AsyncIterator[str]:
        """Run one turn for `text` and yield each spoken unit's text, in order, as it is cut.

        The iterator must have ``aclose()`` (an async generator has): closing it ends the turn."""
        ...
