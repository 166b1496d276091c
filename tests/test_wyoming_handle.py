"""Transcript in, handled answer out, over Wyoming on loopback with scripted answers."""

from __future__ import annotations

import contextlib

import pytest
from wyoming.asr import Transcript
from wyoming.error import Error
from wyoming.handle import Handled, HandledChunk, HandledStart, NotHandled
from wyoming.info import Describe

from agent.text_turns import TextTurns
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


async def _interrupted_then_answered(assistant, chat, chat2) -> None:
    """The first turn was closed while its model was still writing; the next one was answered."""
    assert chat.closed_early == 1 and not chat.gate.is_set()  # closed, not left to finish
    ends = [e.status for e in assistant.record.entries() if e.role == "turn"]
    assert ends == ["interrupted", "answered"], ends
    spoken = [(e.text, e.status) for e in assistant.record.entries() if e.role == "assistant"]
    assert ("It is noon.", "told") in spoken and ("Yes.", "told") in spoken
    assert chat2.calls  # the second turn reached the model


async def test_a_failed_write_after_a_unit_closes_the_turn_at_once() -> None:
    from firmware_py.wyoming.handle import answer
    from tests.test_text_turns import GatedChat, _assistant

    chat = GatedChat(["It is noon. ", "Enjoy "], ["your lunch."])
    assistant = _assistant(chat)
    texts = TextTurns(assistant)
    written: list[str] = []

    async def write(event) -> None:
        written.append(event.type)
        if event.type == "handled-chunk":
            raise ConnectionResetError("the client is gone")

    with pytest.raises(ConnectionResetError):
        await answer(texts, "what time is it", None, write)
    assert written == ["handled-start", "handled-chunk"]
    # No garbage collection in between: the turn ended when the write failed.
    assert assistant.current is None
    chat2 = GatedChat(["Yes."], [])
    chat2.gate.set()
    assistant.deps.chat = chat2
    units = []
    async with contextlib.aclosing(texts.answer_text("are you there")) as stream:
        async for unit in stream:
            units.append(unit)
    assert units == ["Yes."]
    await _interrupted_then_answered(assistant, chat, chat2)


async def test_a_client_gone_after_the_first_chunk_frees_the_assistant_for_the_next_turn() -> None:
    from tests.test_text_turns import GatedChat, _assistant

    chat = GatedChat(["It is noon. ", "Enjoy "], ["your lunch."])
    assistant = _assistant(chat)
    texts = TextTurns(assistant)
    async with serving(offer_from(answers=texts, answer_languages=["en"])) as (_, host, port):
        async with client(host, port) as c:
            await c.write_event(Transcript("what time is it", language="en").event())
            got = await read_until(c, "handled-chunk")
            assert HandledChunk.from_event(got[-1]).text == "It is noon."
        # Gone.  The first turn's model never gets past its gate, so this is answered only if
        # that turn was closed when its client went away.
        chat2 = GatedChat(["Yes."], [])
        chat2.gate.set()
        assistant.deps.chat = chat2
        async with client(host, port) as c:
            await c.write_event(Transcript("are you there", language="en").event())
            got = await read_until(c, "handled-stop")
        assert Handled.from_event(got[-2]).text == "Yes."
    await assistant.until_idle()
    await _interrupted_then_answered(assistant, chat, chat2)


async def test_control_characters_in_a_transcript_never_reach_the_assistant() -> None:
    answers = ScriptedAnswers(["Hello. "])
    async with serving(offer_from(answers=answers, answer_languages=["en"])) as (_, host, port):
        async with client(host, port) as c:
            await c.write_event(Transcript("hello \x1b[2J\x1b]0;pwned\x07 there\u202e").event())
            await read_until(c, "handled-stop")
    # The escape sequences would clear and retitle the terminal of whoever reads `hearth history`.
    assert answers.asked == ["hello [2J]0;pwned there"]
