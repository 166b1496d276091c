"""Korean text to the phonemes a Kokoro voice reads: numbers spelled out, Hangul as pronounced, then IPA.

Kokoro has no Korean voice; its Japanese voices read Korean well enough when given Korean sounds
in symbols they know.  Three steps, each small and deterministic:

1. :func:`spell_numbers`: "감자 1개", "5분", "1.5리터" become "감자 한 개", "오분", "일 점 오리터"
   (native numbers before counters such as 개, 시간, 컵; Sino-Korean ones elsewhere).
2. :func:`pronounce`: spelling to sound by the standard pronunciation rules that need no
   dictionary: linking (읽어 → 일거), final neutralization, tensing (학교 → 학꾜), nasalization
   (국물 → 궁물), ㄹ assimilation (신라 → 실라), ㅎ aspiration and loss (좋아 → 조아), palatalization
   (같이 → 가치).  Rules that need to know a word's make-up (the ㄴ of 식용유) are left out.
3. :func:`to_ipa`: pronounced Hangul to IPA in Kokoro's symbols.  Lax stops are voiced between
   voiced sounds (부엌 [puʌk], 장보기 [ʨaŋboɡi]); a tense consonant after a vowel is held, as a
   Japanese voice holds a doubled consonant; ㅅ, ㄴ and ㅎ soften before i and y; a stop coda
   before ㅅ/ㅆ is a long s (몇 시 [mjʌs si]).
"""

from __future__ import annotations

import logging
import re

log = logging.getLogger(__name__)

_ONSETS = "ㄱㄲㄴㄷㄸㄹㅁㅂㅃㅅㅆㅇㅈㅉㅊㅋㅌㅍㅎ"
_VOWELS = "ㅏㅐㅑㅒㅓㅔㅕㅖㅗㅘㅙㅚㅛㅜㅝㅞㅟㅠㅡㅢㅣ"
_CODAS = ("", "ㄱ", "ㄲ", "ㄳ", "ㄴ", "ㄵ", "ㄶ", "ㄷ", "ㄹ", "ㄺ", "ㄻ", "ㄼ", "ㄽ", "ㄾ", "ㄿ", "ㅀ",
          "ㅁ", "ㅂ", "ㅄ", "ㅅ", "ㅆ", "ㅇ", "ㅈ", "ㅊ", "ㅋ", "ㅌ", "ㅍ", "ㅎ")
_FIRST, _LAST = 0xAC00, 0xD7A3

# ---- numbers ---------------------------------------------------------------------------------

_SINO_DIGITS = ("영", "일", "이", "삼", "사", "오", "육", "칠", "팔", "구")
_NATIVE_ONES = ("", "한", "두", "세", "네", "다섯", "여섯", "일곱", "여덟", "아홉")
_NATIVE_TENS = ("", "열", "스물", "서른", "마흔", "쉰", "예순", "일흔", "여든", "아흔")
NATIVE_COUNTERS = (
    "시간", "번째", "개", "시", "살", "마리", "명", "잔", "병", "봉지", "컵", "큰술", "작은술", "숟가락", "스푼",
    "모", "장", "알", "쪽", "줄", "그릇", "통", "캔", "단", "포기", "송이", "덩이", "가지", "군데", "번", "주먹", "꼬집",
)
"""Counters read with native numbers up to 99 ("한 개", "세 시", "두 컵"); everything else, and any
number from 100, is read the Sino-Korean way ("오 분", "백 개")."""
_SINO_WORDS = ("단계", "개월", "장보기", "번지", "시즌")
"""Words that begin like a native counter but take Sino-Korean numbers: 1단계 is 일 단계, not 한 단계."""
_UNITS = (
    ("°C", "도"), ("℃", "도"), ("°", "도"), ("%", "퍼센트"), ("kg", "킬로그램"), ("g", "그램"), ("ml", "밀리리터"),
    ("mL", "밀리리터"), ("L", "리터"), ("l", "리터"), ("cm", "센티미터"), ("mm", "밀리미터"),
)
_UNIT_RE = re.compile(r"(?<=\d)\s*(" + "|".join(re.escape(u) for u, _ in _UNITS) + r")(?![A-Za-z])")
_TIME_RE = re.compile(r"\b(\d{1,2}):(\d{2})\b")
_RANGE_RE = re.compile(r"(\d+(?:\.\d+)?)\s*[~∼\-–]\s*(?=\d)")
_NUMBER_RE = re.compile(r"(\d+(?:\.\d+)?)(\s*)(" + "|".join(sorted(NATIVE_COUNTERS, key=len, reverse=True)) + r")?")


