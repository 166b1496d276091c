"""Numbers as they are written or said, in English or Korean: ``30``, ``"thirty"``, ``"삼십"``,
``"서른"``, ``"one and a half"``, ``"3/4"``, ``"½"``.

Shared by the scoring of tool arguments (:mod:`bench.suites.scoring`) and the checks of spoken
answers (:mod:`bench.suites.answers`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import Any

_EN_UNITS = {
    "zero": 0, "oh": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14,
    "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19,
}
_EN_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fourty": 40, "fifty": 50, "sixty": 60,
            "seventy": 70, "eighty": 80, "ninety": 90}
_EN_SCALES = {"hundred": 100, "thousand": 1000, "million": 1_000_000}
EN_FRACTIONS = {"half": 0.5, "halves": 0.5, "quarter": 0.25, "quarters": 0.25, "third": 1 / 3, "thirds": 1 / 3}
_UNICODE_FRACTIONS = {"½": 0.5, "¼": 0.25, "¾": 0.75, "⅓": 1 / 3, "⅔": 2 / 3}

_KO_SINO_DIGITS = {"영": 0, "공": 0, "일": 1, "이": 2, "삼": 3, "사": 4, "오": 5, "육": 6, "륙": 6,
                   "칠": 7, "팔": 8, "구": 9}
_KO_SINO_SCALES = {"십": 10, "백": 100, "천": 1000}
# Native numbers, with the short forms used before a counter (한 시간, 두 컵, 세 개, 스무 개).
_KO_NATIVE_ONES = {"하나": 1, "한": 1, "둘": 2, "두": 2, "셋": 3, "세": 3, "석": 3, "넷": 4, "네": 4, "넉": 4,
                   "다섯": 5, "여섯": 6, "일곱": 7, "여덟": 8, "아홉": 9}
_KO_NATIVE_TENS = {"열": 10, "스물": 20, "스무": 20, "서른": 30, "마흔": 40, "쉰": 50, "예순": 60,
                   "일흔": 70, "여든": 80, "아흔": 90}
_KO_HALF = "반"

_NUMBER_TEXT = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)$")
_FRACTION_TEXT = re.compile(r"^(?:(\d+)\s+)?(\d+)\s*/\s*(\d+)$")

EN_NUMBER_WORDS = frozenset(_EN_UNITS) | frozenset(_EN_TENS) | frozenset(_EN_SCALES)
"""Every English word that is (part of) a number: "oh", "five", "twenty", "hundred" …"""


def parse_english_number(words: Sequence[str]) -> float | None:
    """The value of a whole run of English number words (``["one", "hundred", "and", "five"]``), or None."""
    if not words:
        return None
    total, current, seen = 0.0, 0.0, False
    for index, word in enumerate(words):
        if word in _EN_UNITS:
            current += _EN_UNITS[word]
        elif word in _EN_TENS:
            current += _EN_TENS[word]
        elif word == "hundred":
            current = (current or 1) * 100
        elif word in _EN_SCALES:
            total += (current or 1) * _EN_SCALES[word]
            current = 0.0
        elif word == "and" and seen and index + 1 < len(words):
            continue  # "one hundred and five"
        elif word in ("a", "an") and index == 0 and len(words) > 1 and words[1] in _EN_SCALES:
            current = 1  # "a hundred"
        else:
            return None
        seen = True
    return total + current if seen else None


def parse_korean_number(text: str) -> float | None:
    """The value of a Korean numeral, Sino-Korean (삼십오, 3만) or native (서른다섯, 스무), or None."""
    text = text.replace(" ", "")
    if not text:
        return None
    if text == _KO_HALF:
        return 0.5
    native = _parse_korean_native(text)
    if native is not None:
        return native
    return _parse_korean_sino(text)


def _parse_korean_native(text: str) -> float | None:
    value, rest = 0, text
    for word, number in _KO_NATIVE_TENS.items():
        if rest.startswith(word):
            value, rest = number, rest[len(word):]
            break
    if rest:
        if rest not in _KO_NATIVE_ONES:
            return None
        value += _KO_NATIVE_ONES[rest]
    return float(value) if value else None


def _parse_korean_sino(text: str) -> float | None:
    total, section, digit = 0.0, 0.0, None
    index = 0
    while index < len(text):
        match = re.match(r"\d+(\.\d+)?", text[index:])
        if match:
            if digit is not None:
                return None
            digit = float(match.group())
            index += match.end()
            continue
        char = text[index]
        index += 1
        if char in _KO_SINO_DIGITS:
            if digit is not None:
                return None  # two digits in a row are a word (오이, cucumber), not a number
            digit = float(_KO_SINO_DIGITS[char])
        elif char in _KO_SINO_SCALES:
            section += (1.0 if digit is None else digit) * _KO_SINO_SCALES[char]
            digit = None
        elif char in ("만", "억"):
            scale = 10_000 if char == "만" else 100_000_000
            total += (section + (digit or 0.0) or 1.0) * scale
            section, digit = 0.0, None
        else:
            return None
    return total + section + (digit or 0.0)


def parse_number(value: Any) -> float | None:
    """A number from a number, numeric text, a fraction or number words in English or Korean; else None."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if not isinstance(value, str):
        return None
    text = unicodedata.normalize("NFKC", value).replace("\u2044", "/").strip().lower().rstrip(".")
    text = re.sub(r"(?<=\d),(?=\d{3}\b)", "", text)
    if text in _UNICODE_FRACTIONS:
        return _UNICODE_FRACTIONS[text]
    if _NUMBER_TEXT.match(text):
        return float(text)
    fraction = _FRACTION_TEXT.match(text)
    if fraction:
        whole, top, bottom = fraction.groups()
        return (float(whole) if whole else 0.0) + float(top) / float(bottom) if float(bottom) else None
    if re.search(r"[가-힣]", text):
        return parse_korean_number(text)
    words = re.sub(r"[-,]", " ", text).split()
    if words in (["a"], ["an"]):
        return None
    amount, end = english_amount(words, 0)
    return amount if amount is not None and end == len(words) else None


