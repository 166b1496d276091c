"""Text turns: words in, the answer's units out as Cadence cuts them, through the same assistant."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import pytest

from agent.assistant import Assistant
from agent.deciding.tool_calls import ToolPlan
from agent.deciding.tool_use import ToolUse, pretool_line
from agent.events import Event, StateChanged, ToolCalled, TranscriptFinal, UnitSpoken
from agent.listening.listen import Press
from agent.model.llm import ChatMessage
from agent.text_turns import TextTurns
from audio.wav import WavFileMicrophone, WavFileSpeaker
from firmware_py.config import HearthConfig, ToolsConfig
from firmware_py.home_tools import HomeTools, open_home_tools
from tests.fakes import ScriptedRecognizer, ToneSynthesizer, say, speech_like
from tests.test_heartbeat import ScriptedPlanner
from tests.test_turn import make_deps


class GatedChat:
    """Streams ``before``, waits for ``gate``, then streams ``after``; notes where it is."""

    def __init__(self, before: Sequence[str], after: Sequence[str]) -> None:
        self.before, self.after = list(before), list(after)
        self.gate = asyncio.Event()
        self.waiting = asyncio.Event()
        self.closed_early = 0
        self.calls: list[list[ChatMessage]] = []

    async def warm(self, system_prompt: str) -> None:
        pass

    async def stream(self, messages: Sequence[ChatMessage], max_tokens: int | None = None) -> AsyncIterator[str]:
        self.calls.append(list(messages))
        done = False
        try:
            for piece in self.before:
                yield piece
            self.waiting.set()
            await self.gate.wait()
            for piece in self.after:
                yield piece
            done = True
        finally:
            if not done:
                self.closed_early += 1


def _assistant(chat, events: list[Event] | None = None, speaker: WavFileSpeaker | None = None) -> Assistant:
    deps = make_deps(chat=chat, speaker=speaker or WavFileSpeaker(16000), synthesizer=ToneSynthesizer(seconds_per_char=0.001))
    return Assistant(deps, on_event=events.append if events is not None else lambda _e: None)


async def _all(units: AsyncIterator[str]) -> list[str]:
    return [unit async for unit in units]


async def test_units_come_out_as_cadence_cuts_them_before_the_reply_is_finished():
    chat = GatedChat(["It is noon. ", "Enjoy "], ["your lunch. ", "And drink some water."])
    speaker = WavFileSpeaker(16000)
    events: list[Event] = []
    assistant = _assistant(chat, events, speaker)
    texts = TextTurns(assistant)
    stream = texts.answer_text("what time is it")
    first = await anext(stream)
    assert first == "It is noon."
    assert chat.waiting.is_set() and not chat.gate.is_set()  # the model is still writing the rest
    chat.gate.set()
    rest = await _all(stream)
    assert [first, *rest] == ["It is noon.", "Enjoy your lunch.", "And drink some water."]
    assert speaker.recording().samples.size == 0  # nothing played in the kitchen
    assert [e.text for e in events if isinstance(e, UnitSpoken)] == [first, *rest]
    assert [e for e in events if isinstance(e, TranscriptFinal)] == [TranscriptFinal("what time is it", typed=True)]
    assert not any(isinstance(e, StateChanged) for e in events)  # the kitchen's light stays as it was
    entries = assistant.record.entries()
    assert [(e.role, e.text, e.status) for e in entries] == [
        ("user", "what time is it", "typed"),  # given as text, not heard in the kitchen
        # Told to whoever asked, as text: nothing was played, so nothing is "spoken".
        ("assistant", "It is noon.", "told"),
        ("assistant", "Enjoy your lunch.", "told"),
        ("assistant", "And drink some water.", "told"),
        ("turn", "", "answered"),
    ]
    assert assistant.results[-1].transcript == "what time is it"
    assert assistant.current is None


async def test_empty_text_yields_nothing_and_starts_no_turn():
    chat = GatedChat(["Hello."], [])
    assistant = _assistant(chat)
    texts = TextTurns(assistant)
    assert await _all(texts.answer_text("")) == []
    assert await _all(texts.answer_text("  \n ")) == []
    assert chat.calls == [] and assistant.record.entries() == []


async def test_the_next_text_turn_has_the_last_one_in_its_history():
    chat = GatedChat(["It is noon."], [])
    chat.gate.set()
    assistant = _assistant(chat)
    texts = TextTurns(assistant)
    assert await _all(texts.answer_text("what time is it")) == ["It is noon."]
    assert await _all(texts.answer_text("and now")) == ["It is noon."]
    history = [(m.role, m.content) for m in chat.calls[1][1:-1]]
    assert history == [("user", "what time is it"), ("assistant", "It is noon.")]


async def test_closing_the_stream_early_cancels_the_turn_and_records_it_interrupted():
    chat = GatedChat(["It is noon. ", "Enjoy "], ["your lunch."])
    assistant = _assistant(chat)
    texts = TextTurns(assistant)
    stream = texts.answer_text("what time is it")
    assert await anext(stream) == "It is noon."
    await chat.waiting.wait()
    await stream.aclose()
    assert assistant.current is None
    assert chat.closed_early == 1  # the model was stopped, not left writing
    statuses = [(e.role, e.text, e.status) for e in assistant.record.entries()]
    assert ("assistant", "It is noon.", "told") in statuses
    assert statuses[-1] == ("turn", "", "interrupted")
    assert [t for t in asyncio.all_tasks() if t is not asyncio.current_task()] == []  # nothing left running
    # The line is free: the next text turn is answered.
    chat2 = GatedChat(["Yes."], [])
    chat2.gate.set()
    assistant.deps.chat = chat2
    assert await _all(texts.answer_text("are you there")) == ["Yes."]


async def test_a_consumer_cancelled_while_waiting_cancels_the_turn():
    chat = GatedChat(["It is noon. ", "Enjoy "], ["your lunch."])
    assistant = _assistant(chat)
    texts = TextTurns(assistant)
    got: list[str] = []

    async def consume() -> None:
        async with contextlib.aclosing(texts.answer_text("what time is it")) as stream:
            async for unit in stream:
                got.append(unit)

    task = asyncio.create_task(consume())
    await chat.waiting.wait()
    while not got:
        await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert got == ["It is noon."] and assistant.current is None and chat.closed_early == 1
    assert assistant.record.entries()[-1].status == "interrupted"


async def test_a_text_turn_waits_for_the_spoken_turn_under_way_and_for_earlier_text_turns():
    chat = GatedChat(["Spoken answer."], [])
    events: list[Event] = []
    assistant = _assistant(chat, events)
    texts = TextTurns(assistant)
    assistant.deps.recognizer = ScriptedRecognizer("what time is it")
    press = Press()
    asyncio.get_running_loop().call_later(0.0, press.release)
    voice = assistant.start_turn(WavFileMicrophone(speech_like(0.4, silence_before_s=0.1, silence_after_s=0.0)).chunks(), press)
    await chat.waiting.wait()  # the spoken turn is answering
    first = asyncio.create_task(_all(texts.answer_text("first question")))
    second = asyncio.create_task(_all(texts.answer_text("second question")))
    for _ in range(20):
        await asyncio.sleep(0)
    assert not first.done() and not second.done() and len(chat.calls) == 1  # both wait their turn
    chat.gate.set()
    await voice.wait()
    assert await first == ["Spoken answer."] and await second == ["Spoken answer."]
    users = [e.text for e in assistant.record.entries() if e.role == "user"]
    assert users == ["what time is it", "first question", "second question"]
    assert [t for t in (e.text for e in events if isinstance(e, TranscriptFinal))] == users


async def test_a_press_interrupts_a_text_turn_and_its_stream_ends():
    chat = GatedChat(["It is noon. ", "Enjoy "], ["your lunch."])
    assistant = _assistant(chat)
    texts = TextTurns(assistant)
    stream = texts.answer_text("what time is it")
    assert await anext(stream) == "It is noon."
    await chat.waiting.wait()
    assistant.deps.recognizer = ScriptedRecognizer("stop")
    press = Press()
    press.release()
    voice = assistant.start_turn(WavFileMicrophone(speech_like(0.3, silence_before_s=0.1, silence_after_s=0.0)).chunks(), press)
    assert await _all(stream) == []  # the asker sees the answer end
    entries = assistant.record.entries(1)
    assert entries[-1] == entries[-1].__class__(1, "turn", "", "interrupted", at=entries[-1].at)
    assert ("assistant", "Enjoy", "unspoken") in [(e.role, e.text, e.status) for e in entries]
    chat.gate.set()
    await voice.wait()
    assert assistant.record.entries(2)[0].text == "stop"


# -- with hearth's own tools and stores -------------------------------------------------


@pytest.fixture
async def home(tmp_path: Path) -> AsyncIterator[HomeTools]:
    home = await open_home_tools(HearthConfig(tools=ToolsConfig(data_dir=tmp_path)))
    try:
        yield home
    finally:
        await home.close()


def _tool_assistant(home: HomeTools, rules: list[tuple[str, ToolPlan]], events: list[Event]) -> Assistant:
    deps = make_deps(synthesizer=ToneSynthesizer(seconds_per_char=0.001))
    deps.tools = ToolUse(ScriptedPlanner(rules), home.executor, home.registry)
    return Assistant(deps, on_event=events.append)


async def test_a_timer_asked_by_text_is_set_through_the_executor_and_recorded(home: HomeTools):
    events: list[Event] = []
    assistant = _tool_assistant(home, [("timer for ten minutes", ToolPlan("", "timer_start", {"duration_s": 600}))], events)
    texts = TextTurns(assistant)
    units = await _all(texts.answer_text("set a timer for ten minutes"))
    assert [t.duration_s for t in home.timers.active()] == [600]
    assert units and "10 minute" in " ".join(units)
    called = [e for e in events if isinstance(e, ToolCalled)]
    assert [(c.name, c.status, c.origin) for c in called] == [("timer_start", "ok", "user")]
    tools = [(e.text, e.status, e.data.get("origin")) for e in assistant.record.entries() if e.role == "tool"]
    assert ("timer_start", "ok", "user") in tools
    assert assistant.last_act is not None and assistant.last_act.tool == "timer_start"


async def test_an_item_added_by_voice_is_read_back_by_text(home: HomeTools):
    events: list[Event] = []
    rules = [
        ("add milk", ToolPlan("", "shopping_add", {"item": "milk"})),
        ("on my shopping list", ToolPlan("", "shopping_list", {})),
    ]
    assistant = _tool_assistant(home, rules, events)
    texts = TextTurns(assistant)
    spoken = await say(assistant, "add milk to my shopping list")
    assert [c.name for c in spoken.tool_calls if c.acted] == ["shopping_add"]
    units = await _all(texts.answer_text("what's on my shopping list"))
    assert "milk" in " ".join(units).lower()
    assert [e.item for e in home.lists.items()] == ["milk"]


async def test_the_line_before_a_slow_tool_comes_first(home: HomeTools):
    events: list[Event] = []
    plan = ToolPlan("Let me look that up.", "recipe_search", {"query": "banana bread"})
    assistant = _tool_assistant(home, [("banana bread", plan)], events)
    texts = TextTurns(assistant)
    units = await _all(texts.answer_text("find me a banana bread recipe"))
    spoken = [(e.text, e.kind) for e in events if isinstance(e, UnitSpoken)]
    line = pretool_line("recipe_search", "en")  # the tool's own line, not the talker's
    assert spoken[0] == (line, "pretool") and units[0] == line
    assert len(units) > 1 and units == [text for text, _ in spoken]


async def test_the_live_view_starts_afresh_for_a_text_turn_after_a_spoken_one():
    from agent.live_view import LiveView

    chat = GatedChat(["It is noon."], [])
    chat.gate.set()
    view = LiveView()
    assistant = _assistant(chat, speaker=None)
    texts = TextTurns(assistant)
    assistant.on_event = view
    await say(assistant, "what time is it")
    assert view.snapshot()["heard"] == "what time is it" and len(view.snapshot()["units"]) == 1
    assert await _all(texts.answer_text("and the date")) == ["It is noon."]
    snap = view.snapshot()
    assert snap["heard"] == "and the date" and snap["final"]
    assert [u["text"] for u in snap["units"]] == ["It is noon."]


async def test_undo_by_text_takes_back_an_act_made_by_voice(home: HomeTools):
    events: list[Event] = []
    assistant = _tool_assistant(home, [("add milk", ToolPlan("", "shopping_add", {"item": "milk"}))], events)
    texts = TextTurns(assistant)
    await say(assistant, "add milk to my shopping list")
    assert [e.item for e in home.lists.items()] == ["milk"]
    units = await _all(texts.answer_text("undo that"))
    assert units and home.lists.items() == []
    assert [(c.name, c.origin) for c in events if isinstance(c, ToolCalled)][-1] == ("shopping_complete", "user")


async def test_a_text_turn_given_up_while_it_waits_starts_nothing():
    chat = GatedChat(["Spoken answer."], [])
    assistant = _assistant(chat)
    texts = TextTurns(assistant)
    assistant.deps.recognizer = ScriptedRecognizer("what time is it")
    press = Press()
    press.release()
    voice = assistant.start_turn(WavFileMicrophone(speech_like(0.4, silence_before_s=0.1, silence_after_s=0.0)).chunks(), press)
    await chat.waiting.wait()
    waiting = asyncio.create_task(_all(texts.answer_text("never mind")))
    for _ in range(20):
        await asyncio.sleep(0)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    chat.gate.set()
    await voice.wait()
    assert await _all(texts.answer_text("what now")) == ["Spoken answer."]
    assert [e.text for e in assistant.record.entries() if e.role == "user"] == ["what time is it", "what now"]
