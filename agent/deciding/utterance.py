"""One reading of what was said, shared by every rule that reads it.

A request passes many rules on its way to an answer (is it a question, a yes, an undo, which tools
do its words cue, what numbers does it hold, does it bear out the act decided), and each used to
read the raw text again: lower-case it, strip its punctuation, normalise its numbers. One timer
request was read 27 times. An :class:`Utterance` is that reading done once for a transcript (and
once for each rival hearing): its lower-cased text, its words without punctuation, its text
prepared for the number readers (NFKC, lower case, hyphens as spaces: the text every offset found
in it points into), its words with their offsets there, and what the rules found in it, each
found once per language and kept (:func:`found_once`).

:func:`read` is the only way to an Utterance, and gives the same one for the same words: the
rules keep taking a request's text, and get its one reading from it. A reading depends on nothing
but the words, so sharing it changes no answer. The last :data:`READINGS_KEPT` readings are kept
(a turn reads its transcript, its rivals and the values it decided; a conversation's earlier
turns are not needed again).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

READINGS_KEPT = 512

_WORD = re.compile(r"\S+")
_HANGUL = re.compile(r"[가-힣]")


@dataclass(frozen=True, eq=False)
class Utterance:
    """One reading of ``text``; every field is made when it is read (:func:`read`)."""

    text: str
    """As heard (or typed)."""
    lowered: str
    """Lower case."""
    prepared: str
    """NFKC, lower case, hyphens as spaces: the text the number and duration readers' offsets point into."""
    words: str
    """Lower case, punctuation but apostrophes made spaces, spaces single: what the phrase rules match."""
    offsets: tuple[tuple[int, int], ...]
    """Each word of :attr:`prepared` (split at spaces) as (start, end)."""
    hangul: bool
    """Whether it holds Hangul: Korean, whatever the configured language."""
    _kept: dict[Any, Any] = field(default_factory=dict, repr=False)

    def words_keeping(self, keep: str) -> str:
        """:attr:`words`, but keeping the punctuation in ``keep`` ("%." for "21.5 %")."""
        if not keep:
            return self.words
        return self._once(("words", keep), lambda: _words(self.lowered, keep))

    def _once(self, key: Any, make: Callable[[], Any]) -> Any:
        if key not in self._kept:
            self._kept[key] = make()
        return self._kept[key]


def _words(lowered: str, keep: str = "") -> str:
    return " ".join(re.sub(rf"[^\w'가-힣\s{re.escape(keep)}]", " ", lowered).split())


def _prepared(text: str) -> str:
    return re.sub("[-\u2010\u2011\u2013]", " ", unicodedata.normalize("NFKC", text).lower())


def _reading(text: str) -> Utterance:
    """The reading itself (one pass over the words; :func:`read` keeps it)."""
    lowered = text.lower()
    prepared = _prepared(text)
    return Utterance(
        text=text, lowered=lowered, prepared=prepared, words=_words(lowered),
        offsets=tuple((m.start(), m.end()) for m in _WORD.finditer(prepared)), hangul=_HANGUL.search(text) is not None,
    )


@functools.lru_cache(maxsize=READINGS_KEPT)
def _kept_reading(text: str) -> Utterance:
    return _reading(text)


def read(text: str) -> Utterance:
    """The one reading of ``text``: made on first asking, the same object after."""
    return _kept_reading(text)


R = TypeVar("R")


def _passed(value: Any) -> Any:
    """An argument as the rule gets it: an iterator read once into a tuple, else as given."""
    if isinstance(value, Iterator):
        return tuple(value)
    return value


def _key(value: Any) -> Any:
    """An argument as part of a key: collections as hashable values, whatever their order."""
    if isinstance(value, Mapping):
        return ("map", tuple(sorted((str(k), _key(v)) for k, v in value.items())))
    if isinstance(value, (set, frozenset)):
        return ("set", frozenset(_key(v) for v in value))
    if isinstance(value, (list, tuple)):
        return ("seq", tuple(_key(v) for v in value))
    return value


def _copy(value: R) -> R:
    # A kept answer is shared: a caller that changes what it was given must not change it for the next.
    if isinstance(value, (set, list, dict)):
        return value.copy()  # type: ignore[return-value]
    return value


def found_once(rule: Callable[..., R] | None = None, *, text_at: int = 0) -> Any:
    """Keep what a rule found on the reading of the text it reads (its first argument, or the one
    at ``text_at``): the rule runs once per utterance and arguments (a question, a yes, the tools
    cued, whether the words bear out an act), however many rules ask."""

    def keeping(rule: Callable[..., R]) -> Callable[..., R]:
        @functools.wraps(rule)
        def once(*args: Any, **named: Any) -> R:
            args = tuple(_passed(a) for a in args)
            named = {k: _passed(v) for k, v in named.items()}
            text = args[text_at] if len(args) > text_at else None
            if not isinstance(text, str):
                return rule(*args, **named)
            key = (rule.__module__, rule.__qualname__, _key(args), _key(named))
            try:
                hash(key)
            except TypeError:
                return rule(*args, **named)
            return _copy(read(text)._once(key, lambda: rule(*args, **named)))

        return once

    return keeping(rule) if rule is not None else keeping
