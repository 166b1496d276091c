"""Where a reply may be cut into spoken units, found on text that may still be growing.

Three tiers, strongest first:

* **paragraph**: a line break after some text;
* **sentence**: ``. ! ? … 。`` (runs of them, closing quotes and brackets after) followed by a
  space; Korean sentence-final endings written without punctuation (-요, -니다, -다, -죠, -음),
  runs of ㅋㅋ/ㅎㅎ/ㅠㅠ, ^^, and a "~" after Hangul;
* **clause**: a comma, semicolon, colon or spaced dash followed by a space; the twelve Korean
  connective endings (:mod:`agent.speaking.cadence.korean`); and in English a space before "because",
  "although", "unless", "whereas" or "until".

Not boundaries: a full stop inside a number or a name (anything without a space after it),
after an abbreviation (Dr., e.g., vs.; etc. and U.S. only before a lowercase word), after a
one-letter initial, after a list number at the start of a line, between the parts of a date
("2024. 5. 1."); and nothing inside a protected span (:mod:`agent.speaking.cadence.spans`).

Every boundary is a pair of indices: ``mark``, just after the last character of the unit's
words, and ``cut``, where the next unit starts (after the spaces that follow).  Cutting only at
``cut`` keeps every character, so the units join back into the text exactly.

:func:`scan` works on a prefix of a stream.  It reports a boundary only once nothing that may
still arrive can change it, and says up to where its answer is complete (``settled``).
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from enum import IntEnum

from agent.speaking.cadence.korean import CONNECTIVE_ENDINGS, connective_tail, ends_sentence, final_tail, hangul_tail, is_jamo, is_syllable
from agent.speaking.cadence.spans import EMOJI, Span, open_constructs, protected_spans


class Tier(IntEnum):
    CLAUSE = 1
    SENTENCE = 2
    PARAGRAPH = 3


@dataclass(frozen=True, slots=True)
class Boundary:
    mark: int
    """Just after the unit's last non-space character."""
    cut: int
    """Where the next unit begins (the spaces after ``mark`` stay with the unit before)."""
    tier: Tier


@dataclass(frozen=True, slots=True)
class Scan:
    boundaries: tuple[Boundary, ...]
    """The boundaries that are certain, in order."""
    settled: int
    """Every boundary with ``mark < settled`` is in ``boundaries``; more text cannot add one there."""


NEVER_ENDS = frozenset({"mr", "mrs", "ms", "dr", "prof", "vs", "e.g", "i.e", "cf", "approx"})
"""Abbreviations that never end a sentence: a name or an example always follows."""
MAY_END = frozenset(
    {"etc", "st", "jr", "sr", "u.s", "u.k", "a.m", "p.m", "tbsp", "tsp", "oz", "lb", "lbs", "min", "hr", "hrs", "sec", "inc", "ltd", "co"}
)
"""Abbreviations that end a sentence only when the next word does not start in lowercase."""
CLAUSE_WORDS = ("because", "although", "unless", "whereas", "until")
"""English words that open a subordinate clause and are safe to cut before.  "so", "but" and
"and" are not here: without a comma before them they join words as often as clauses."""

