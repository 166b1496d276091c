"""The few words that stop hearth talking: "stop", "cancel", "그만", "잠깐" and their variants.

Said over a reply (or a ringing timer), a stop word ends it and starts nothing new; any other
speech is a request.  The recognizer's text is short and spelled in many ways ("Stop.", "STOP!",
"Stop, stop.", "Hearth, stop please", "그만 해 줘", "잠깐만요"), so matching is on normalised text:
case, punctuation and (in Korean) spacing do not count, and an utterance is a stop when it is
made only of stop phrases and the small words people put around them (a name, "please", "okay",
"좀", "제발").  Anything else in it makes it a request: "stop the timer" asks for something, and
"wait, how much salt?" is a question.

"never mind" and "됐어" are stops here: said while hearth talks they mean "stop talking", and
as a turn of their own the assistant would only answer "Okay." (the example bank's answer) after
the user has already heard what they wanted to cut.  Said when hearth is quiet they still reach
the assistant as a request, as before.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from functools import cache

STOP_PHRASES: dict[str, tuple[str, ...]] = {
    "en": (
        "stop", "stop it", "stop that", "stop talking", "stop now",
        "cancel", "cancel that", "cancel it",
        "never mind", "nevermind", "forget it",
        "wait", "wait a second", "wait a minute", "wait a moment", "hold on", "hang on", "hold it", "hold up",
        "one second", "one sec", "one moment", "just a second", "just a moment", "pause",
        "enough", "thats enough", "that is enough",
        "quiet", "be quiet", "shush", "hush", "shut up",
    ),
    "ko": (
        "그만", "그만해", "그만해요", "그만해줘", "그만해줘요", "그만해주세요", "그만하세요", "그만하자", "그만둬",
        "잠깐", "잠깐만", "잠깐만요", "잠깐요", "잠시만", "잠시만요",
        "기다려", "기다려요", "기다려줘", "기다려봐", "기다려주세요",
        "멈춰", "멈춰요", "멈춰줘", "멈춰봐", "멈춰라", "멈춰주세요",
        "취소", "취소해", "취소해줘", "취소해요", "취소해주세요",
        "됐어", "됐어요", "됐다",
        "조용히", "조용히해", "조용히해줘", "조용", "쉿", "닥쳐",
        "그만말해", "그만말해줘", "그만얘기해", "말하지마",
        "스톱", "스탑",
    ),
}
"""Per language, what stops hearth on its own.  English is matched word by word, Korean with the
spaces taken out (Whisper spaces "그만 해 줘" and "그만해줘" either way)."""

AROUND: dict[str, tuple[str, ...]] = {
    "en": (
        # hearth's name, and how a small recognizer hears it said quickly before "stop"
        "hearth", "heart", "hearts", "harth", "hart", "hard", "hurt", "hurts", "earth", "hi",
        "hey", "ok", "okay", "oh", "no", "please", "now", "just",
        "um", "uh", "ah", "hmm", "alright", "all right", "right", "thanks", "thank you", "so",
    ),
    "ko": ("아", "어", "야", "아니", "아니야", "제발", "이제", "좀", "네", "자", "하스", "하스야", "그냥"),
}
"""Words said around a stop phrase that do not make it a request ("hearth, stop please",
"아니 그만"); on their own they stop nothing."""

PROMPTS: dict[str, str] = {
    "en": "Stop. Stop it. Cancel. Never mind. Wait.",
    "ko": "그만. 그만해. 잠깐. 잠깐만. 멈춰. 취소.",
}
"""What the recognizer is told to expect of a short utterance over a reply.  Whisper hears a short
word badly on its own (Whisper base heard espeak-ng's "그만" as "굿마" without it, as "그만."
with it), and a word not in the prompt is heard as its neighbour ("잠깐" as "참가." while only
"잠깐만." was in it); a request is still heard as said."""

def stop_among(
    alternatives: Sequence[tuple[str, float]], margin: float, languages: tuple[str, ...] | None = None
) -> str | None:
    """The best-scored of a recognizer's n best (text, mean token log-probability; best first) that
    is a stop, if it scores within ``margin`` of the best; else None.

    A small recognizer hears a short word said over a reply as a near neighbour ("참가" for "잠깐",
    "놈쇼" for "멈춰") while keeping the word itself just behind in its beam.  An utterance this
    short that is close to a stop is better taken for one: the reply is already silent, and the
    other reading would start a turn on a word nobody said.  A request the recognizer is sure of
    leaves the stop phrases far behind, if they are in its beam at all.
    """
    if not alternatives:
        return None
    best = max(score for _, score in alternatives)
    near = [(score, text) for text, score in alternatives if best - score <= margin and is_stop(text, languages)]
    return max(near)[1] if near else None


def heard_stop(
    text: str, alternatives: Sequence[tuple[str, float]], margin: float, languages: tuple[str, ...] | None = None
) -> str | None:
    """What the reply listener takes a short decode for: the stop said (``text`` itself when it is
    a stop, else the n best's by :func:`stop_among`), or None for a request.  ``alternatives``
    empty: only ``text`` is read."""
    if is_stop(text, languages):
        return text
    return stop_among(alternatives, margin, languages)


_HANGUL = re.compile(r"[\uac00-\ud7a3\u1100-\u11ff\u3130-\u318f]")


def normalise(text: str) -> str:
    """Lower case, apostrophes dropped ("that's" → "thats"), other punctuation and symbols as
    spaces, spaces collapsed."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = re.sub(r"['’`´]", "", text)
    text = "".join(" " if unicodedata.category(c)[0] in "PSZC" else c for c in text)
    return " ".join(text.split())


_CALLED = re.compile(r"^\s*[A-Za-z]{1,8}\s*[.,!]\s+(?=\S)")
"""One short word said as a sentence of its own before the rest ("Hot. Stop.", "Hard. Stop."): how
a small recognizer writes hearth's name called out before a command, a different word each time."""


def is_stop(text: str, languages: tuple[str, ...] | None = None) -> bool:
    """Whether ``text`` (a recognizer's transcript) is only stop phrases and the words around them.

    ``languages`` limits the lists used (default: all of them; their scripts differ, so one never
    mistakes another's words).  Empty text is not a stop.  In English a single short word written
    as a sentence of its own before a stop phrase is taken for the name called ("Hot. Stop." is
    "hearth, stop"); before anything else it is not ("Hot. Stop the timer." is a request).
    """
    if (languages is None or "en" in languages) and (called := _CALLED.match(text)) and _is_stop(text[called.end():], languages):
        return True
    return _is_stop(text, languages)


def _is_stop(text: str, languages: tuple[str, ...] | None) -> bool:
    words = normalise(text).split()
    if not words:
        return False
    langs = tuple(STOP_PHRASES) if languages is None else languages
    # A mixed utterance ("stop, 그만") is split by script: each part must be stops and small words.
    latin = [w for w in words if not _HANGUL.search(w)]
    hangul = [w for w in words if _HANGUL.search(w)]
    found = False
    for part, lang, spaced in ((latin, "en", True), (hangul, "ko", False)):
        if not part:
            continue
        if lang not in langs:
            return False
        tokens: tuple[str, ...] = tuple(part) if spaced else tuple("".join(part))
        stops, around = _pieces(lang, spaced)
        matched = _covers(tokens, stops, around)
        if matched is None:
            return False
        found = found or matched
    return found


@cache
def _pieces(lang: str, spaced: bool) -> tuple[frozenset[tuple[str, ...]], frozenset[tuple[str, ...]]]:
    def split(phrase: str) -> tuple[str, ...]:
        return tuple(phrase.split()) if spaced else tuple(phrase.replace(" ", ""))

    return frozenset(split(p) for p in STOP_PHRASES.get(lang, ())), frozenset(split(p) for p in AROUND.get(lang, ()))


def _covers(tokens: tuple[str, ...], stops: frozenset[tuple[str, ...]], around: frozenset[tuple[str, ...]]) -> bool | None:
    """Whether ``tokens`` split into stop phrases and small words: None if they do not, else
    whether at least one piece is a stop phrase.  (Tokens are words, or Korean characters.)"""
    longest = max((len(p) for p in stops | around), default=0)
    # best[i]: None when tokens[:i] cannot be split; else whether a split of it has a stop phrase.
    best: list[bool | None] = [None] * (len(tokens) + 1)
    best[0] = False
    for end in range(1, len(tokens) + 1):
        for start in range(max(0, end - longest), end):
            if best[start] is None:
                continue
            piece = tokens[start:end]
            if piece in stops:
                best[end] = True
            elif piece in around and best[end] is None:
                best[end] = bool(best[start])
            elif piece in around:
                best[end] = bool(best[end]) or bool(best[start])
    return best[-1]
