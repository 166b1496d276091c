"""The kitchen reference: vetted facts the reasoner answers from (:func:`agent.deciding.banks.reference_bank`).

A 1.5B model knows roughly how long an egg boils and is sure of it either way; a fridge at
"37 °C" is an answer it gives. So a question for knowledge is first looked up here, by the same
character n-gram TF-IDF that picks the talker's examples (robust to inflection and Korean
particles, no tokenizer, the same on every CPU), and the facts near enough to the words are handed
to the reasoner with the question. It still phrases the answer, and answers alone when nothing is
near enough.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from agent.deciding.banks import reference_bank
from agent.deciding.tool_examples import ExampleIndex, language_of


@dataclass(frozen=True)
class ReferenceSettings:
    """How facts are found for a question."""

    min_score: dict[str, float] = field(default_factory=lambda: {"en": 0.24, "ko": 0.15})
    """Cosine similarity a fact needs to be handed over, per language; below it the question is
    answered without. Korean facts score lower on the same match (longer sentences, particles), so
    their bar is lower. Chosen on the en-knowledge and ko-knowledge suites, and run on the
    *-knowledge-second suites since (tuned on: no held-out figure)."""
    top: int = 2
    """Facts handed over at most, nearest first."""
    margin: float = 0.75
    """A second fact is handed over only when it scores at least this share of the first, so a
    near miss does not ride along with a clear match."""


class KitchenReference:
    """Facts per language, found by the words of a question."""

    def __init__(self, bank: Mapping[str, Sequence[tuple[str, str]]] | None = None, settings: ReferenceSettings = ReferenceSettings()) -> None:
        if bank is None:
            bank = reference_bank()
        self.settings = settings
        # Indexed by the keywords and the fact together: the keywords carry the asker's words, the
        # fact its own.
        self._index = {language: ExampleIndex([(f"{keys} {fact}", fact) for keys, fact in facts]) for language, facts in bank.items()}

    def __len__(self) -> int:
        return sum(len(index.entries) for index in self._index.values())

    def lookup(self, text: str, language: str) -> list[str]:
        """The facts near enough to ``text`` (in its language), nearest first; [] when none is."""
        spoken = language_of(text, language)
        index = self._index.get(spoken)
        if index is None or not text.strip():
            return []
        s = self.settings
        bar = s.min_score.get(spoken, max(s.min_score.values()))
        ranked = index.rank(text)[: s.top]
        if not ranked or ranked[0].score < bar:
            return []
        best = ranked[0].score
        return [str(r.entry[1]) for r in ranked if r.score >= bar and r.score >= s.margin * best]

    def scores(self, text: str, language: str, n: int = 3) -> list[tuple[float, str]]:
        """The ``n`` nearest facts with their scores (for tuning and the bench)."""
        index = self._index.get(language_of(text, language))
        return [(round(r.score, 3), str(r.entry[1])) for r in index.rank(text)[:n]] if index is not None else []