_CLOSERS = "\"'”’)\\]}」』》〉"
_SENTENCE_PUNCT = ".!?…。！？‼⁇⁈⁉"
_SENTENCE = re.compile(rf"(?:[{re.escape(_SENTENCE_PUNCT)}]+|~+)[{_CLOSERS}]*\s+(?=\S)")
_NEWLINE = re.compile(r"(?<=\S)[ \t\r\f\v]*\n\s*(?=\S)")
_CLAUSE_MARK = re.compile(r"(?:[,，、;；]|[:：](?=\s)|(?<=\s)[—–])\s+(?=\S)")
# A Hangul word that may end a unit: only those ending as a sentence-final or a connective ending
# can, and the pattern lets only them through (the Korean rules then decide in Python).
# Each run is tried from its first character only (the look-behinds): from inside a run the match
# would end where the run ends all the same, and trying every position of a long run is quadratic.
_HANGUL_WORD = re.compile(
    rf"(?<![가-힣])([가-힣]{{2,}})(?:(?<=[요다죠임음당함줌짐감됨])|(?<={'|'.join(CONNECTIVE_ENDINGS)}))"
    rf"(?:\s+(?=\S)|(?=[ㄱ-ㅣ^]|{EMOJI}))"
)
_LAUGHTER_WORD = re.compile(rf"(?:(?<![ㄱ-ㅣ])[ㄱ-ㅣ]{{2,}}|(?<!\^)\^{{2,}}|(?<!;);{{2,}})[{_CLOSERS}]*\s+(?=\S)")
_TRAILER = re.compile(rf"(?:(?:{EMOJI})+|[ㄱ-ㅣ]{{2,}}|\^{{2,}}|\([^()\n]{{1,30}}\))[{_CLOSERS}]*")
_MAY_BECOME_TRAILER = re.compile(r"[ㄱ-ㅣ]+|\^+|\([^()\n]{0,30}")
_SPACES = re.compile(r"\s*")
_CLAUSE_WORD = re.compile(r"(?<=\s)(?:" + "|".join(CLAUSE_WORDS) + r")(?=[^\w'’])", re.IGNORECASE)
_WORD_BEFORE_DOT = re.compile(r"([A-Za-z][A-Za-z.]*)$")
_LIST_NUMBER = re.compile(r"(?:^|\n)[ \t]*\d{1,3}$")
_DATE_BEFORE = re.compile(r"\d{4}\.\s?\d{1,2}\.\s?\d{1,2}$")
_PENDING = -1
_SENTENCE_MARKS = _SENTENCE_PUNCT + "~"
_CLAUSE_MARKS = ",，、;；:：—–"
# Each clause word without its first letter, in both cases: a cheap test of whether one is there.
_CLAUSE_WORD_CORES = tuple(w[1:] for w in CLAUSE_WORDS) + tuple(w[1:].upper() for w in CLAUSE_WORDS)
_HAS_HANGUL = re.compile("[가-힣]")
_HAS_LAUGHTER = re.compile(r"[ㄱ-ㅣ^;]")


_SENTENCE_MARK = re.compile("[" + re.escape(_SENTENCE_MARKS) + "]")
_CLAUSE_MARK_CHAR = re.compile("[" + re.escape(_CLAUSE_MARKS) + "]")


def _has_any(text: str, needles, begin: int = 0) -> bool:
    return any(text.find(n, begin) >= 0 for n in needles)


def _words_end(text: str, at: int) -> int:
    """``len(text[:at].rstrip())`` without copying the text: just after the last non-space before ``at``."""
    while at > 0 and text[at - 1].isspace():
        at -= 1
    return at


def scan(text: str, start: int = 0, final: bool = False, language: str | None = None) -> Scan:
    """The boundaries of ``text[start:]``; ``final``: no more text will come.

    ``language`` ("en" or "ko") leaves out the other language's word rules; None keeps both.
    Nothing before ``start`` is looked at, so a unit is judged on its own text alone.
    """
    region = text[start:] if start else text
    found = scan_region(region, final, language).found
    settled = sys.maxsize if final else min(settled_end(region), found.settled) + start
    return Scan(tuple(Boundary(b.mark + start, b.cut + start, b.tier) for b in found.boundaries if b.mark + start < settled), settled)


def ends_sentence_here(text: str, language: str | None = None) -> bool:
    """Whether ``text`` ends a sentence (or a paragraph) should the next word begin a new one.

    A sentence end is only certain once the word after it is seen ("etc." before a lowercase
    word, "3." before a digit, laughter or an aside that belongs to the sentence before); this
    answers for a writer that has paused, with a capitalized word standing in for the next one.
    An abbreviation that never ends a sentence ("Dr."), an initial or a list number is no end.
    """
    words = _words_end(text, len(text))
    if words == 0:
        return False
    probe = text[:words] + " A"
    return any(b.mark == words and b.tier >= Tier.SENTENCE for b in scan(probe, 0, True, language).boundaries)


def whole_sentences(text: str, language: str | None = None) -> str:
    """``text`` up to the end of its last complete sentence; "" when it holds none.

    For a text a model stopped writing at its cap: "Hello, I'm here to help. You can find" is
    "Hello, I'm here to help.". A text that ends a sentence (:func:`ends_sentence_here`) is whole.
    """
    if ends_sentence_here(text, language):
        return text[: _words_end(text, len(text))]
    words = _words_end(text, len(text))
    marks = [b.mark for b in scan(text, 0, True, language).boundaries if b.tier >= Tier.SENTENCE and b.mark < words]
    return text[: _words_end(text, marks[-1])] if marks else ""


