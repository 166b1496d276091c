"""Numbers and durations as people say them, found inside free text, in English and Korean.

Argument repair needs to know what the user actually stated ("an hour and a half",
"1분 30초", "삼십 초", "two hundred grams"), with where it was said, so that a duration
naming a timer ("the 1 hour timer") can be told from the one to add.  Everything here
reads the words; nothing guesses a value that is not spelled out.
"""

from __future__ import annotations

import functools
import logging
import re
from dataclasses import dataclass

from agent.deciding.lexicon import lexicon
from agent.deciding.utterance import read

log = logging.getLogger(__name__)

EN_ONES = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
    "seventeen": 17, "eighteen": 18, "nineteen": 19,
}
EN_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fourty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
EN_FRACTIONS = {"half": 0.5, "halves": 0.5, "quarter": 0.25, "quarters": 0.25, "third": 1 / 3, "thirds": 1 / 3}
_EN_PARTS = {word: part for word, part in EN_FRACTIONS.items() if word.endswith("s")}
"""The fractions a number before them multiplies ("three quarters")."""
_EN_DURATION_CLASSES = {"duration_hour": 3600, "duration_minute": 60, "duration_second": 1}
"""Each lexicon class of names of a unit of time, and the seconds in the unit."""


@functools.cache
def en_duration_units() -> dict[str, int]:
    """Each English name of a unit of time ("hours", "min", "secs"), and the seconds in it."""
    lex = lexicon("en")
    return {phrase: seconds for name, seconds in _EN_DURATION_CLASSES.items() for phrase in lex.phrases(name)}


# Letters that are units only when glued to digits ("90s", "1h30m").
EN_DURATION_LETTERS = {"h": 3600, "m": 60, "s": 1}

KO_SINO_DIGITS = {"영": 0, "공": 0, "일": 1, "이": 2, "삼": 3, "사": 4, "오": 5, "육": 6, "륙": 6, "칠": 7, "팔": 8, "구": 9}
KO_SINO_SCALES = {"십": 10, "백": 100, "천": 1000}
KO_NATIVE_ONES = {"한": 1, "하나": 1, "두": 2, "둘": 2, "세": 3, "셋": 3, "석": 3, "네": 4, "넷": 4, "넉": 4, "다섯": 5,
                  "여섯": 6, "일곱": 7, "여덟": 8, "아홉": 9}
KO_NATIVE_TENS = {"열": 10, "스물": 20, "스무": 20, "서른": 30, "마흔": 40, "쉰": 50, "예순": 60, "일흔": 70, "여든": 80, "아흔": 90}
KO_DURATION_UNITS = {"시간": 3600, "분": 60, "초": 1}

_NATIVE_ONES_RE = "|".join(sorted(KO_NATIVE_ONES, key=len, reverse=True))
_NATIVE_TENS_RE = "|".join(KO_NATIVE_TENS)
KO_NUMBER = (
    r"(?<![가-힣\d.])(?:\d+(?:\.\d+)?"
    rf"|(?:{_NATIVE_TENS_RE})(?:{_NATIVE_ONES_RE})?|(?:{_NATIVE_ONES_RE})"
    r"|[영공일이삼사오육륙칠팔구십백천]+)"
)
"""A Korean-context number: digits, a native numeral (열다섯, 세) or a Sino-Korean one (삼십오).

Not preceded by a syllable, so the 이 of 계란이 is not read as two."""
_KO_DURATION = re.compile(rf"(?P<num>{KO_NUMBER}|(?<![가-힣])반)\s*(?P<unit>시간|분|초)(?P<half>\s*반)?")
_KO_JOINER = re.compile(r"^\s*(?:하고|그리고|,)?\s*$")


@dataclass(frozen=True)
class Token:
    text: str
    start: int
    end: int


@dataclass(frozen=True)
class Found:
    """A value said in the text, and where (character offsets into the text given)."""

    value: float
    start: int
    end: int


def prepare(text: str) -> str:
    """NFKC and lower case, with hyphens as spaces: the text every offset found here points into
    (its one reading's, :attr:`agent.deciding.utterance.Utterance.prepared`)."""
    return read(text).prepared