def sino_number(n: int) -> str:
    """1 → 일, 15 → 십오, 2024 → 이천이십사, 10000 → 만, 0 → 영."""
    if n == 0:
        return "영"
    if n >= 10**16:  # no one says these; read digit by digit, as a long code is read
        return " ".join(_SINO_DIGITS[int(d)] for d in str(n))
    words = []
    for unit, name in ((10**12, "조"), (10**8, "억"), (10**4, "만"), (1, "")):
        group, n = divmod(n, unit)
        if group:
            # 만 and 천 alone, never 일만 or 일천; but 일억.
            words.append(("" if group == 1 and name == "만" else _below_10000(group)) + name)
    return "".join(words)


def _below_10000(n: int) -> str:
    out = ""
    for unit, name in ((1000, "천"), (100, "백"), (10, "십"), (1, "")):
        digit, n = divmod(n, unit)
        if digit:
            out += ("" if digit == 1 and name else _SINO_DIGITS[digit]) + name
    return out


def native_number(n: int) -> str:
    """1..99 as said before a counter: 1 → 한, 20 → 스무, 21 → 스물한; others Sino-Korean."""
    if not 0 < n < 100:
        return sino_number(n)
    tens, ones = divmod(n, 10)
    if n == 20:
        return "스무"
    return _NATIVE_TENS[tens] + _NATIVE_ONES[ones]


def _say_number(digits: str, counter: str) -> str:
    if "." in digits:
        whole, _, fraction = digits.partition(".")
        return sino_number(int(whole)) + " 점 " + "".join(_SINO_DIGITS[int(d)] for d in fraction)
    n = int(digits)
    if counter == "번째" and n == 1:
        return "첫"
    if counter == "월" and n in (6, 10):
        return "유" if n == 6 else "시"  # 유월, 시월
    return native_number(n) if counter in NATIVE_COUNTERS else sino_number(n)


def spell_numbers(text: str) -> str:
    """Digits, units and clock times as Korean words: "1시간 30분" → "한 시간 삼십분"."""
    text = re.sub(r"(?<=\d),(?=\d{3}(?!\d))", "", text)
    text = _UNIT_RE.sub(lambda m: dict(_UNITS)[m.group(1)], text)
    text = _TIME_RE.sub(lambda m: f"{m.group(1)}시" + (f" {int(m.group(2))}분" if int(m.group(2)) else ""), text)

    def counter_after(at: int) -> str:
        found = _NUMBER_RE.match(text, at)
        return found.group(3) or "" if found else ""

    def one(match: re.Match[str]) -> str:
        digits, counter = match.group(1), match.group(3) or ""
        before = text[max(0, match.start() - 3):match.start()]
        if before.endswith("분의 ") or before.endswith("분의"):
            counter_kind = ""  # 4분의 1컵: a fraction is Sino-Korean whatever follows
        elif counter and any(text.startswith(word, match.start(3)) for word in _SINO_WORDS):
            counter_kind = ""
        else:
            counter_kind = counter or text[match.end():match.end() + 1]
        spoken = _say_number(digits, counter_kind)
        return f"{spoken} {counter}" if counter else spoken

    # "2~3개" → "두 개에서 세 개": a range's first number takes the counter of the second.
    text = _RANGE_RE.sub(lambda m: f"{m.group(1)}{counter_after(m.end()) or ''}에서 ", text)
    return re.sub(r"\s+", " ", _NUMBER_RE.sub(one, text))


# ---- spelling to sound ----------------------------------------------------------------------

_NEUTRAL = {"ㄲ": "ㄱ", "ㅋ": "ㄱ", "ㄳ": "ㄱ", "ㄺ": "ㄱ", "ㅅ": "ㄷ", "ㅆ": "ㄷ", "ㅈ": "ㄷ", "ㅊ": "ㄷ", "ㅌ": "ㄷ",
            "ㅎ": "ㄷ", "ㅍ": "ㅂ", "ㄿ": "ㅂ", "ㅄ": "ㅂ", "ㄵ": "ㄴ", "ㄶ": "ㄴ", "ㄻ": "ㅁ", "ㄼ": "ㄹ", "ㄽ": "ㄹ",
            "ㄾ": "ㄹ", "ㅀ": "ㄹ"}