def sentence_ends(text: str) -> list[int]:
    """The marks of the sentence and paragraph boundaries in a whole text (for evaluation)."""
    return [b.mark for b in scan(text, 0, final=True).boundaries if b.tier >= Tier.SENTENCE]


def candidates(text: str, begin: int, content: int, language: str | None) -> list[tuple[int, int, Tier]]:
    """Every place from ``begin`` on that may be a boundary, as ``(mark, cut, tier)``, before protected
    spans and trailers are weighed; ``content``: where the text's words begin (nothing before counts).

    Each match ends by looking at the character after it, so a text that grows can only add
    candidates that start in its last word or the spaces after it.
    """
    raw: list[tuple[int, int, Tier]] = []

    def add(mark: int, cut: int, tier: Tier | None) -> None:
        if tier is not None and mark > content:
            raw.append((mark, cut, tier))

    # Each pass runs only when its marks are in the text at all: a cheap test, on every token.
    for m in _NEWLINE.finditer(text, begin) if text.find("\n", begin) >= 0 else ():
        add(m.start(), m.end(), Tier.PARAGRAPH)
    for m in _SENTENCE.finditer(text, begin) if _SENTENCE_MARK.search(text, begin) else ():
        mark = m.start() + len(m.group().rstrip())
        add(mark, m.end(), _sentence_tier(text, m.start(), mark, m.end()))
    for m in _CLAUSE_MARK.finditer(text, begin) if _CLAUSE_MARK_CHAR.search(text, begin) else ():
        mark = m.start() + len(m.group().rstrip())
        if not _after_abbreviation(text, m.start()):
            add(mark, m.end(), Tier.CLAUSE)
    korean = language != "en" and _HAS_HANGUL.search(text, begin) is not None
    for m in _HANGUL_WORD.finditer(text, begin) if korean else ():
        word = m.group(1)
        mark = m.start() + len(word)
        if final_tail(word, text[m.end()] if m.end() < len(text) else ""):
            add(mark, m.end(), Tier.SENTENCE)
        elif mark < m.end() and connective_tail(word):
            add(mark, m.end(), Tier.CLAUSE)
    for m in _LAUGHTER_WORD.finditer(text, begin) if _HAS_LAUGHTER.search(text, begin) else ():
        add(m.start() + len(m.group().rstrip()), m.end(), Tier.SENTENCE)
    for m in _CLAUSE_WORD.finditer(text, begin) if language != "ko" and _has_any(text, _CLAUSE_WORD_CORES, begin) else ():
        mark = _words_end(text, m.start())
        if mark > 0 and text[mark - 1].isalnum():
            add(mark, m.start(), Tier.CLAUSE)
    return raw


@dataclass(frozen=True, slots=True)
class Region:
    """What :func:`scan_region` found, with what a stream needs to resume scanning later."""

    found: Scan
    """The boundaries with ``mark`` below ``found.settled`` (here: the limit set by open
    constructs and pending trailers, not yet by the last word; see :func:`settled_end`)."""
    spans: tuple[Span, ...]
    """The protected spans from ``begin`` on (computed even when no boundary needed them)."""
    reach: tuple[tuple[int, int], ...]
    """Every candidate boundary as ``(mark, furthest index it depends on)``, sorted: a scan may
    resume at ``w`` only where no candidate with ``mark < w`` reaches ``w``."""
    candidates: bool
    """Whether any candidate boundary was seen (it decides whether spans are looked at)."""


