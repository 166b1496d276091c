"""The words hearth reads requests by, as data: one TOML lexicon per language in
``agent/deciding/data/lexicon-<language>.toml``.

Each class of words is a table with a sentence saying what the class is for and its phrases::

    [home_on]
    what = "a verb that switches a thing on, said before the thing"
    phrases = ["turn on", "switch on"]

The rules that read a request ask for a class by name (:meth:`Lexicon.phrases`) and never hold
phrase lists of their own, so what hearth understands can be read, reviewed and extended in one
place per language. A file is read on first use and kept (nothing is read at import); a file that
does not parse, a class without its sentence, a blank or duplicated phrase, or a class asked for
that the file lacks is a :class:`LexiconError` of one line naming the file and the class.
"""

from __future__ import annotations

import functools
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources

LANGUAGES = ("en", "ko")


class LexiconError(ValueError):
    """A lexicon that cannot be used; the message names the file and the class."""


@dataclass(frozen=True)
class Lexicon:
    """One language's classes of words."""

    file: str
    classes: Mapping[str, tuple[str, ...]]
    """Each class's phrases, lower-case, longest first (so an alternation tries "turn on" before "turn")."""
    _alternations: dict[str, str] = field(default_factory=dict, compare=False, repr=False)

    def phrases(self, name: str) -> tuple[str, ...]:
        try:
            return self.classes[name]
        except KeyError:
            raise LexiconError(f"{self.file}: no class {name!r}") from None

    def has(self, name: str, words: str) -> bool:
        """Whether ``words`` (normalized) is exactly one of the class's phrases."""
        return words in self.phrases(name)

    def alternation(self, name: str) -> str:
        """The class's phrases as a regular-expression alternation (spaces match any run of spaces)."""
        made = self._alternations.get(name)
        if made is None:
            made = self._alternations[name] = "(?:" + "|".join(re.escape(p).replace(r"\ ", r"\s+") for p in self.phrases(name)) + ")"
        return made


def _phrases(file: str, name: str, table: object) -> tuple[str, ...]:
    if not isinstance(table, dict):
        raise LexiconError(f"{file}: [{name}] must be a table with 'what' and 'phrases'")
    what, phrases = table.get("what"), table.get("phrases")
    if not isinstance(what, str) or not what.strip():
        raise LexiconError(f"{file}: [{name}] needs a 'what' sentence saying what the class is for")
    if set(table) - {"what", "phrases"}:
        raise LexiconError(f"{file}: [{name}] has unknown keys {sorted(set(table) - {'what', 'phrases'})}")
    if not isinstance(phrases, list) or not phrases:
        raise LexiconError(f"{file}: [{name}] needs a non-empty 'phrases' list")
    out: list[str] = []
    for phrase in phrases:
        if not isinstance(phrase, str) or not phrase.strip():
            raise LexiconError(f"{file}: [{name}] has a blank or non-text phrase: {phrase!r}")
        normal = " ".join(phrase.lower().split())
        if normal in out:
            raise LexiconError(f"{file}: [{name}] repeats {phrase!r}")
        out.append(normal)
    return tuple(sorted(out, key=len, reverse=True))


def parse_lexicon(file: str, text: str) -> Lexicon:
    """A lexicon from the text of its TOML file (``file`` names it in errors)."""
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise LexiconError(f"{file}: not TOML: {exc}") from None
    return Lexicon(file, {name: _phrases(file, name, table) for name, table in raw.items()})


@functools.cache
def lexicon(language: str) -> Lexicon:
    """The lexicon of ``language`` ("en" or "ko"), read on first use."""
    if language not in LANGUAGES:
        raise LexiconError(f"no lexicon for language {language!r}")
    file = f"lexicon-{language}.toml"
    text = resources.files("agent.deciding").joinpath("data", file).read_text(encoding="utf-8")
    return parse_lexicon(file, text)
