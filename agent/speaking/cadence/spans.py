"""Protected spans: stretches of a reply that are said as one piece and never split.

URLs and e-mail addresses, code (fenced, to its end even when never closed, and inline), quoted
titles, dates, times, numbers with decimals or thousands separators, numbers with their units,
abbreviations and emoji.  Most of them hold no boundary anyway (a boundary needs a space after
its mark); the ones that matter are those with spaces or punctuation inside: "2024. 5. 1.",
"May 5, 2024", “Eat, Pray, Love”, code.

The pattern set is compiled per kind of text (does it hold a backtick, an "@", a quote, a URL?),
because the expensive alternatives would otherwise be tried at every word of every reply.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import NamedTuple

QUOTE_MAX_CHARS = 60
"""A quote longer than this is speech, not a title: its inside may be split."""

QUOTE_PAIRS = {"“": "”", "‘": "’", "「": "」", "『": "』", "《": "》", "〈": "〉", "«": "»", '"': '"'}

_MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)[a-z]*\.?"
_NUMBER = r"(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+\.\d+|\d+)"
_UNIT = (
    r"(?:°\s?[CF]|℃|℉|%|(?:kg|g|mg|ml|mL|l|L|cm|mm|km|m|oz|lbs?|cups?|tbsp|tsp|kcal|cal|mins?|hrs?|h|sec|s)\b"
    r"|인분|그램|킬로그램|킬로|리터|밀리리터|도|분|초|시간|개|컵|큰술|작은술|스푼)"
)
# Every alternative sits behind a one-character look-ahead for how it can start, so that at most
# positions the whole set is rejected at once (the look-ahead is the cost of a set lookup).
_DIGIT_LED = (
    r"(?=\d)(?:"
    r"\d{4}[-/.]\d{1,2}[-/.]\d{1,2}\.?"  # 2024-05-01
    r"|\d{4}\.\s\d{1,2}\.\s\d{1,2}\.?"  # 2024. 5. 1.
    r"|\d{4}년\s?\d{1,2}월(?:\s?\d{1,2}일)?|\d{1,2}월\s?\d{1,2}일"
    r"|\d{1,2}/\d{1,2}(?:/\d{2,4})?"
    rf"|\d{{1,2}}\s{_MONTH}\s\d{{4}}"
    r"|\d{1,2}:\d{2}(?::\d{2})?(?:\s?(?:[ap]\.m|[AP]\.M|[ap]m|[AP]M)\b)?"  # 3:30 p.m
    rf"|{_NUMBER}\s?{_UNIT}|{_NUMBER})"
)
_MONTH_LED = rf"(?=[JFMASOND]){_MONTH}\s\d{{1,2}}(?:st|nd|rd|th)?(?:,\s\d{{4}})?"
_ABBREVIATION = r"(?=[A-Za-z])\b(?:e\.g|i\.e|etc|vs|Dr|Mr|Mrs|Ms|Prof|St|Jr|Sr|U\.S|U\.K|a\.m|p\.m|approx|tbsp|tsp|oz|lbs?|cf)\."
_EMOJI_CHAR = r"[\u2600-\u27BF\u2B00-\u2BFF\U0001F300-\U0001FAFF]"
_EMOJI_MOD = r"(?:\uFE0F|[\U0001F3FB-\U0001F3FF])?"
EMOJI = (
    # A flag is two regional indicators; one alone (a flag still being written, when the text
    # streams in) is an emoji too, so a stream cut between the two splits no differently.
    rf"(?:[\U0001F1E6-\U0001F1FF]{{1,2}}|[#*0-9]\uFE0F?\u20E3"
    rf"|{_EMOJI_CHAR}{_EMOJI_MOD}(?:\u200D{_EMOJI_CHAR}{_EMOJI_MOD})*)"
)
_EMOJI_LED = r"(?=[\u2600-\u27BF\u2B00-\u2BFF\U0001F1E6-\U0001FAFF#*0-9])" + EMOJI
_FENCE = r"```[\s\S]*?(?:```|\Z)"
_INLINE_CODE = r"`[^`\n]+`"
_URL = r"(?:https?://|www\.)[^\s<>\"'“”‘’]*[^\s<>\"'“”‘’.,;:!?)\]}…。]"
_EMAIL = r"[\w.+-]+@[\w-]+(?:\.[\w-]+)*\.[A-Za-z]{2,}"
_QUOTE = "|".join(
    rf"{re.escape(o)}[^{re.escape(c)}\n]{{1,{QUOTE_MAX_CHARS}}}{re.escape(c)}" for o, c in QUOTE_PAIRS.items()
)
_HAS_DIGIT = re.compile(r"\d")
_HAS_EMOJI = re.compile(r"[\u2600-\u27BF\u2B00-\u2BFF\U0001F1E6-\U0001FAFF\u20E3]")


class Span(NamedTuple):
    start: int
    end: int


@lru_cache(maxsize=64)
def _pattern(code: bool, email: bool, url: bool, quote: bool, digits: bool, emoji: bool) -> re.Pattern[str]:
    parts = []
    if code:
        parts += [_FENCE, _INLINE_CODE]
    if url:
        parts.append(_URL)
    if email:
        parts.append(_EMAIL)
    if quote:
        parts.append(_QUOTE)
    if digits:
        parts += [_DIGIT_LED, _MONTH_LED]
    parts.append(_ABBREVIATION)
    if emoji:
        parts.append(_EMOJI_LED)
    return re.compile("|".join(f"(?:{p})" for p in parts))


_OPENER = re.compile("[" + re.escape("".join(QUOTE_PAIRS)) + "`]")


def protected_spans(text: str, begin: int = 0) -> list[Span]:
    """The protected spans of ``text`` that start at or after ``begin``, in order.

    With ``begin`` > 0 the caller knows that no span runs across ``begin``: the matches found
    from there are then those a search from the start finds there.
    """
    pattern = _pattern(
        text.find("`", begin) >= 0,
        text.find("@", begin) >= 0,
        text.find("://", begin) >= 0 or text.find("www.", begin) >= 0,
        _OPENER.search(text, begin) is not None,
        _HAS_DIGIT.search(text, begin) is not None,
        _HAS_EMOJI.search(text, begin) is not None,
    )
    return [Span(m.start(), m.end()) for m in pattern.finditer(text, begin)]


def open_constructs(text: str, spans: list[Span], begin: int = 0) -> int | None:
    """Where something that may still become a protected span begins, if anything does.

    On a stream, a boundary after that point is not certain yet: an opening quote may still be
    closed within :data:`QUOTE_MAX_CHARS`, an inline code span by its backtick, and a span
    running to the end of the text may still grow.  Openers before ``begin`` are not looked at
    (the caller knows none of them can be open).
    """
    earliest: int | None = None
    end = len(text)
    for span in spans:
        if span.end == end:
            earliest = span.start
            break
    last_newline = text.rfind("\n")
    inside = iter(spans)
    span = next(inside, None)
    for match in _OPENER.finditer(text, begin, earliest if earliest is not None else end):
        i = match.start()
        while span is not None and span.end <= i:  # spans and openers both come in order
            span = next(inside, None)
        if (span is not None and span.start <= i) or last_newline > i:
            continue
        if match.group() == "`" or end - i - 1 <= QUOTE_MAX_CHARS:
            return i
    return earliest
