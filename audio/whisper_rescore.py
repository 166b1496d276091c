"""Choosing among Whisper's n best hypotheses by the words this kitchen uses.

A small Whisper confuses words that sound alike: "grams" and "grands", "in" and
"and", "play" and "place".  Its beam search often holds the right words a little
further down the list.  :func:`choose` adds to each hypothesis's score (its mean
token log-probability) a bonus for the share of its words, and of its word pairs,
that occur in the kitchen's own text: the requests hearth knows how to serve, the
units, and the household's names (timer labels, list items, recipe titles, places).
A hypothesis wins only if the bonus outweighs the decoder's preference, so a clear
word is never overruled and a word outside the kitchen is still heard.

Numbers are one word class ("two", "2" and "twenty" are the same to the lexicon),
so a request's arguments do not need to be in its text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?|\d+(?:[.,]\d+)?")
_NUMBER_WORDS = frozenset(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred thousand "
    "half quarter".split()
)
NUMBER = "<num>"
START, END = "<s>", "</s>"


_HANGUL = re.compile(r"[\uac00-\ud7a3]")


def lexicon_words(text: str) -> list[str]:
    """The words of ``text`` as the lexicon counts them: lower case, numbers as one class.

    Korean counts pairs of adjacent syllables instead, across spaces: Whisper spaces Korean as it
    likes (추가해 줘, 추가해줘) and particles and endings join the word (목록에, 남았어?), so a
    whole spaced word of the kitchen's is seldom written the same way twice."""
    words = _WORD.findall(text.lower())
    if _HANGUL.search(text):
        units = [unit for word in words for unit in ([NUMBER] if word[0].isdigit() else word)]
        return [a + b for a, b in zip(units, units[1:])] or units
    return [NUMBER if word[0].isdigit() or word in _NUMBER_WORDS else word for word in words]


@dataclass(frozen=True)
class RescoreWeights:
    """How much the kitchen's words count against the decoder's own score."""

    word: float = 0.3
    """Bonus for a hypothesis whose every word is in the lexicon (scaled by the share that is)."""
    pair: float = 0.3
    """Bonus for a hypothesis whose every adjacent word pair (with the sentence's start and end) is."""


@dataclass(frozen=True)
class Lexicon:
    """The words and adjacent word pairs of a body of kitchen text."""

    words: frozenset[str] = frozenset()
    pairs: frozenset[tuple[str, str]] = frozenset()

    @classmethod
    def of(cls, texts: Iterable[str]) -> Lexicon:
        words: set[str] = set()
        pairs: set[tuple[str, str]] = set()
        for text in texts:
            sequence = [START, *lexicon_words(text), END]
            words.update(sequence[1:-1])
            pairs.update(zip(sequence, sequence[1:]))
        return cls(frozenset(words), frozenset(pairs))

    def __or__(self, other: Lexicon) -> Lexicon:
        return Lexicon(self.words | other.words, self.pairs | other.pairs)

    def __bool__(self) -> bool:
        return bool(self.words)

    def coverage(self, text: str) -> tuple[float, float]:
        """The share of ``text``'s words, and of its adjacent pairs, found in the lexicon."""
        words = lexicon_words(text)
        if not words:
            return 0.0, 0.0
        sequence = [START, *words, END]
        known_words = sum(w in self.words for w in words) / len(words)
        known_pairs = sum(p in self.pairs for p in zip(sequence, sequence[1:])) / (len(sequence) - 1)
        return known_words, known_pairs


def context_lexicon(context: str) -> Lexicon:
    """The lexicon of a recognizer context: each comma- or full-stop-separated name is a phrase."""
    return Lexicon.of(piece for piece in re.split(r"[,.;\n]", context) if piece.strip())


def choose(hypotheses: Sequence[tuple[str, float]], lexicon: Lexicon, weights: RescoreWeights) -> int:
    """The index of the hypothesis (text, mean log-probability) that scores best with the kitchen bonus.

    The first hypothesis (the decoder's own best) wins ties.
    """
    best, best_score = 0, float("-inf")
    for index, (text, score) in enumerate(hypotheses):
        words, pairs = lexicon.coverage(text)
        total = score + weights.word * words + weights.pair * pairs
        if total > best_score + 1e-9:
            best, best_score = index, total
    return best
