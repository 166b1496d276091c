"""Transcript in, handled answer out, over Wyoming on loopback with scripted answers."""

from __future__ import annotations

from wyoming.asr import Transcript
from wyoming.error import Error
from wyoming.handle import Handled, HandledChunk, HandledStart, NotHandled
from wyoming.info import Describe

from firmware_py.wyoming import offer_from
from tests.wyoming_kit import ScriptedAnswers, client, read_until, serving


async def test_transcript_is_answered_unit_by_unit_then_as_a_whole() -> None:
    answers = ScriptedAnswers(["Sure. ", "Your list has milk, ", "eggs and flour."])
    context = {"conversation_id": "abc"}
    async with serving(offer_from(answers=answers, answer_languages=["en"])) as (_, host, port):
        async with client(host, port) as c:
            await c.write_event(Transcript("what's on my list?", context=context, language="en").event())
            got = await read_until(c, "handled-stop")
    assert [e.type for e in got] == ["handled-start", "handled-chunk", "handled-chunk", "handled-chunk", "handled", "handled-stop"]
    assert HandledStart.from_event(got[0]).context == context
    assert [HandledChunk.from_event(e).text for e in got[1:4]] == answers.units
    handled = Handled.from_event(got[4])
    assert handled.text == "Sure. Your list has milk, eggs and flour."
    assert handled.context == context
    assert answers.asked == ["what's on my list?"]


async def test_nothing_said_or_nothing_answered_is_not_handled() -> None:
    silent = ScriptedAnswers([])
    async with serving(offer_from(answers=silent, answer_languages=["en"])) as (_, host, port):
        async with client(host, port) as c:
            await c.write_event(Transcript("   ").event())
            got = await read_until(c, "not-handled", "handled")
            assert [e.type for e in got] == ["not-handled"]
            assert silent.asked == []
            await c.write_event(Transcript("hmm").event())
            got = await read_until(c, "not-handled", "handled")
            assert [e.type for e in got] == ["not-handled"]
            assert NotHandled.from_event(got[0]).text
    assert silent.asked == ["hmm"]


async def test_a_failed_turn_is_an_error_and_the_connection_goes_on() -> None:
    failing = ScriptedAnswers(["Let me see. "], fail=True)
    async with serving(offer_from(answers=failing, answer_languages=["en"])) as (_, host, port):
        async with client(host, port) as c:
            await c.write_event(Transcript("what's the weather?").event())
            got = await read_until(c, "error")
            assert [e.type for e in got] == ["handled-start", "handled-chunk", "error"]
            error = Error.from_event(got[-1])
            assert error.code == "failed" and "the model crashed" in error.text
            await c.write_event(Describe().event())
            assert (await read_until(c, "info"))[-1].type == "info"


async def test_a_language_the_assistant_does_not_speak_is_refused() -> None:
    answers = ScriptedAnswers()
    async with serving(offer_from(answers=answers, answer_languages=["ko"])) as (_, host, port):
        async with client(host, port) as c:
            await c.write_event(Transcript("hello", language="en").event())
            assert Error.from_event((await read_until(c, "error"))[-1]).code == "unsupported-language"
            await c.write_event(Transcript("안녕", language="ko").event())
            got = await read_until(c, "handled-stop")
    assert Handled.from_event(got[-2]).text == "Sure. A five minute timer is running."
    assert answers.asked == ["안녕"]