def english_tokens(text: str) -> list[Token]:
    """Words, digit runs and punctuation, lower case ("10min" is two tokens, "forty-five" two words)."""
    prepared = prepare(text)
    pattern = r"\d+(?:[.,]\d+)*|[a-z]+(?:'[a-z]+)?|[^\sa-z\d]"
    return [Token(m.group(), m.start(), m.end()) for m in re.finditer(pattern, prepared)]


def _digits(word: str) -> float | None:
    if re.fullmatch(r"\d+(?:,\d{3})*(?:\.\d+)?", word):
        return float(word.replace(",", ""))
    if re.fullmatch(r"\d+\.\d+|\d+", word):
        return float(word)
    return None


def _number_words(words: list[str], i: int) -> tuple[float, int] | None:
    """The longest run of English number words at ``words[i]``: "three hundred fifty" → (350, i+3)."""
    total, current, j, last = 0.0, 0.0, i, ""
    while j < len(words):
        w = words[j]
        if w in EN_ONES and last not in ("ones", "teens"):
            last = "teens" if EN_ONES[w] >= 10 else "ones"
            current += EN_ONES[w]
        elif w in EN_TENS and last in ("", "hundred", "thousand"):
            current += EN_TENS[w]
            last = "tens"
        elif w == "hundred" and last in ("ones", "teens", "tens", ""):
            current = (current or 1) * 100
            last = "hundred"
        elif w == "thousand" and last != "thousand":
            total += (current or 1) * 1000
            current, last = 0.0, "thousand"
        elif w == "and" and last in ("hundred", "thousand") and j + 1 < len(words) and (words[j + 1] in EN_ONES or words[j + 1] in EN_TENS):
            pass
        else:
            break
        j += 1
    return (total + current, j) if j > i and last else None


def read_amount(words: list[str], i: int) -> tuple[float, int, bool] | None:
    """An amount at ``words[i]``: (value, index after it, whether it was only an article like "a").

    "two", "350", "three hundred fifty", "two and a half", "half", "a quarter", "three quarters", "a".
    """
    if i >= len(words):
        return None
    w = words[i]
    value: float | None = _digits(w)
    j = i + 1
    article_only = False
    if value is None:
        run = _number_words(words, i)
        if run is not None:
            value, j = run
        elif w in EN_FRACTIONS:
            return EN_FRACTIONS[w], i + 1, False
        elif lexicon("en").has("one_as_article", w):  # "another couple of minutes", "another half hour", "another minute"
            nxt = words[i + 1] if i + 1 < len(words) else ""
            if nxt in EN_FRACTIONS:
                return EN_FRACTIONS[nxt], i + 2, False
            if nxt == "dozen":
                return 12.0, i + 2, False
            if nxt == "couple" and i + 2 < len(words) and words[i + 2] == "of":
                return 2.0, i + 3, False  # "a couple of minutes", "a couple of lemons"
            if nxt in ("hundred", "thousand"):
                run = _number_words(words, i + 1)
                if run is not None:
                    return run[0], run[1], False
            return 1.0, i + 1, True
        else:
            return None
    tail = words[j : j + 3]
    if len(tail) == 3 and tail[0] == "and" and tail[1] in ("a", "an") and tail[2] in EN_FRACTIONS:
        value, j = value + EN_FRACTIONS[tail[2]], j + 3
    elif j < len(words) and words[j] in _EN_PARTS:
        value, j = value * EN_FRACTIONS[words[j]], j + 1
    elif j < len(words) and _part_said_singular(value, words, j):
        value, j = value * EN_FRACTIONS[words[j]], j + 1  # "a three-quarter cup": 0.75 of a cup
    elif j < len(words) and words[j] == "dozen":
        value, j = value * 12, j + 1
    return value, j, article_only


