"""Scoring a turn: did the assistant call the right tools with the right arguments, and what did it hear.

Tool calls are compared as multisets: order does not matter, and a scenario
that expects no tool (``expect: []``) is right only when nothing was called.
Arguments are compared after normalisation, chosen by the argument's kind in
the tool vocabulary (:data:`bench.suites.schema.TOOLS`):

- numbers (read by :mod:`bench.suites.numbers`): ``"30"``, ``30``, ``30.0``, ``"thirty"``, ``"서른"`` and ``"삼십"`` are equal;
- durations (seconds): ``1800``, ``"half an hour"``, ``"30 minutes"``, ``"0:30:00"``,
  ``"PT30M"``, ``"반 시간"``, ``"30분"`` are equal.  A two-part clock form is read
  as *minutes:seconds* (``"1:30"`` = 90 s), the way a kitchen timer's display
  reads; three parts are *h:mm:ss*;
- strings: Unicode NFC, case-folded, surrounding whitespace and punctuation
  dropped, inner whitespace collapsed; labels and items also lose a leading
  article (``the``, ``a``, ``my`` …) and a label a trailing "timer"/"타이머";
- units: aliases to the vocabulary's names (``cups`` → ``cup``, ``grams`` → ``g``,
  ``°C``/``celsius``/``섭씨`` → ``C``, ``gas mark`` → ``gas_mark`` …);
- quantities (``"2 l"`` = ``"two liters"``; a counter like 개 or "pieces" is
  dropped; an expected bare number checks the number only);
- booleans (``true``/``"yes"``/``1``).  An expected ``false`` also matches an
  argument that was left out, since every boolean in the vocabulary is an
  optional flag that defaults to false.

An expected value that is a list is a set of accepted alternatives.
"""

from __future__ import annotations

import itertools
import logging
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import field
from typing import Any

from pydantic.dataclasses import dataclass

from bench.suites.numbers import EN_FRACTIONS, EN_NUMBER_WORDS, english_amount, parse_english_number, parse_korean_number, parse_number
from bench.suites.schema import TOOLS, ExpectedCall

logger = logging.getLogger(__name__)

_MISSING = object()

# ---------------------------------------------------------------------------------------------------------------
# Durations

_EN_DURATION_UNITS = {
    **dict.fromkeys(("h", "hr", "hrs", "hour", "hours"), 3600),
    **dict.fromkeys(("m", "min", "mins", "minute", "minutes"), 60),
    **dict.fromkeys(("s", "sec", "secs", "second", "seconds"), 1),
}
_KO_DURATION_UNITS = {"시간": 3600, "분": 60, "초": 1}
_KO_DURATION = re.compile(r"(?P<amount>\d+(?:\.\d+)?|[가-힣]+?)?\s*(?P<unit>시간|분|초)(?P<half>\s*반)?")
# Words around a Korean duration that do not change it: "5분 동안", "10분짜리", "30분 정도", "1시간 후".
_KO_DURATION_FILLER = re.compile(r"(동안|간|짜리|정도|쯤|후|뒤|만|이요|요)")
_ISO_DURATION = re.compile(r"^p(?:t)?(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m)?(?:(\d+(?:\.\d+)?)s)?$")
_CLOCK = re.compile(r"^(\d+):(\d{1,2})(?::(\d{1,2}))?$")


def parse_duration(value: Any) -> float | None:
    """Seconds in a duration given as seconds, clock text, ISO 8601, or spoken English or Korean; else None.

    ``"1:30"`` is 1 minute 30 seconds (a timer display), ``"1:30:00"`` an hour and a half.
    """
    number = parse_number(value)
    if number is not None:
        return number
    if not isinstance(value, str):
        return None
    text = unicodedata.normalize("NFKC", value).replace("\u2044", "/").strip().lower().rstrip(".")
    sign = 1.0
    if text.startswith(("-", "minus ", "마이너스")):
        sign, text = -1.0, re.sub(r"^(-|minus |마이너스)\s*", "", text)
    clock = _CLOCK.match(text)
    if clock:
        first, second, third = clock.groups()
        if third is None:
            return sign * (int(first) * 60 + int(second))
        return sign * (int(first) * 3600 + int(second) * 60 + int(third))
    iso = _ISO_DURATION.match(text)
    if iso and any(iso.groups()):
        hours, minutes, seconds = (float(g) if g else 0.0 for g in iso.groups())
        return sign * (hours * 3600 + minutes * 60 + seconds)
    parsed = _korean_duration(text) if re.search(r"[가-힣]", text) else _english_duration(text)
    return None if parsed is None else sign * parsed


