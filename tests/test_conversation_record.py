"""The conversation record as the authority: written as the turn happens, the source of the
history (across a restart, and for a turn that cut the one before short), and `hearth history`."""

from __future__ import annotations

import asyncio
from pathlib import Path

from agent.assistant import Assistant
from agent.record import ConversationRecord
from agent.listening.listen import Press
from agent.results import Outcome
from audio.wav import WavFileMicrophone
from firmware_py.cli import main
from tests.fakes import speech_like
from tests.test_turn_cadence import LONG, CountingSpeaker, make_deps, wait_for_pause
from tests.test_turn_tools import Kitchen, TimedJson, decision, tool_deps


def _mic():
    return WavFileMicrophone(speech_like(0.4, silence_before_s=0.1, silence_after_s=0.0), realtime=False).chunks()


async def test_a_made_call_is_recorded_ok_and_one_asked_back_as_refused():
    record = ConversationRecord.open(":memory:")
    kitchen = Kitchen()

    def grounded(tool, args, text):
        return str(args.get("item", "")) in text

    chat = TimedJson(decision("Adding eggs.", "shopping_add", {"item": "50 eggs"}))
    deps, _, executor = tool_deps(chat, kitchen, text="add milk", grounded=grounded)
    executor.start()
    try:
        assistant = Assistant(deps, record=record)
        await assistant.handle(_mic(), Press())
        deps.tools.planner.chat = TimedJson(decision("Adding milk.", "shopping_add", {"item": "milk"}))
        await assistant.handle(_mic(), Press())
        await asyncio.sleep(0)
    finally:
        await executor.close()
    tools = [(e.turn, e.text, e.status, e.data.get("args")) for e in record.entries() if e.role == "tool"]
    assert tools == [
        (1, "shopping_add", "refused", {"item": "50 eggs"}),
        (2, "shopping_add", "started", {"item": "milk"}),  # on record before the list can change
        (2, "shopping_add", "ok", {"item": "milk"}),
    ]
    assert kitchen.shopping == ["milk"]
    # Written before the reply about it: the call settles, then the answer is spoken.
    order = [(e.turn, e.role) for e in record.entries()]
    assert order.index((2, "tool")) < order.index((2, "assistant"))


async def test_a_turn_that_cuts_a_reply_short_sees_the_exchange_it_cut():
    events: list = []
    deps = make_deps(speaker=CountingSpeaker(), seconds_per_char=0.01)
    assistant = Assistant(deps, on_event=events.append)
    first = assistant.start_turn(WavFileMicrophone(speech_like(0.6), realtime=False).chunks(), Press())
    await wait_for_pause(assistant, events)
    second = assistant.start_turn(WavFileMicrophone(speech_like(0.3), realtime=False).chunks(), Press())
    cut = await first.wait()
    await second.wait()
    assert cut.outcome == Outcome.INTERRUPTED
    heard_of_it = LONG.split(".")[0] + "."
    assert [(m.role, m.content) for m in second.history] == [("user", "how do I bake a sponge"), ("assistant", heard_of_it)]


async def test_the_conversation_survives_a_restart(tmp_path: Path):
    path = tmp_path / "conversation.sqlite3"
    record = ConversationRecord.open(path)
    deps = make_deps(reply="Preheat the oven to 180 degrees.")
    await Assistant(deps, record=record).handle(WavFileMicrophone(speech_like(0.6), realtime=False).chunks(), Press())
    await asyncio.sleep(0)
    record.close()

    reopened = ConversationRecord.open(path)
    try:
        restarted = Assistant(make_deps(), record=reopened)
        assert [(m.role, m.content) for m in restarted.history] == [
            ("user", "how do I bake a sponge"), ("assistant", "Preheat the oven to 180 degrees.")]
        restarted.forget()
        assert restarted.history == []
        assert reopened.begin_turn() == 2  # and the numbering goes on
    finally:
        reopened.close()


async def test_hearth_history_prints_the_record(tmp_path: Path, capsys):
    record = ConversationRecord.open(tmp_path / "conversation.sqlite3")
    await Assistant(make_deps(reply="Preheat the oven."), record=record).handle(
        WavFileMicrophone(speech_like(0.6), realtime=False).chunks(), Press())
    await asyncio.sleep(0)
    record.close()
    config = tmp_path / "hearth.toml"
    config.write_text(f'[tools]\ndata_dir = "{tmp_path}"\n', encoding="utf-8")
    assert main(["history", "--config", str(config)]) == 0
    out = capsys.readouterr().out
    assert "#1" in out and "answered" in out
    assert "how do I bake a sponge" in out and "Preheat the oven." in out and "spoken" in out
    assert main(["history", "--config", str(tmp_path / "missing.toml")]) == 2