def _part_said_singular(value: float, words: list[str], at: int) -> bool:
    """Whether ``words[at]`` is a fraction said in the singular after its count, as a hyphenated
    measure is ("three-quarter cup", "two-third cup"): a count smaller than the fraction's parts,
    and no quarter-pound after it ("two quarter pounders" are two burgers)."""
    value_of_one = EN_FRACTIONS.get(words[at]) if not words[at].endswith("s") else None
    parts = round(1 / value_of_one) if value_of_one is not None and value_of_one < 0.5 else None
    after = words[at + 1] if at + 1 < len(words) else ""
    return parts is not None and value == int(value) and 1 <= value < parts and not after.startswith("pound")


@functools.cache
def _en_more() -> frozenset[str]:
    return frozenset(lexicon("en").phrases("number_more"))


def _english_duration_part(words: list[str], i: int) -> tuple[float, int, int] | None:
    """(seconds, index after, unit size) for one "amount unit" at ``words[i]``."""
    amount = read_amount(words, i)
    if amount is None:
        return None
    value, j, article_only = amount
    if j < len(words) and words[j] in _en_more():  # "five more minutes"
        j += 1
    if j < len(words) and words[j] == "of":  # "a quarter of an hour"
        j += 1
    if j < len(words) and words[j] in ("a", "an") and value < 1:  # "half an hour"
        j += 1
    if j >= len(words):
        return None
    unit = en_duration_units().get(words[j])
    if unit is None and _digits(words[j - 1]) is not None:
        unit = EN_DURATION_LETTERS.get(words[j])
    if unit is None:
        return None
    if article_only and unit == 1 and lexicon("en").has("a_while", words[j]):
        return None  # "hold it for a sec", "pause it a second": a while, not a length to time
    j += 1
    tail = words[j : j + 3]
    if len(tail) == 3 and tail[0] == "and" and tail[1] in ("a", "an") and tail[2] in EN_FRACTIONS:
        value, j = value + EN_FRACTIONS[tail[2]], j + 3  # "an hour and a half"
    return value * unit, j, unit


def english_durations(text: str) -> list[Found]:
    """Every duration said in English text, compound ones summed ("1 hour, 15 minutes and 30 seconds")."""
    tokens = english_tokens(text)
    words = [t.text for t in tokens]
    found: list[Found] = []
    i = 0
    while i < len(words):
        part = _english_duration_part(words, i)
        if part is None and (i == 0 or read_amount(words, i - 1) is None) and words[i] in ("hour", "minute") \
                and " ".join(words[i + 1 : i + 4]) in lexicon("en").phrases("number_and_a_half"):
            size = en_duration_units()[words[i]]
            part = ((1 + EN_FRACTIONS["half"]) * size, i + 4, size)  # "Hour and a half timer."
        if part is None:
            i += 1
            continue
        total, j, unit = part
        while True:
            k = j
            while k < len(words) and words[k] in (",", "and"):
                k += 1
            more = _english_duration_part(words, k)
            if more is None or more[2] >= unit:
                break
            total, j, unit = total + more[0], more[1], more[2]
        if (bare := _bare_smaller_part(words, j, unit)) is not None:
            total, j = total + bare[0], bare[1]  # "an hour forty", "two minutes thirty"
        if j < len(words) and lexicon("en").has("length_gone_by", words[j]):
            i = j + 1  # "ten minutes ago the kitchen was clean": a length that was, not one to time
            continue
        found.append(Found(total, tokens[i].start, tokens[j - 1].end))
        i = j
    return found


def _bare_smaller_part(words: list[str], at: int, unit: float) -> tuple[float, int] | None:
    """The minutes after hours, or the seconds after minutes, said as a bare number that ends the
    phrase ("an hour forty", "two minutes thirty, please"): (seconds, index after the number)."""
    if unit not in (3600, 60):
        return None
    amount = read_amount(words, at)
    if amount is None or amount[2] or not (1 <= amount[0] < 60) or amount[0] != int(amount[0]):
        return None
    if words[at] == "one" and at > 0 and en_duration_units().get(words[at - 1]) and not words[at - 1].endswith("s"):
        return None  # "a nine minute one": the timer, said as "one", not a minute and a second
    after = words[amount[1]] if amount[1] < len(words) else ""
    if after and re.fullmatch(r"[a-z0-9']+", after) and not lexicon("en").has("after_bare_part", after):
        return None  # "an hour two timers": a count of something else
    return amount[0] * unit / 60, amount[1]