def _english_duration(text: str) -> float | None:
    text = re.sub(r"(\d)([a-z])", r"\1 \2", text)  # "1h30m", "90s"
    text = re.sub(r"([a-z])(\d)", r"\1 \2", text)
    words = [w for w in re.sub(r"[-,]", " ", text).split() if w not in ("for", "about", "of", "just")]
    total, index, found = 0.0, 0, False
    while index < len(words):
        if words[index] in ("and", "plus"):
            index += 1
            continue
        amount, after = english_amount(words, index)
        if amount is None or after >= len(words):
            return None
        # "half an hour", "a quarter of an hour": the article after a fraction is not a second amount.
        if words[after] in ("a", "an") and after + 1 < len(words) and words[after + 1] in _EN_DURATION_UNITS:
            after += 1
        unit = _EN_DURATION_UNITS.get(words[after])
        if unit is None:
            return None
        total += amount * unit
        found = True
        index = after + 1
        # "a minute and a half", "an hour and a quarter"
        tail = words[index:index + 3]
        if len(tail) == 3 and tail[0] == "and" and tail[1] in ("a", "an") and tail[2] in EN_FRACTIONS:
            total += EN_FRACTIONS[tail[2]] * unit
            index += 3
    return total if found else None


def _korean_duration(text: str) -> float | None:
    total, found, consumed = 0.0, False, []
    for match in _KO_DURATION.finditer(text):
        amount_text = match.group("amount")
        amount = 1.0 if amount_text is None and match.group("unit") == "시간" else None
        if amount_text is not None:
            amount = parse_number(amount_text)
        if amount is None:
            return None
        unit = _KO_DURATION_UNITS[match.group("unit")]
        total += amount * unit + (0.5 * unit if match.group("half") else 0.0)
        found = True
        consumed.append(match.span())
    rest = text
    for start, end in reversed(consumed):
        rest = rest[:start] + " " + rest[end:]
    rest = _KO_DURATION_FILLER.sub(" ", rest)
    if re.sub(r"[\s,.!?]|and|그리고|하고", "", rest):
        return None
    return total if found else None


# ---------------------------------------------------------------------------------------------------------------
# Strings, units, quantities, booleans

_EDGE_PUNCTUATION = re.compile(r"^[\W_]+|[\W_]+$")
_LEADING_ARTICLES = re.compile(r"^(?:the|a|an|my|some|our)\s+")
_TRAILING_TIMER = re.compile(r"\s*(?:timer|타이머)$")

_UNIT_ALIASES: dict[str, str] = {}
for _canonical, _aliases in {
    "g": ["g", "gr", "gram", "grams", "gramme", "grammes", "그램", "그람"],
    "kg": ["kg", "kgs", "kilo", "kilos", "kilogram", "kilograms", "킬로", "킬로그램"],
    "ml": ["ml", "milliliter", "milliliters", "millilitre", "millilitres", "밀리리터", "미리리터", "밀리", "cc"],
    "l": ["l", "liter", "liters", "litre", "litres", "리터"],
    "cup": ["cup", "cups", "c", "컵"],
    "tbsp": ["tbsp", "tbs", "tbl", "tablespoon", "tablespoons", "큰술", "큰스푼", "테이블스푼", "밥숟가락"],
    "tsp": ["tsp", "teaspoon", "teaspoons", "작은술", "작은스푼", "티스푼", "찻숟가락"],
    "oz": ["oz", "ounce", "ounces", "온스"],
    "lb": ["lb", "lbs", "pound", "pounds", "파운드"],
    "C": ["°c", "celsius", "centigrade", "degrees celsius", "degree celsius", "degc", "섭씨", "섭씨온도", "도"],
    "F": ["f", "°f", "fahrenheit", "degrees fahrenheit", "degree fahrenheit", "degf", "화씨", "화씨온도"],
    "gas_mark": ["gas_mark", "gas mark", "gasmark", "gas", "가스 마크", "가스마크"],
}.items():
    for _alias in _aliases:
        _UNIT_ALIASES[_alias] = _canonical

# Counters that say "this many of the item" rather than a unit of measure.
_COUNTERS = {"개", "x", "piece", "pieces", "item", "items", "pcs", "pc"}


def normalise_text(value: Any) -> str | None:
    """NFC, case-folded, inner whitespace collapsed, surrounding whitespace and punctuation removed."""
    if value is None or isinstance(value, bool):
        return None
    text = unicodedata.normalize("NFC", str(value)).casefold()
    text = " ".join(text.split())
    return _EDGE_PUNCTUATION.sub("", text)


