"""Announcements (a timer ringing): a chime and a line, never over a turn, cut short by a press."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from agent.assistant import Assistant
from agent.listening.listen import Press
from audio.chime import chime
from audio.wav import WavFileMicrophone
from tests.fakes import speech_like
from tests.test_turn import make_deps


def test_the_chime_starts_and_ends_quietly():
    sound = chime(16000)
    assert 0.3 < sound.duration < 0.4
    assert np.abs(sound.samples).max() <= 0.3
    assert abs(sound.samples[0]) < 0.01 and abs(sound.samples[-1]) < 0.05


async def test_an_announcement_plays_the_chime_then_the_line():
    deps = make_deps()
    assistant = Assistant(deps)
    heard = await assistant.announce("Pasta timer is done.", chime(16000))
    assert heard
    assert deps.synthesizer.texts == ["Pasta timer is done."]
    played = deps.speaker.recording()
    assert played.duration == pytest.approx(chime(16000).duration + len("Pasta timer is done.") * 0.02, abs=0.05)


async def test_an_announcement_waits_for_the_turn_in_progress_to_finish():
    deps = make_deps(reply="It is noon. Enjoy your lunch.")
    assistant = Assistant(deps)
    press = Press()
    press.release()
    turn = assistant.start_turn(WavFileMicrophone(speech_like(0.5), realtime=True).chunks(), press)
    ring = asyncio.create_task(assistant.announce("Timer is done.", chime(16000)))
    result = await turn.wait()
    assert await ring
    # The whole answer was heard, then the announcement: nothing cut off mid-word.
    assert result.spoken == ["It is noon.", "Enjoy your lunch."]
    assert deps.synthesizer.texts == ["It is noon.", "Enjoy your lunch.", "Timer is done."]
    assert deps.speaker.interruptions == []


async def test_a_press_during_an_announcement_silences_it_and_listens():
    deps = make_deps()
    deps.synthesizer.seconds_per_char = 0.2  # a long line, so the press lands in the middle
    assistant = Assistant(deps)
    ring = asyncio.create_task(assistant.announce("Your pasta timer is done, and so is the rice.", chime(16000)))
    await asyncio.sleep(0.6)
    press = Press()
    press.release()
    turn = assistant.start_turn(WavFileMicrophone(speech_like(0.5)).chunks(), press)
    assert not await ring
    assert len(deps.speaker.interruptions) == 1
    await turn.wait()


def test_a_question_left_open_waits_a_minute_and_no_longer_than_the_conversation(monkeypatch):
    """"장보기 목록에 뭘 넣을까요?" and, half an hour later, "타이머 10분 맞춰 줘": the later request
    is a request, not the item."""
    import agent.assistant as assistant_module
    from agent.deciding.confirm import PendingAct
    from agent.deciding.tool_calls import ToolPlan

    now = [100.0]
    monkeypatch.setattr(assistant_module.time, "monotonic", lambda: now[0])
    assistant = Assistant(make_deps())
    asked = PendingAct(ToolPlan("", "shopping_add", {}), "item")
    assistant.pending, assistant._pending_at = asked, now[0]
    now[0] += assistant_module.ANSWER_WINDOW_S - 1
    assert assistant._take_pending() is asked
    assistant.pending, assistant._pending_at = asked, now[0]
    now[0] += assistant_module.ANSWER_WINDOW_S + 1
    assert assistant._take_pending() is None
    assistant.pending = asked
    assistant.forget()
    assert assistant.pending is None
