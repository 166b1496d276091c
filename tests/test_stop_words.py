"""Stop words: what a short transcript said over a reply must be to stop hearth and start nothing."""

from __future__ import annotations

import pytest

from agent.listening.stop_words import AROUND, STOP_PHRASES, heard_stop, is_stop, normalise, stop_among


@pytest.mark.parametrize("text", [
    "stop", "Stop.", "STOP!", "Stop, stop.", "stop stop stop", "Stop it.", "stop it stop it", "Stop, please.",
    "Please stop.", "Hearth, stop.", "Hearth stop", "hey hearth, stop it", "Okay, stop.", "No, no, stop!",
    "Cancel.", "Cancel that.", "Never mind.", "Nevermind!", "never-mind", "That's enough.", "Wait.",
    "Hold on.", "Stop. Thank you.", "  stop  ", "Stop…", "«Stop»", "ＳＴＯＰ",
    # "hearth, stop" as Whisper tiny hears it said quickly over a reply
    "Hard. Stop.", "Hi. Stop.", "Heart, stop.", "Hurts, stop.", "Hot. Stop.", "Hot, stop it.", "Harp! Cancel.",
    "Hold it.", "Hold up!", "One second.", "Just a moment.", "Pause.", "Wait, wait, one sec.",
])
def test_english_stop_phrases_in_whispers_spellings_stop(text):
    assert is_stop(text)


@pytest.mark.parametrize("text", [
    "그만", "그만.", "그만!", "그만해", "그만 해", "그만해 줘", "그만 해 줘", "그만해줘요", "그만하세요", "잠깐", "잠깐만",
    "잠깐만요.", "잠시만요", "멈춰", "멈춰 주세요", "취소", "취소해 줘", "아니 그만해", "좀 그만해", "이제 그만", "제발 그만!",
    "그만 그만", "스톱", "됐어요.", "기다려", "잠깐 기다려", "잠깐만 기다려 줘", "그만 말해", "쉿!", "조용", "말하지 마",
])
def test_korean_stop_phrases_stop_whatever_the_spacing(text):
    assert is_stop(text)


@pytest.mark.parametrize("text", [
    "", " ", ".", "stop the timer", "cancel the pasta timer", "stop the oven timer please", "wait, how much salt?",
    "what's the next step", "don't stop", "stopwatch", "bus stop", "Thank you.", "you", "no", "please", "okay",
    "hearth", "never mind the salt, how long do I boil it", "stop and tell me the next step",
    "타이머 취소", "파스타 타이머 취소해 줘", "그만 먹어", "잠깐 다음 단계 뭐야", "아니", "좀", "네",
    "Stop. What's the time?", "그만. 몇 시야?", "hard", "hi", "hard boiled, stop", "don't stop",
    "Hot. Stop the timer.", "Hot. What's next?", "Hot.", "Salt and pepper. Stop.", "Hot stop",
    "pause the timer", "one second on the microwave", "hold it at a simmer", "기다려 타이머 몇 분?", "조용한 음악 틀어 줘",
    "말하지 마 그리고 타이머 꺼",
])
def test_anything_more_than_a_stop_phrase_is_a_request(text):
    assert not is_stop(text)


def test_a_stop_phrase_in_either_language_stops_and_a_mixed_utterance_must_be_all_stops():
    assert is_stop("Stop. 그만.")
    assert is_stop("스톱 stop")
    assert not is_stop("stop 타이머")
    assert not is_stop("그만 timer")


def test_languages_limit_the_lists():
    assert is_stop("그만", languages=("ko",))
    assert not is_stop("그만", languages=("en",))
    assert not is_stop("stop", languages=("ko",))
    assert is_stop("stop", languages=("en", "ko"))


def test_normalise_drops_case_punctuation_and_apostrophes():
    assert normalise("  That's   ENOUGH!!  ") == "thats enough"
    assert normalise("Stop, stop.") == "stop stop"
    assert normalise("그만 해 줘!") == "그만 해 줘"
    assert normalise("never-mind") == "never mind"


def test_no_small_word_is_a_stop_on_its_own_and_every_list_is_normalised():
    for lang, words in AROUND.items():
        for word in words:
            assert not is_stop(word), (lang, word)
    for lang, phrases in {**STOP_PHRASES, **AROUND}.items():
        for phrase in phrases:
            assert normalise(phrase) == phrase, (lang, phrase)


def test_stop_among_takes_a_stop_within_the_margin_of_the_best():
    assert stop_among([("참가.", -0.84), ("잠깐.", -1.44), ("참고.", -1.6)], 0.75) == "잠깐."
    assert stop_among([("Stop.", -0.2), ("Stop!", -0.3)], 0.75) == "Stop."  # the best itself
    # The best-scored stop wins, in whatever order the n best come.
    assert stop_among([("멈춰.", -1.2), ("놈쇼.", -0.9), ("그만.", -1.0)], 0.75) == "그만."


def test_stop_among_leaves_a_stop_beyond_the_margin_and_requests_alone():
    assert stop_among([("도마.", -0.42), ("그만.", -1.9)], 0.75) is None
    assert stop_among([("Stop the timer.", -0.3), ("Stop. The timer.", -0.5)], 0.75) is None
    assert stop_among([], 0.75) is None
    assert stop_among([("그만.", -0.5)], 0.75, languages=("en",)) is None


def test_heard_stop_is_the_text_when_it_is_a_stop_else_the_n_bests():
    assert heard_stop("Stop.", [("Stop.", -0.2)], 0.75) == "Stop."
    assert heard_stop("참가.", [("참가.", -0.84), ("잠깐.", -1.44)], 0.75) == "잠깐."
    assert heard_stop("참가.", (), 0.75) is None
    assert heard_stop("도마.", [("도마.", -0.42), ("그만.", -1.9)], 0.75) is None