def normalise_item(value: Any) -> str | None:
    text = normalise_text(value)
    return None if text is None else _LEADING_ARTICLES.sub("", text)


def normalise_label(value: Any) -> str | None:
    text = normalise_item(value)
    return None if text is None else _TRAILING_TIMER.sub("", text)


def normalise_unit(value: Any) -> str | None:
    """The vocabulary's name for a unit (``g``, ``cup``, ``C``, ``gas_mark`` …), else the normalised text."""
    if value is None or isinstance(value, bool):
        return None
    raw = unicodedata.normalize("NFKC", str(value)).replace("º", "°").strip()
    if raw in ("C", "F"):
        return raw  # capital C is Celsius; a lower-case c is a cup
    text = " ".join(raw.casefold().split())
    text = re.sub(r"^[^\w°]+|[^\w°]+$", "", text).replace("° ", "°")
    for candidate in (text, text.replace(".", ""), re.sub(r"^degrees?\s+", "", text), text.replace("_", " ")):
        if candidate in _UNIT_ALIASES:
            return _UNIT_ALIASES[candidate]
    return text


def parse_quantity(value: Any) -> tuple[float | None, str]:
    """A shopping quantity as (number or None, unit): ``"two liters"`` → (2.0, "l"), ``"2개"`` → (2.0, "")."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value), ""
    text = normalise_text(value) or ""
    text = re.sub(r"(\d)([^\d\s.,/])", r"\1 \2", text)
    words = text.replace("-", " ").split()
    if words and words[0] == "a" and len(words) > 1 and words[1] == "dozen":
        return 12.0, " ".join(words[2:])
    number, index = None, 0
    if words and re.search(r"[가-힣]", words[0]) and parse_korean_number(words[0]) is None:
        match = re.match(r"^(.+?)(개|병|팩|봉지|봉|판|통|캔|묶음|단|줄|근|마리|송이|킬로|리터|그램)$", words[0])
        if match and parse_korean_number(match.group(1)) is not None:
            words = [match.group(1), match.group(2), *words[1:]]
    if words:
        if re.search(r"[가-힣]", words[0]):
            number, index = parse_korean_number(words[0]), 1
            if number is None:
                index = 0
        else:
            number, index = english_amount(words, 0)
    rest = [w for w in words[index:] if w not in ("of",)]
    if rest and rest[0] == "dozen" and number is not None:
        number, rest = number * 12, rest[1:]
    unit = " ".join(rest)
    unit = "" if unit in _COUNTERS else normalise_unit(unit) or ""
    if unit.endswith("s") and unit[:-1] in ("bottle", "carton", "can", "pack", "bag", "box", "bunch", "loaf", "jar"):
        unit = unit[:-1]
    return number, unit


def parse_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return bool(value)
    text = normalise_text(value)
    if text in ("true", "yes", "y", "on", "1", "all", "예", "네"):
        return True
    if text in ("false", "no", "n", "off", "0", "아니요", "아니"):
        return False
    return None


def _numbers_equal(a: float | None, b: float | None) -> bool:
    return a is not None and b is not None and abs(a - b) <= 1e-6 * max(1.0, abs(a), abs(b))


def _quantities_equal(expected: Any, actual: Any) -> bool:
    exp_number, exp_unit = parse_quantity(expected)
    act_number, act_unit = parse_quantity(actual)
    if exp_number is None:
        return normalise_text(expected) == normalise_text(actual)
    if not _numbers_equal(exp_number, act_number):
        return False
    return not exp_unit or exp_unit == act_unit


def _via(normaliser: Callable[[Any], Any]) -> Callable[[Any, Any], bool]:
    def equal(expected: Any, actual: Any) -> bool:
        left = normaliser(expected)
        return left is not None and left == normaliser(actual)

    return equal


MATCHERS: dict[str, Callable[[Any, Any], bool]] = {
    "duration": lambda e, a: _numbers_equal(parse_duration(e), parse_duration(a)),
    "number": lambda e, a: _numbers_equal(parse_number(e), parse_number(a)),
    "bool": lambda e, a: parse_bool(e) is not None and parse_bool(e) == parse_bool(a),
    "unit": _via(normalise_unit),
    "quantity": _quantities_equal,
    "label": _via(normalise_label),
    "item": _via(normalise_item),
    "text": _via(normalise_text),
}
"""How two values of each argument kind are compared: ``(expected, actual) -> bool``."""


def values_match(kind: str, expected: Any, actual: Any) -> bool:
    """Whether ``actual`` is ``expected`` (or one of its alternatives, when it is a list) for an argument kind."""
    alternatives = expected if isinstance(expected, list) else [expected]
    if actual is _MISSING or actual is None:  # JSON null is "not given"
        return kind == "bool" and any(parse_bool(option) is False for option in alternatives)
    matcher = MATCHERS.get(kind, MATCHERS["text"])
    return any(matcher(option, actual) for option in alternatives)


# ---------------------------------------------------------------------------------------------------------------
# Tool calls


@dataclass(frozen=True)
class ToolCall:
    """One tool call the assistant made."""

    name: str
    args: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class CallScore:
    """How a turn's tool calls compare with what the scenario expects."""

    right_tool: bool
    """The multiset of tool names equals the expected one (no tool at all when none is expected)."""
    right_args: bool
    """Right tools, and every expected argument matches its call's after normalisation."""
    detail: str
    """One line: ``ok``, or what was missing, extra or different."""


