"""The Kiwi check of Korean replies (bench/suites/korean_replies.py): what it lets through and not."""

from __future__ import annotations

import kiwipiepy  # the bench extra (pip install -e '.[bench]'); missing, these tests fail
import pytest

from bench.suites.korean_replies import check_reply, summarise, writer


@pytest.fixture(scope="module")
def kiwi():
    return kiwipiepy.Kiwi()


@pytest.mark.parametrize("reply", [
    "타이머를 10분으로 맞췄어요.",
    "장보기 목록에 우유를 추가했어요. 또 필요한 거 있어요?",
    "오늘 일산은 맑고 기온은 12도예요",  # no full stop: the ending makes the sentence
    "천만에요.",  # an interjection is a reply of its own
])
def test_korean_sentences_pass(kiwi, reply):
    assert check_reply(kiwi, reply).passes


@pytest.mark.parametrize(("reply", "problem"), [
    ("파스타 타이머 10분.", "no sentence-final ending"),
    ("Timer set for 10 minutes.", "not Korean"),
    ("치킨, 야채, 해당방은 문교이 고르는 평역", "no sentence-final ending"),  # what a mishearing once made of the demo
    ("뷁쉙 퓇릵이에요.", "unknown to Kiwi"),
])
def test_what_is_not_a_korean_sentence_fails(kiwi, reply, problem):
    verdict = check_reply(kiwi, reply)
    assert not verdict.passes
    assert any(p.startswith(problem) for p in verdict.problems), verdict.problems


def test_a_word_the_user_said_is_not_unknown(kiwi):
    assert not check_reply(kiwi, "뷁쉙을 목록에 넣었어요.").passes
    assert check_reply(kiwi, "뷁쉙을 목록에 넣었어요.", said="뷁쉙 추가해 줘").passes


def test_writer_and_summary():
    assert writer("knowledge", {"tool_start"}) == "reasoner"
    assert writer(None, {"tool_start", "llm_start"}) == "template"
    assert writer(None, {"llm_start", "first_token"}) == "talker"
    assert writer(None, {"llm_start", "template"}) == "template"
    rows = [
        {"suite": "ko-kitchen", "reply": "맞췄어요.", "writer": "template", "passes": True},
        {"suite": "ko-kitchen", "reply": "10분.", "writer": "template", "passes": False},
        {"suite": "ko-fresh", "reply": "", "writer": "talker", "passes": True},
    ]
    s = summarise(rows)
    assert s["all"] == {"replies": 2, "pass": 1, "share": 0.5}
    assert s["by_writer"]["template"]["share"] == 0.5 and s["by_writer"]["talker"]["replies"] == 0
    assert s["silent_turns"] == 1