_SPLIT = {"ㄳ": ("ㄱ", "ㅆ"), "ㄵ": ("ㄴ", "ㅈ"), "ㄶ": ("ㄴ", "ㅎ"), "ㄺ": ("ㄹ", "ㄱ"), "ㄻ": ("ㄹ", "ㅁ"),
          "ㄼ": ("ㄹ", "ㅂ"), "ㄽ": ("ㄹ", "ㅆ"), "ㄾ": ("ㄹ", "ㅌ"), "ㄿ": ("ㄹ", "ㅍ"), "ㅀ": ("ㄹ", "ㅎ"),
          "ㅄ": ("ㅂ", "ㅆ")}
_TENSE = {"ㄱ": "ㄲ", "ㄷ": "ㄸ", "ㅂ": "ㅃ", "ㅅ": "ㅆ", "ㅈ": "ㅉ"}
_ASPIRATE = {"ㄱ": "ㅋ", "ㄷ": "ㅌ", "ㅂ": "ㅍ", "ㅈ": "ㅊ"}
_NASAL = {"ㄱ": "ㅇ", "ㄷ": "ㄴ", "ㅂ": "ㅁ"}
_STEM_CLUSTERS = ("ㄵ", "ㄻ", "ㄼ", "ㄾ")
"""Clusters found only at the end of verb stems, whose endings are tensed (앉고 → 안꼬, 넓게 → 널께)."""
_PLAIN_AFTER_PALATAL = {"ㅑ": "ㅏ", "ㅕ": "ㅓ", "ㅛ": "ㅗ", "ㅠ": "ㅜ", "ㅒ": "ㅐ", "ㅖ": "ㅔ"}
_MODIFIER_NOUNS = ("수", "거", "것", "걸", "게", "건", "겁", "줄")
"""Words tensed after a verb's ㄹ modifier: 할 수 → 할 쑤, 할 거예요 → 할 꺼예요."""

Syllable = list[str]
"""[onset, vowel, coda] in compatibility jamo; the onset ㅇ is silent and the coda may be ""."""