def _arg_mismatches(expected: ExpectedCall, actual: ToolCall, given_only: bool = False) -> list[str]:
    """The expected arguments ``actual`` does not match; with ``given_only``, only among those it gave."""
    kinds = TOOLS.get(expected.tool, {})
    problems = []
    for key, want in expected.args.items():
        got = actual.args.get(key, _MISSING)
        if given_only and (got is _MISSING or got is None):
            continue
        if not values_match(kinds.get(key, "text"), want, got):
            shown = "(missing)" if got is _MISSING else repr(got)
            problems.append(f"{expected.tool}.{key}: expected {want!r}, got {shown}")
    return problems


def _best_pairing(expected: list[ExpectedCall], actual: list[ToolCall]) -> list[str]:
    """The mismatches of the pairing of same-named calls that leaves the fewest (none when all match)."""
    best: list[str] | None = None
    # Same-named calls are few (two or three shopping_add), so trying every order is cheap.
    for order in itertools.permutations(actual):
        problems = [p for e, a in zip(expected, order) for p in _arg_mismatches(e, a)]
        if best is None or len(problems) < len(best):
            best = problems
        if not problems:
            break
    return best or []


def score_calls(expected: Sequence[ExpectedCall], actual: Sequence[ToolCall]) -> CallScore:
    """Compare one turn's tool calls with the scenario's expectation (see the module docstring)."""
    want = Counter(call.tool for call in expected)
    got = Counter(call.name for call in actual)
    if want != got:
        missing = ", ".join(sorted((want - got).elements()))
        extra = ", ".join(sorted((got - want).elements()))
        parts = []
        if not want:
            parts.append("expected no tool")
        if missing:
            parts.append(f"missing {missing}")
        if extra:
            parts.append(f"unexpected {extra}")
        return CallScore(False, False, "; ".join(parts))
    problems: list[str] = []
    for name in want:
        problems += _best_pairing([c for c in expected if c.tool == name], [c for c in actual if c.name == name])
    return CallScore(True, not problems, "; ".join(problems) or "ok")


def wrong_acts(expected: Sequence[ExpectedCall], acted: Sequence[ToolCall]) -> list[str]:
    """Acts with arguments the request did not have: each call that acted and matches no expected
    call of its tool in every argument it was given (the right tool with a misheard argument, or an
    acting tool nobody asked for).  An argument the request had and the act left out (a timer
    without its "pasta" label) is not wrong but incomplete (:func:`incomplete_acts`).  ``acted``
    holds only the calls that changed something.  Empty when every act was asked for."""
    wrong = []
    for call in acted:
        if not any(e.tool == call.name and not _arg_mismatches(e, call, given_only=True) for e in expected):
            wrong.append(_shown(call))
    return wrong


def incomplete_acts(expected: Sequence[ExpectedCall], acted: Sequence[ToolCall]) -> list[str]:
    """Acts that are not wrong (:func:`wrong_acts`) but left out an argument the request had: the
    right timer without its label, "lemons" without the three."""
    wrong = set(wrong_acts(expected, acted))
    return [
        _shown(call) for call in acted
        if _shown(call) not in wrong and not any(e.tool == call.name and not _arg_mismatches(e, call) for e in expected)
    ]


def _shown(call: ToolCall) -> str:
    args = ", ".join(f"{k}={v!r}" for k, v in call.args.items())
    return f"{call.name}({args})"


# ---------------------------------------------------------------------------------------------------------------
# Transcript error

