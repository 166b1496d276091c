"""Korean word endings that mark where a spoken unit may end, without a morphological analyser.

Two kinds, both read off the last syllables of an eojeol (a space-separated word):

* **connective endings** (the weak tier): the twelve endings of two or more syllables that no
  common noun ends with.  Bare -고 and -면 are left out on purpose: 사고, 라면, 화면, 표면 and
  수면 are nouns, and a split after them would cut a sentence in the middle of a thought.
  "-고," and "-면," still split, through the comma rule.
* **sentence-final endings written without punctuation** (the sentence tier), as people write
  Korean online and as models sometimes do: polite -요 after an open syllable, -니다, -죠, and
  the plain -다 / -음 forms after the syllables that only verbs and adjectives put there.

Each rule errs on the side of not splitting: a missed boundary costs a longer unit, a wrong one
cuts a word off from its sentence.
"""

from __future__ import annotations

import re

CONNECTIVE_ENDINGS = ("니까", "는데", "은데", "어서", "아서", "여서", "지만", "거든", "잖아", "면서", "라서", "길래")
"""The seed's twelve: two syllables or more, and no common noun ends with them."""

# Sentence adverbs that happen to end with a connective ending: splitting right after "하지만"
# would leave the conjunction hanging at the end of a unit instead of opening the next one.
_CONJUNCTIONS = frozenset({"하지만", "그렇지만", "그러니까", "그러면서", "그런데", "그래서", "그러나", "그리고", "왜냐하면"})

_BATCHIM_NONE = 0
_BATCHIM_NJ = 5  # ㄵ: 앉음
_BATCHIM_N = 4  # ㄴ: 한다, 간다, 는다
_BATCHIM_NH = 6  # ㄶ: 않다, 많음
_BATCHIM_LH = 15  # ㅀ: 싫음
_BATCHIM_BS = 18  # ㅄ: 없다, 없음
_BATCHIM_SS = 20  # ㅆ: 했다, 있다, 겠다, 있음
_BATCHIM_H = 27  # ㅎ: 좋다, 좋음

_DA_AFTER_BATCHIM = frozenset({_BATCHIM_N, _BATCHIM_NH, _BATCHIM_BS, _BATCHIM_SS, _BATCHIM_H})
_DA_AFTER_SYLLABLE = frozenset("이하되")
_EUM_AFTER_BATCHIM = frozenset({_BATCHIM_SS, _BATCHIM_BS, _BATCHIM_H, _BATCHIM_NH, _BATCHIM_LH, _BATCHIM_NJ})
# The written note style ends a sentence with a noun form: 해야함, 해줌, 가져감, 산만해짐.
_M_FORMS = frozenset("함줌짐감됨")
_M_AFTER = frozenset("해야여겨져려워와봐줘돼하")
_NOT_FINAL = frozenset({"주요", "개요", "수요", "소요", "사이다", "판다", "책임", "모임", "게임", "담임", "주임"})
"""Nouns that end the way a sentence does."""
_AUXILIARY_STARTS = "싶하보"
"""After "-다" these start the rest of the sentence: "했다 싶고", "있다 하겠음", "있다 보니"."""


_TAIL = re.compile("[가-힣]*\\Z")


def is_syllable(ch: str) -> bool:
    """A precomposed Hangul syllable (가 to 힣)."""
    return "가" <= ch <= "힣"


def is_jamo(ch: str) -> bool:
    """A lone Hangul letter (ㄱ to ㅣ), as in ㅋㅋ, ㅎㅎ, ㅠㅠ."""
    return "ㄱ" <= ch <= "ㅣ"


def batchim(syllable: str) -> int:
    """The final consonant's index (0 for an open syllable) of a precomposed Hangul syllable."""
    return (ord(syllable) - 0xAC00) % 28


def hangul_tail(word: str) -> str:
    """The run of Hangul syllables the word ends with ("" when it ends with anything else)."""
    match = _TAIL.search(word)
    return match.group() if match else ""


def connective_tail(tail: str) -> bool:
    """True when a run of Hangul syllables ends with one of the twelve connective endings, after a stem."""
    # Every ending is two syllables: a longer word has a stem before it.
    return len(tail) > 2 and tail.endswith(CONNECTIVE_ENDINGS) and tail not in _CONJUNCTIONS


def ends_sentence(word: str, next_char: str = "") -> bool:
    """True when ``word`` ends with a sentence-final ending that needs no full stop to be one.

    ``next_char``: the first character of the word after it, when there is one.
    """
    return final_tail(hangul_tail(word), next_char)


def final_tail(tail: str, next_char: str = "") -> bool:
    """:func:`ends_sentence` for a run of Hangul syllables."""
    if len(tail) < 2 or tail in _NOT_FINAL:
        return False
    last, before = tail[-1], tail[-2]
    if last == "요":
        return batchim(before) == _BATCHIM_NONE or before in "군걸"
    if last == "다":
        if next_char and next_char in _AUXILIARY_STARTS:
            return False
        return tail.endswith("니다") or batchim(before) in _DA_AFTER_BATCHIM or before in _DA_AFTER_SYLLABLE
    if last == "당":
        return tail.endswith("니당")
    if last == "죠" or last == "임":
        return True
    if last == "음":
        return batchim(before) in _EUM_AFTER_BATCHIM
    return last in _M_FORMS and before in _M_AFTER