def korean_number(text: str) -> float | None:
    """A Korean-context number word or digits: "삼십오", "열다섯", "세", "12", "반" (a half)."""
    text = text.strip()
    if not text:
        return None
    if text == "반":
        return 0.5
    digits = _digits(text)
    if digits is not None:
        return digits
    for tens_word, tens in KO_NATIVE_TENS.items():
        if text.startswith(tens_word):
            rest = text[len(tens_word):]
            if not rest:
                return float(tens)
            return float(tens + KO_NATIVE_ONES[rest]) if rest in KO_NATIVE_ONES else None
    if text in KO_NATIVE_ONES:
        return float(KO_NATIVE_ONES[text])
    return _sino(text)


def _sino(text: str) -> float | None:
    total, digit = 0.0, None
    for ch in text:
        if ch in KO_SINO_DIGITS:
            if digit is not None:
                return None  # two digits in a row are a word (오이, cucumber), not a number
            digit = float(KO_SINO_DIGITS[ch])
        elif ch in KO_SINO_SCALES:
            total += (1.0 if digit is None else digit) * KO_SINO_SCALES[ch]
            digit = None
        else:
            return None
    return total + (digit or 0.0)


def korean_durations(text: str) -> list[Found]:
    """Every duration said in Korean text; adjacent parts summed ("1시간 30분", "한 시간 반")."""
    # "한시간이십분": a unit written against the next number is read apart from it.
    prepared = re.sub(r"(시간|분)(?=[일이삼사오육칠팔구십한두세네다여아열스서마쉰예])", r"\1 ", prepare(text))
    found: list[Found] = []
    for match in _KO_DURATION.finditer(prepared):
        amount = korean_number(match["num"])
        if amount is None:
            continue
        unit = KO_DURATION_UNITS[match["unit"]]
        seconds = amount * unit + (0.5 * unit if match["half"] else 0.0)
        if found and _KO_JOINER.match(prepared[found[-1].end : match.start()]):
            found[-1] = Found(found[-1].value + seconds, found[-1].start, match.end())
        else:
            found.append(Found(seconds, match.start(), match.end()))
    return found


def durations(text: str) -> list[Found]:
    """Durations said in the text, in seconds, in whichever of the two languages it is."""
    return korean_durations(text) if re.search(r"[가-힣]", text) else english_durations(text)


def english_numbers(text: str) -> list[Found]:
    """Every number spelled out or written in English text (an article alone does not count)."""
    tokens = english_tokens(text)
    words = [t.text for t in tokens]
    found, i = [], 0
    while i < len(words):
        amount = read_amount(words, i)
        if amount is None or amount[2]:
            i += 1
            continue
        found.append(Found(amount[0], tokens[i].start, tokens[amount[1] - 1].end))
        i = amount[1]
    return found


def korean_numbers(text: str) -> list[Found]:
    """Numbers in Korean text: digits anywhere, number words when they stand alone or before a counter."""
    prepared = prepare(text)
    found = []
    for match in re.finditer(KO_NUMBER, prepared):
        word = match.group()
        after = prepared[match.end() : match.end() + 1]
        standalone = not after or not re.match(r"[가-힣]", after) or _counter_follows(prepared, match.end())
        value = korean_number(word)
        if value is not None and (word[0].isdigit() or standalone):
            found.append(Found(value, match.start(), match.end()))
    return found


def ko_counters() -> tuple[str, ...]:
    """The Korean counters said after a number (the class ``counter``): 두 개, 세 병, 이 인분."""
    return lexicon("ko").phrases("counter")


def _counter_follows(text: str, at: int) -> bool:
    rest = text[at:].lstrip()
    return rest.startswith(ko_counters())


def numbers(text: str) -> list[Found]:
    """Numbers said in the text, in whichever of the two languages it is."""
    return korean_numbers(text) if re.search(r"[가-힣]", text) else english_numbers(text)