def _english_words(text: str) -> list[str]:
    text = unicodedata.normalize("NFKC", text).lower().replace("’", "'").replace("‘", "'")
    text = re.sub(r"(?<=\d),(?=\d{3}\b)", "", text)
    text = re.sub(r"(?<=[a-z])-(?=[a-z])", " ", text)  # "twenty-five", "well-known"
    text = re.sub(r"[^\w\s'.]|(?<!\d)\.|\.(?!\d)", " ", text)
    words = [w.strip("'") for w in text.split()]
    out: list[str] = []
    run: list[str] = []

    def flush() -> None:
        # A run of number words becomes digits ("twenty five" → "25"), so either spelling scores alike.
        trailing = []
        while run and run[-1] == "and":
            trailing.append(run.pop())
        if run:
            value = parse_english_number(run)
            out.extend([_format_number(value)] if value is not None else run)
            run.clear()
        out.extend(trailing)

    for word in words:
        if not word:
            continue
        if word in EN_NUMBER_WORDS and word != "oh" or (word == "and" and run and run[-1] in ("hundred", "thousand")):
            run.append(word)
        else:
            flush()
            out.append(_SPELLINGS.get(word, word))
    flush()
    # "two and a half" is how Whisper's "2.5" is said.
    for i in range(len(out) - 3, -1, -1):
        if out[i + 1 : i + 4] == ["and", "a", "half"] and re.fullmatch(r"\d+", out[i]):
            out[i : i + 4] = [_format_number(int(out[i]) + 0.5)]
    return out


_SPELLINGS = {"ok": "okay"}
"""Spellings of the same word that a transcript may use either way."""


def _format_number(value: float) -> str:
    return str(int(value)) if value == int(value) else str(value)


def _edit_distance(ref: Sequence[str], hyp: Sequence[str]) -> int:
    row = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, 1):
        prev, row[0] = row[0], i
        for j, h in enumerate(hyp, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (r != h))
    return row[-1]


def word_error_rate(reference: str, hypothesis: str) -> float:
    """Word edits over reference words, after lower-casing, dropping punctuation and writing numbers as digits."""
    ref, hyp = _english_words(reference), _english_words(hypothesis)
    return _edit_distance(ref, hyp) / max(1, len(ref))


def _korean_chars(text: str) -> list[str]:
    text = unicodedata.normalize("NFC", text).casefold()
    return [ch for ch in text if not (ch.isspace() or unicodedata.category(ch)[0] in "PSZ")]


def char_error_rate(reference: str, hypothesis: str) -> float:
    """Character edits over reference characters, whitespace and punctuation removed (for Korean)."""
    ref, hyp = _korean_chars(reference), _korean_chars(hypothesis)
    return _edit_distance(ref, hyp) / max(1, len(ref))


def transcript_error(reference: str, hypothesis: str, language: str) -> float:
    """WER for English, CER for Korean: the figure each language is usually reported with."""
    return char_error_rate(reference, hypothesis) if language == "ko" else word_error_rate(reference, hypothesis)


# ---------------------------------------------------------------------------------------------------------------
# Dropped words


def transcript_words(text: str, language: str) -> list[str]:
    """The words a transcript is compared in: English normalised as for WER, Korean as its spaced words."""
    if language == "ko":
        return [w for w in ("".join(_korean_chars(w)) for w in text.split()) if w]
    return _english_words(text)


def dropped_words(reference: str, hypothesis: str, language: str = "en") -> tuple[int, int]:
    """Words of ``reference`` that ``hypothesis`` lost: (how many, how many of them at the very end).

    The two are aligned by edit distance; a reference word aligned to nothing is dropped (a
    different word in its place is a substitution, not a drop).  Among equally short alignments
    the one that drops later is preferred, so a lost ending is counted as one.
    """
    ref, hyp = transcript_words(reference, language), transcript_words(hypothesis, language)
    n, m = len(ref), len(hyp)
    # cost[i][j]: edits to turn ref[i:] into hyp[j:]
    cost = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n, -1, -1):
        for j in range(m, -1, -1):
            if i == n or j == m:
                cost[i][j] = (n - i) + (m - j)
            else:
                cost[i][j] = min(cost[i + 1][j + 1] + (ref[i] != hyp[j]), cost[i + 1][j] + 1, cost[i][j + 1] + 1)
    dropped, tail, i, j = 0, 0, 0, 0
    while i < n:
        if j < m and cost[i][j] == cost[i + 1][j + 1] + (ref[i] != hyp[j]):
            i, j, tail = i + 1, j + 1, 0
        elif j < m and cost[i][j] == cost[i][j + 1] + 1:
            j += 1
        else:
            i, dropped, tail = i + 1, dropped + 1, tail + 1
    return dropped, (tail if j >= m else 0)
