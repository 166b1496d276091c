"""Whether a spoken answer to a knowledge question holds the fact: the checks of a knowledge suite.

A question no tool answers ("How long do I boil an egg?") is right when the reply says a number in
the accepted range with one of its units ("seven minutes", "7분"), or one of the accepted phrases
("lemon juice"), and none of the phrases that mark the usual wrong answer.  Numbers are read as
they are spoken or written, in English or Korean (:func:`bench.suites.numbers.parse_number`).
"""

from __future__ import annotations

import re
import unicodedata

from pydantic import BaseModel, ConfigDict, Field, model_validator

from bench.suites.numbers import parse_number


class NumberRange(BaseModel):
    """A number in ``[min, max]`` said with one of ``units`` (a unit matches a word it begins)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    min: float
    max: float
    units: list[str] = Field(min_length=1)


class AnswerCheck(BaseModel):
    """What a right answer holds: one of ``numbers`` or one of ``any_of``, and none of ``none_of``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    numbers: list[NumberRange] = []
    any_of: list[str] = []
    none_of: list[str] = []

    @model_validator(mode="after")
    def _something_to_check(self) -> AnswerCheck:
        if not self.numbers and not self.any_of:
            raise ValueError("an answer check needs numbers or any_of")
        return self


def _folded(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


_EN_NUMBER = re.compile(
    r"\d+(?:\.\d+)?|\b(?:(?:zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|"
    r"fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|"
    r"thousand|and|a|half)[\s-]*)+\b"
)
_KO_NUMBER = re.compile(r"(?<![가-힣])(\d+(?:\.\d+)?|[일이삼사오육칠팔구십백천한두세네다섯여섯일곱여덟아홉열스물서른마흔쉰]+)\s*")


def said_numbers(text: str) -> list[tuple[float, str]]:
    """Every number said in ``text`` with the words right after it (where its unit is)."""
    folded = _folded(text)
    found: list[tuple[float, str]] = []
    for match in _EN_NUMBER.finditer(folded):
        value = parse_number(match.group(0).strip(" -").removesuffix(" and").removeprefix("and "))
        if value is not None:
            found.append((value, folded[match.end() : match.end() + 24].strip()))
    for match in _KO_NUMBER.finditer(folded):
        if match.group(1).isdigit() or re.fullmatch(r"\d+\.\d+", match.group(1)):
            continue  # digits are read above
        value = parse_number(match.group(1))
        if value is not None:
            found.append((value, folded[match.end() : match.end() + 24].strip()))
    return found


_SCALES = {"celsius": ("celsius", "°c", "섭씨"), "fahrenheit": ("fahrenheit", "°f", "화씨")}


def _scale_of(after: str) -> str | None:
    """The temperature scale named right after a number ("37 degrees Celsius"), if any."""
    words = after.split()[:3]
    for scale, names in _SCALES.items():
        if any(word.startswith(name) for name in names for word in words) or re.match(rf"°?\s*{scale[0]}\b", after):
            return scale
    return None


def _has_unit(after: str, units: list[str]) -> bool:
    words = after.split()[:3]
    folded = [_folded(unit) for unit in units]
    scale = _scale_of(after)
    if scale is not None and any(name in folded for name in _SCALES) and scale not in folded:
        return False  # "37 degrees Celsius" is not 37 °F: a range in the other scale does not take it
    return any(word.startswith(unit) or after.startswith(unit) for unit in folded for word in words)


def answer_right(reply: str, check: AnswerCheck) -> bool:
    """Whether ``reply`` holds the fact ``check`` describes."""
    folded = _folded(reply)
    if any(_folded(phrase) in folded for phrase in check.none_of):
        return False
    if any(_folded(phrase) in folded for phrase in check.any_of):
        return True
    return any(
        allowed.min <= value <= allowed.max and _has_unit(after, allowed.units)
        for value, after in said_numbers(reply)
        for allowed in check.numbers
    )