def decompose(word: str) -> list[Syllable]:
    """Hangul syllables to [onset, vowel, coda]; ``word`` must be all complete syllables."""
    out = []
    for ch in word:
        index = ord(ch) - _FIRST
        out.append([_ONSETS[index // 588], _VOWELS[index // 28 % 21], _CODAS[index % 28]])
    return out


def compose(syllables: list[Syllable]) -> str:
    return "".join(
        chr(_FIRST + (_ONSETS.index(on) * 21 + _VOWELS.index(vowel)) * 28 + _CODAS.index(coda))
        for on, vowel, coda in syllables
    )


def _join(a: Syllable, b: Syllable) -> None:
    """Apply the rules across the boundary between syllable ``a`` and the next, ``b``, in place."""
    coda, onset = a[2], b[0]
    if not coda:
        return
    if coda in ("ㅎ", "ㄶ", "ㅀ"):
        rest = {"ㅎ": "", "ㄶ": "ㄴ", "ㅀ": "ㄹ"}[coda]
        if onset in _ASPIRATE or onset == "ㅅ":  # 좋고 → 조코, 많다 → 만타, 좋소 → 조쏘
            a[2], b[0] = rest, _ASPIRATE.get(onset, "ㅆ")
            return
        if onset == "ㅇ":  # 좋아 → 조아, 많아 → 마나
            a[2] = rest
            if rest:
                a[2], b[0] = "", rest
            return
        coda = rest or ("ㄴ" if onset == "ㄴ" else "ㄷ")  # 놓는 → 논는, 않는 → 안는
    elif onset == "ㅎ":
        left, stop = _SPLIT.get(coda, ("", coda))
        if stop in ("ㅈ", "ㅊ"):
            b[0] = "ㅊ"  # 앉히다 → 안치다, 꽂히다 → 꼬치다
        elif _NEUTRAL.get(stop, stop) in _ASPIRATE:  # 축하 → 추카, 깨끗해 → 깨끄태, 밟히다 → 발피다
            b[0] = _ASPIRATE[_NEUTRAL.get(stop, stop)]
        else:
            return  # ㄴ, ㄹ, ㅁ, ㅇ before ㅎ: both stay (전화, 결혼)
        a[2] = left
        if b[0] == "ㅌ" and b[1] == "ㅣ":
            b[0] = "ㅊ"  # 굳히다 → 구치다
        return
    elif onset == "ㅇ":
        if coda == "ㅇ":
            return
        left, right = _SPLIT.get(coda, ("", coda))
        a[2], b[0] = left, right
        if right in ("ㄷ", "ㅌ") and b[1] == "ㅣ":
            b[0] = "ㅈ" if right == "ㄷ" else "ㅊ"  # 굳이 → 구지, 같이 → 가치
        return
    tensed = coda in _STEM_CLUSTERS
    if coda == "ㄺ" and onset == "ㄱ":
        coda, tensed = "ㄹ", True  # 맑게 → 말께
    coda = _NEUTRAL.get(coda, coda)
    a[2] = coda
    if onset == "ㄹ":
        if coda == "ㄴ":
            a[2] = "ㄹ"  # 신라 → 실라
        elif coda != "ㄹ":
            b[0] = "ㄴ"  # 종로 → 종노, 목록 → 몽녹
    elif onset == "ㄴ" and coda == "ㄹ":
        b[0] = "ㄹ"  # 설날 → 설랄, 뚫는 → 뚤른
    if b[0] in ("ㄴ", "ㅁ") and a[2] in _NASAL:
        a[2] = _NASAL[a[2]]  # 국물 → 궁물, 합니다 → 함니다
    elif (a[2] in _NASAL or tensed) and b[0] in _TENSE:
        b[0] = _TENSE[b[0]]  # 학교 → 학꾜, 앉고 → 안꼬
    elif a[2] == "ㄹ" and b[0] == "ㄱ" and b[1:] in (["ㅔ", ""], ["ㅓ", ""], ["ㅓ", "ㄹ"]):
        b[0] = "ㄲ"  # 할게요 → 할께요, 할거예요 → 할꺼예요


def _pronounce_word(word: str, after_modifier: bool) -> tuple[str, bool]:
    """One run of Hangul as pronounced, and whether it ends in ㄹ (a modifier that tenses the next)."""
    syllables = decompose(word)
    ends_in_rieul = syllables[-1][2] == "ㄹ"
    if after_modifier and compose(syllables[:1]) in _MODIFIER_NOUNS:
        syllables[0][0] = _TENSE.get(syllables[0][0], syllables[0][0])
    for a, b in zip(syllables, syllables[1:]):
        _join(a, b)
    last = syllables[-1]
    last[2] = _NEUTRAL.get(last[2], last[2])
    for i, syllable in enumerate(syllables):
        onset, vowel = syllable[0], syllable[1]
        if vowel == "ㅢ":
            if onset != "ㅇ":
                syllable[1] = "ㅣ"  # 희망 → 히망
            elif i and i == len(syllables) - 1:
                syllable[1] = "ㅔ"  # the particle 의: 우리의 → 우리에
            elif i:
                syllable[1] = "ㅣ"  # 주의 → 주이
        elif vowel == "ㅖ" and onset not in ("ㅇ", "ㄹ"):
            syllable[1] = "ㅔ"  # 시계 → 시게
        if onset in ("ㅈ", "ㅉ", "ㅊ") and syllable[1] in _PLAIN_AFTER_PALATAL:
            syllable[1] = _PLAIN_AFTER_PALATAL[syllable[1]]  # 가져 → 가저
    return compose(syllables), ends_in_rieul


_HANGUL_RUN = re.compile(f"[{chr(_FIRST)}-{chr(_LAST)}]+")


def pronounce(text: str) -> str:
    """Hangul as it is pronounced: "국물이 맑고 깨끗해요" → "궁무리 말꼬 깨끄태요"; other characters kept."""
    out: list[str] = []
    at = 0
    modifier = False
    for match in _HANGUL_RUN.finditer(text):
        gap = text[at:match.start()]
        out.append(gap)
        # Only a plain space keeps the ㄹ modifier's hold on the next word; punctuation ends it.
        word, modifier = _pronounce_word(match.group(), modifier and gap == " ")
        out.append(word)
        at = match.end()
    out.append(text[at:])
    return "".join(out)


# ---- sound to IPA ----------------------------------------------------------------------------

VOWEL_IPA = {
    "ㅏ": "a", "ㅐ": "e", "ㅑ": "ja", "ㅒ": "je", "ㅓ": "ʌ", "ㅔ": "e", "ㅕ": "jʌ", "ㅖ": "je", "ㅗ": "o", "ㅘ": "wa",
    "ㅙ": "we", "ㅚ": "we", "ㅛ": "jo", "ㅜ": "u", "ㅝ": "wʌ", "ㅞ": "we", "ㅟ": "wi", "ㅠ": "ju", "ㅡ": "ɯ", "ㅢ": "ɯi",
    "ㅣ": "i",
}
"""Vowels; ㅐ and ㅔ are one sound in today's Seoul speech."""
ONSET_IPA = {
    "ㄱ": "k", "ㄲ": "k", "ㄴ": "n", "ㄷ": "t", "ㄸ": "t", "ㄹ": "ɾ", "ㅁ": "m", "ㅂ": "p", "ㅃ": "p", "ㅅ": "s", "ㅆ": "s",
    "ㅇ": "", "ㅈ": "ʨ", "ㅉ": "ʨ", "ㅊ": "ʨʰ", "ㅋ": "kʰ", "ㅌ": "tʰ", "ㅍ": "pʰ", "ㅎ": "h",
}
"""Onsets at the start of a word; tense ones are told apart from lax ones by the hold before them."""
VOICED_IPA = {"ㄱ": "ɡ", "ㄷ": "d", "ㅂ": "b", "ㅈ": "ʥ"}
"""Lax stops between voiced sounds."""
PALATAL_IPA = {"ㅅ": "ɕ", "ㅆ": "ɕ", "ㄴ": "ɲ", "ㅎ": "ç"}
"""Before i and y."""
CODA_IPA = {"": "", "ㄱ": "k", "ㄴ": "n", "ㄷ": "t", "ㄹ": "l", "ㅁ": "m", "ㅂ": "p", "ㅇ": "ŋ"}
TENSE_ONSETS = frozenset("ㄲㄸㅃㅆㅉ")
HOLD = "ʔ"
"""Kokoro's Japanese voices hold the next consonant at this symbol (the small っ)."""
_SONORANT_CODAS = frozenset(("", "ㄴ", "ㄹ", "ㅁ", "ㅇ"))
_PUNCTUATION = {",": ",", ".": ".", "?": "?", "!": "!", ":": ",", ";": ",", "·": ",", "…": "…", "~": ",", "\n": "."}


def _syllable_ipa(syllable: Syllable, previous_coda: str | None) -> str:
    """One pronounced syllable; ``previous_coda`` is None at the start of a word."""
    onset, vowel, coda = syllable
    vowel_ipa = VOWEL_IPA[vowel]
    palatal = vowel_ipa[0] in "ij"
    if onset in PALATAL_IPA and palatal:
        consonant = PALATAL_IPA[onset]
    elif onset in VOICED_IPA and previous_coda is not None and previous_coda in _SONORANT_CODAS:
        consonant = VOICED_IPA[onset]
    elif onset == "ㄹ" and previous_coda == "ㄹ":
        consonant = "l"  # 빨리 [palli]: ㄹㄹ is a long l, not a tap
    else:
        consonant = ONSET_IPA[onset]
    if onset in TENSE_ONSETS and previous_coda == "":
        consonant = HOLD + consonant  # 아까 [aʔka]; after a stop coda the stop already holds it
    # A coda left unpronounced (to_ipa given spelling, not sound) is read as its neutral sound.
    return consonant + vowel_ipa + CODA_IPA[_NEUTRAL.get(coda, coda)]


def to_ipa(pronounced: str) -> str:
    """Pronounced Hangul (:func:`pronounce`'s output) to IPA in Kokoro's symbols.

    Latin letters and digits that are left pass through in lower case (Kokoro reads them as
    letters); punctuation that marks a pause is kept, anything else becomes a space.
    """
    out: list[str] = []
    at = 0
    for match in _HANGUL_RUN.finditer(pronounced):
        out.append(_other_ipa(pronounced[at:match.start()]))
        previous: str | None = None
        for syllable in decompose(match.group()):
            out.append(_syllable_ipa(syllable, previous))
            previous = syllable[2]
        at = match.end()
    out.append(_other_ipa(pronounced[at:]))
    text = re.sub(r" *([,.?!…]) *", r"\1 ", "".join(out))
    # A stop coda before ㅅ/ㅆ (몇 시 [멷씨]) is heard as a long s: Kokoro's t + ɕ is "ch", and
    # Whisper base wrote 몇 시야 as 며치야; s + s it writes as 몇 시야.
    text = re.sub(r"t( ?)[sɕ]", r"s\1s", text)
    return re.sub(r"\s+", " ", text).strip()


def _other_ipa(text: str) -> str:
    return "".join(_PUNCTUATION.get(ch, ch.lower() if ch.isascii() and ch.isalpha() else " ") for ch in text)


def phonemize(text: str) -> str:
    """Korean text to the phoneme string a Kokoro voice is fed: spell, pronounce, transcribe."""
    return to_ipa(pronounce(spell_numbers(text)))
