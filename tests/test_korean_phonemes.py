"""Korean text to Kokoro phonemes: numbers said as Koreans say them, spelling to sound, sound to IPA."""

from __future__ import annotations

import pytest

from audio.korean_phonemes import (
    native_number,
    phonemize,
    pronounce,
    sino_number,
    spell_numbers,
    to_ipa,
)

# Every symbol of Kokoro's vocabulary (kokoro-82m-ja's vocab.json), less the ones it only uses for English.
KOKORO_SYMBOLS = frozenset(
    ';:,.!?—…"()“” \u0303ʣʥʦʨᵝꭧAIOQSTWYᵊabcdefhijklmnopqrstuvwxyzɑɐɒæβɔɕçɖðʤəɚɛɜɟɡɥɨɪʝɯɰŋɳɲɴøɸθœɹɾɻʁɽʂʃʈʧʊʋʌɣɤχʎʒʔˈˌːʰʲ↓→↗↘ᵻ'
)


@pytest.mark.parametrize(("n", "sino"), [(0, "영"), (1, "일"), (10, "십"), (15, "십오"), (120, "백이십"), (356, "삼백오십육"),
                                         (1000, "천"), (2024, "이천이십사"), (10000, "만"), (12000, "만이천"), (30000, "삼만"),
                                         (100000000, "일억"), (3 * 10**12 + 5, "삼조오"), (12345678901234567, "일 이 삼 사 오 육 칠 팔 구 영 일 이 삼 사 오 육 칠")])
def test_sino_korean_numbers(n: int, sino: str) -> None:
    assert sino_number(n) == sino


@pytest.mark.parametrize(("n", "native"), [(1, "한"), (2, "두"), (3, "세"), (4, "네"), (10, "열"), (12, "열두"), (20, "스무"),
                                           (21, "스물한"), (99, "아흔아홉"), (100, "백")])
def test_native_numbers_before_a_counter(n: int, native: str) -> None:
    assert native_number(n) == native


@pytest.mark.parametrize(("text", "spoken"), [
    ("1시간 30분 타이머를 맞췄어요.", "한 시간 삼십분 타이머를 맞췄어요."),
    ("감자 1개, 된장 2큰술, 우유 2컵", "감자 한 개, 된장 두 큰술, 우유 두 컵"),
    ("오후 3시 5분이에요.", "오후 세 시 오분이에요."),
    ("15:05", "열다섯 시 오분"),
    ("우유 1.5리터", "우유 일 점 오리터"),
    ("4분의 1컵", "사분의 일 컵"),
    ("2~3개", "두 개에서 세 개"),
    ("2번째 타이머", "두 번째 타이머"),
    ("1번째", "첫 번째"),
    ("1단계예요. 3개월", "일 단계예요. 삼 개월"),
    ("6월 10일", "유월 십일"),
    ("12,000원", "만이천원"),
    ("180°C, 습도 45%", "백팔십도, 습도 사십오퍼센트"),
    ("밀가루 120g", "밀가루 백이십그램"),
    ("볼륨 5.", "볼륨 오."),
    ("숫자 없는 문장", "숫자 없는 문장"),
])
def test_numbers_are_spelled_the_way_they_are_said(text: str, spoken: str) -> None:
    assert spell_numbers(text) == spoken


@pytest.mark.parametrize(("spelled", "said"), [
    ("읽어", "일거"),            # linking: the second consonant of a cluster moves on
    ("없어요", "업써요"),        # ...and ㅅ moved on is tense
    ("좋아요", "조아요"),        # ㅎ is lost before a vowel
    ("많아", "마나"),
    ("좋고", "조코"),            # ...and aspirates the stop after it
    ("축하해요", "추카해요"),    # a stop before ㅎ aspirates
    ("깨끗해요", "깨끄태요"),
    ("같이", "가치"),            # palatalization
    ("굳이", "구지"),
    ("국물", "궁물"),            # nasalization
    ("합니다", "함니다"),
    ("목록", "몽녹"),            # ㄹ after a stop: ㄴ, which nasalizes the stop
    ("종로", "종노"),
    ("신라", "실라"),            # ㄴ and ㄹ: ㄹㄹ
    ("설날", "설랄"),
    ("학교", "학꾜"),            # tensing after a stop
    ("앉고", "안꼬"),            # ...and after a stem's cluster
    ("맑게", "말께"),
    ("볼게요", "볼께요"),        # the promise ending
    ("부엌", "부억"),            # a final consonant is one of seven
    ("값", "갑"),
    ("희망", "히망"),            # ㅢ after a consonant
    ("시계", "시게"),            # ㅖ after a consonant other than ㄹ
    ("가져요", "가저요"),        # no y after ㅈ
])
def test_pronunciation_rules(spelled: str, said: str) -> None:
    assert pronounce(spelled) == said


def test_a_modifier_tenses_the_next_word_only_across_a_plain_space() -> None:
    assert pronounce("할 수 있어요") == "할 쑤 이써요"
    assert pronounce("할 거예요") == "할 꺼예요"
    assert pronounce("잘, 수") == "잘, 수"


def test_pronounce_keeps_what_is_not_hangul() -> None:
    assert pronounce("hearth, 좋아요!") == "hearth, 조아요!"


@pytest.mark.parametrize(("said", "ipa"), [
    ("장보기", "ʨaŋboɡi"),       # a lax stop is voiced between voiced sounds, not at the start
    ("아까", "aʔka"),            # a tense consonant after a vowel is held
    ("학꾜", "hakkjo"),          # after a stop the stop holds it
    ("빨리", "palli"),           # ㄹㄹ is a long l
    ("시간", "ɕiɡan"),           # ㅅ before i
    ("추카해요", "ʨʰukʰahejo"),  # aspirates
    ("머거요", "mʌɡʌjo"),
    ("그릇", "kɯɾɯt"),
    ("멷 씨야", "mjʌs sija"),    # a stop before ㅆ is a long s (t + ɕ is heard as ch)
    ("읻씀니다", "issɯmɲida"),
])
def test_ipa(said: str, ipa: str) -> None:
    assert to_ipa(said) == ipa


def test_ipa_keeps_pauses_and_spaces_words() -> None:
    assert to_ipa("네,  조아요!  그럼…") == "ne, ʨoajo! kɯɾʌm…"


@pytest.mark.parametrize("text", [
    "죄송해요, 잘 못 알아들었어요.",
    "내일 서울 날씨: 구름 많음, 최저 3도, 최고 11도, 강수 확률 60퍼센트.",
    "된장찌개, 2인분이에요. 재료는 된장 2큰술, 감자 1개, 두부 반 모.",
    "꺼져 있는 동안 빵 타이머가 끝났어요. 3분 전이에요.",
    "희망, 의사, 뷔페, 왜요? 쥐, 훨씬, 괜찮아요! (hearth)",
])
def test_every_phoneme_is_one_kokoro_knows(text: str) -> None:
    phonemes = phonemize(text)
    assert phonemes
    assert set(phonemes) <= KOKORO_SYMBOLS, set(phonemes) - KOKORO_SYMBOLS


def test_every_syllable_has_phonemes() -> None:
    # All 11,172 syllables go through without a KeyError, and each gives a vowel.
    vowels = set("aeiouɯʌ")
    for code in range(0xAC00, 0xD7A4):
        assert set(to_ipa(pronounce(chr(code)))) & vowels, chr(code)