def scan_region(
    text: str,
    final: bool,
    language: str | None,
    begin: int = 0,
    content: int | None = None,
    candidates_before: bool = False,
    with_spans: bool = False,
) -> Region:
    """The boundaries of ``text`` (those with ``mark`` at or after ``begin``), and where they stop being certain.

    ``begin`` > 0 resumes a scan of a growing text at a point :class:`~agent.speaking.cadence.split.UnitStream`
    chose so that nothing before it can change what is found after it; every pattern is matched
    on the whole string from ``begin`` (look-behinds see the text before it).  ``content``: where
    the text's first non-space character is (computed when not given); ``candidates_before``:
    whether a scan of ``text[:begin]`` saw a candidate boundary; ``with_spans``: find the
    protected spans even when no boundary needs them (a stream chooses where to resume by them).
    """
    if content is None:
        content = len(text) - len(text.lstrip())
    raw = candidates(text, begin, content, language)
    spans = protected_spans(text, begin) if raw or candidates_before or with_spans else []
    if not raw and not candidates_before:  # nothing to check against spans: they only ever rule boundaries out
        limit = sys.maxsize if final else _pending_span(text, [], begin)
        return Region(Scan((), limit), tuple(spans), (), False)
    limit = sys.maxsize if final else _pending_span(text, spans, begin)
    found: dict[int, Boundary] = {}
    reach: list[tuple[int, int]] = []
    walks: dict[int, tuple[int, int] | int | None] = {}
    for mark, cut, tier in raw:
        reach.append((mark, cut))
        if any(s.start < mark < s.end or s.start < cut < s.end for s in spans):
            continue
        if tier >= Tier.SENTENCE:
            absorbed = _absorb_trailer(text, mark, cut, final, walks)
            if absorbed == _PENDING:
                limit = min(limit, mark)
                reach[-1] = (mark, sys.maxsize)
                continue
            if absorbed is None:  # only the trailer follows: it ends the text with its sentence
                continue
            reach[-1] = (mark, absorbed[1])
            mark, cut = absorbed
        old = found.get(cut)
        if old is None or tier > old.tier:
            found[cut] = Boundary(mark, cut, tier)
    boundaries = sorted((b for b in found.values() if b.mark < limit), key=lambda b: b.mark)
    return Region(Scan(tuple(boundaries), limit), tuple(spans), tuple(sorted(reach)), True)


_INCOMING = -2
"""In a trailer walk's outcome: the mark the walk came in with (no trailer where it stopped)."""


def _absorb_trailer(
    text: str, mark: int, cut: int, final: bool, memo: dict[int, tuple[int, int] | int | None] | None = None
) -> tuple[int, int] | int | None:
    """Laughter, emoji or a short aside right after a sentence belong to it: "맛있어요 ㅎㅎ".

    Returns the boundary moved past them, ``_PENDING`` when what follows may still become one,
    or None when they run to the end of a finished text.  ``memo``, shared by the boundaries of
    one scan, keeps where each walk went: in "ㅋㅋ ㅋㅋ ㅋㅋ …" every sentence end would otherwise
    walk every trailer after it again.
    """
    steps: list[tuple[int, int]] = []  # (where a trailer starts, where it ends), in order
    at = cut
    while True:
        if memo is not None and at in memo:
            outcome = memo[at]
            break
        rest = _MAY_BECOME_TRAILER.fullmatch(text, at)
        trailer = _TRAILER.match(text, at)
        if trailer is None:
            outcome = _PENDING if rest is not None and not final else (_INCOMING, at)
            break
        if trailer.group().startswith("(") and _is_sentence(trailer.group().rstrip(_CLOSERS)[1:-1]):
            outcome = (_INCOMING, at)  # "(크림 소스면 … 아닙니다ㅋㅋ)" is a sentence of its own, not an aside
            break
        end = trailer.end()
        after = _SPACES.match(text, end).end()
        if after == len(text):
            outcome = _PENDING if not final else None
            break
        if after == end and not text[end].isalnum() and not final:
            outcome = _PENDING  # "👩" + ZWJ: the sequence may still be growing
            break
        steps.append((at, end))
        at = after
    if memo is not None:
        memo[at] = outcome
    for start, end in reversed(steps):
        if isinstance(outcome, tuple) and outcome[0] == _INCOMING:
            outcome = (end, outcome[1])  # the walk arrived there with this trailer's end as its mark
        if memo is not None:
            memo[start] = outcome
    if isinstance(outcome, tuple) and outcome[0] == _INCOMING:
        return mark, outcome[1]
    return outcome