def english_amount(words: Sequence[str], start: int) -> tuple[float | None, int]:
    """Read an amount at ``words[start]``: "five", "one and a half", "three quarters", "half", "a", "1/2".

    Returns (value, index after it), or (None, start).
    """
    index, value = start, None
    # The longest run of number words (and digits) that parses.
    for end in range(len(words), start, -1):
        run = words[start:end]
        if len(run) == 1 and _plain_number(run[0]) is not None:
            value, index = _plain_number(run[0]), end
            break
        if run[-1] != "and" and all(w in _EN_UNITS or w in _EN_TENS or w in _EN_SCALES or w in ("and", "a", "an")
                                    for w in run):
            parsed = parse_english_number(run)
            if parsed is not None:
                value, index = parsed, end
                break
    if value is not None:
        tail = words[index:index + 3]
        if len(tail) >= 3 and tail[0] == "and" and tail[1] in ("a", "an") and tail[2] in EN_FRACTIONS:
            value, index = value + EN_FRACTIONS[tail[2]], index + 3  # "one and a half"
        elif len(tail) >= 3 and tail[0] == "and" and tail[1] in ("a", "an") and _is_fraction(tail[2]):
            value, index = value + (_plain_number(tail[2]) or 0.0), index + 3  # "one and a 1/2"
        elif len(tail) >= 2 and tail[0] == "and" and _is_fraction(tail[1]):
            value, index = value + (_plain_number(tail[1]) or 0.0), index + 2  # "one and 1/2"
        elif index < len(words) and words[index] in EN_FRACTIONS:
            value, index = value * EN_FRACTIONS[words[index]], index + 1  # "three quarters"
        return value, index
    if start < len(words) and words[start] in EN_FRACTIONS:
        return EN_FRACTIONS[words[start]], start + 1  # "half", "quarter"
    if start < len(words) and words[start] in ("a", "an"):
        if start + 1 < len(words) and words[start + 1] in EN_FRACTIONS:
            return EN_FRACTIONS[words[start + 1]], start + 2  # "a half", "a quarter"
        return 1.0, start + 1
    return None, start


def _is_fraction(word: str) -> bool:
    value = _plain_number(word)
    return value is not None and 0 < value < 1


def _plain_number(word: str) -> float | None:
    if _NUMBER_TEXT.match(word):
        return float(word)
    if word in _UNICODE_FRACTIONS:
        return _UNICODE_FRACTIONS[word]
    fraction = _FRACTION_TEXT.match(word)
    if fraction and not fraction.group(1) and float(fraction.group(3)):
        return float(fraction.group(2)) / float(fraction.group(3))
    return None