def _pending_span(text: str, spans: list[Span], begin: int = 0) -> int:
    """Boundaries past the start of a span that may still form or grow are not certain yet."""
    opened = open_constructs(text, spans, begin)
    return sys.maxsize if opened is None else opened + 1


_LONGEST_CLAUSE_WORD = max(map(len, CLAUSE_WORDS))


def settled_end(text: str) -> int:
    """How far a growing text's boundaries are certain: up to its last complete word.

    It reads only the text's end (the trailing spaces, the last word and the spaces before it).
    """
    words_end = _words_end(text, len(text))
    if words_end < len(text):  # ends in spaces: the last word's boundary waits for what follows
        return words_end
    i = words_end
    while i > 0 and not text[i - 1].isspace():
        i -= 1
    before_end = _words_end(text, i)  # the word before the one still being written
    if before_end > 0 and text[before_end - 1].isalnum() and words_end - i <= _LONGEST_CLAUSE_WORD and _may_become_clause_word(text[i:]):
        return before_end  # "... it be" may yet become "... it because"
    return before_end + 1


def _may_become_clause_word(partial: str) -> bool:
    low = partial.lower()
    return any(w.startswith(low) for w in CLAUSE_WORDS)


def _is_sentence(text: str) -> bool:
    text = text.rstrip()
    return bool(text) and (text[-1] in ".!?…。！？" or is_jamo(text[-1]) or ends_sentence(text))


_PAUSING_SYLLABLES = frozenset("에이고데서만도는은을를가와과며면지")
"""Particles and endings after which "..." trails off inside a sentence: "때문에...", "안고.."."""


def _sentence_tier(text: str, at: int, mark: int, cut: int) -> Tier | None:
    punct = text[at:mark].rstrip(_CLOSERS)
    closers = text[at + len(punct) : mark]
    if ")" in closers and "(" in text[max(0, at - 20) : at].rsplit(")", 1)[-1].rsplit("\n", 1)[-1]:
        return None  # "(가능한!)", "(?)": an aside's own mark does not end the sentence around it
    trailing_off = punct.startswith("~") or punct.startswith("…") or punct.startswith("..")
    if trailing_off and at > 0 and (is_syllable(text[at - 1]) or is_jamo(text[at - 1])):
        # After Korean, "~" and "..." end a sentence only after a sentence-final ending;
        # after a connective ending or a particle they are a breath inside it.
        tail = hangul_tail(text[max(0, at - 12) : at])
        if is_jamo(text[at - 1]) or final_tail(tail) or "?" in punct or "!" in punct:
            return Tier.SENTENCE
        if punct.startswith("~"):
            return Tier.CLAUSE if connective_tail(tail) else None
        return Tier.CLAUSE if connective_tail(tail) or tail[-1:] in _PAUSING_SYLLABLES else Tier.SENTENCE
    if punct.startswith("~"):
        return None
    if punct != ".":
        return Tier.SENTENCE
    return Tier.SENTENCE if _full_stop_ends_sentence(text, at, cut) else None


def _full_stop_ends_sentence(text: str, at: int, cut: int) -> bool:
    if text[at - 1 : at].isdigit():
        # "2024. 5. 1." is a date, "1. Preheat" a list item: neither ends a sentence.
        if text[cut].isdigit() or _DATE_BEFORE.search(text, max(0, at - 14), at):
            return False
        return not _LIST_NUMBER.search(text, max(0, at - 8), at)
    word = _WORD_BEFORE_DOT.search(text, max(0, at - 16), at)
    if word is None:
        return True
    name = word.group(1).lower().rstrip(".")
    if name in NEVER_ENDS:
        return False
    if name in MAY_END:
        return not (text[cut].islower() or text[cut].isdigit())
    # An initial ("J. Smith") is a lone capital, not the end of "180°C." or "plan B2.".
    standalone = word.start() == 0 or text[word.start() - 1] in " \t\n(\"'“‘"
    return not (len(name) == 1 and word.group(1).isupper() and name != "i" and standalone)


def _after_abbreviation(text: str, at: int) -> bool:
    if at == 0 or text[at - 1] != ".":
        return False
    word = _WORD_BEFORE_DOT.search(text, max(0, at - 16), at)
    return word is not None and word.group(1).lower().rstrip(".") in NEVER_ENDS
