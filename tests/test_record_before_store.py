"""An acting call is on record before its store changes, and settled on record before hearth says it is done.

Real stores (timers, the shopping list, notes) and a real record on disk; the store's own
connection reports each write as SQLite starts it, and the speaker reports each character of
what hearth says as it reaches the output.  At both moments the record is read from the file.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.assistant import Assistant
from agent.deciding.tool_calls import ToolCallPlanner
from agent.deciding.tool_use import ToolUse
from agent.record import ConversationRecord
from agent.deps import TurnDeps
from agent.results import Outcome
from audio.wav import WavFileMicrophone
from tests.fakes import EnergyVad, ScriptedRecognizer, speech_like
from tests.test_turn_tools import CharSink, CharSynthesizer, TimedJson, decision
from agent.listening.listen import Press
from firmware_py.history_cli import format_turns
from tools.executor import ToolExecutor
from tools.lists import ListStore, list_tools
from tools.registry import ToolRegistry
from tools.timers import TimerStore, timer_tools

CASES = [
    ("set a tea timer for 5 minutes", "timer_start", {"duration_s": 300, "label": "tea"}, "INSERT INTO timers", "Tea timer set for 5 minutes."),
    ("add eggs to the shopping list", "shopping_add", {"item": "eggs"}, "INSERT INTO shopping_items", "Added eggs to the shopping list."),
    ("take a note the oven runs hot", "note_add", {"text": "the oven runs hot"}, "INSERT INTO notes", "Noted."),
]


def _tool_rows(path: Path) -> list[tuple[str, str]]:
    record = ConversationRecord.open(path)  # another connection: what is on disk, not in a cache
    try:
        return [(e.text, e.status) for e in record.entries() if e.role == "tool"]
    finally:
        record.close()


class WatchedSink(CharSink):
    """Notes, for every character written, the tool rows on record at that moment."""

    def __init__(self, record_path: Path) -> None:
        super().__init__()
        self.record_path = record_path
        self.on_record: list[list[tuple[str, str]]] = []

    async def write(self, chunk, on_heard=None) -> None:
        if chunk.samples.any():
            self.on_record.append(_tool_rows(self.record_path))
        await super().write(chunk, on_heard)


@pytest.mark.parametrize(("words", "tool", "args", "write", "confirmation"), CASES)
async def test_the_call_is_recorded_started_before_the_write_and_ok_before_the_confirmation(
    tmp_path: Path, words: str, tool: str, args: dict, write: str, confirmation: str
):
    record_path = tmp_path / "conversation.sqlite3"
    timers, lists = TimerStore(tmp_path / "hearth.db"), ListStore(tmp_path / "hearth.db")
    timers.open()
    lists.open()
    seen_at_write: list[list[tuple[str, str]]] = []

    def traced(statement: str) -> None:
        if statement.startswith(write):
            seen_at_write.append(_tool_rows(record_path))

    timers.conn.set_trace_callback(traced)
    lists.conn.set_trace_callback(traced)
    registry = ToolRegistry([*timer_tools(timers), *list_tools(lists)])
    executor = ToolExecutor(registry)
    chat = TimedJson(decision("", tool, args))
    sink = WatchedSink(record_path)
    deps = TurnDeps(
        vad=EnergyVad(), recognizer=ScriptedRecognizer(words), chat=chat, synthesizer=CharSynthesizer(),
        speaker=sink, language="en", system_prompt="be brief",
        tools=ToolUse(ToolCallPlanner(chat, registry.specs, registry.tool_call_schema(), "be brief"), executor, registry),
    )
    record = ConversationRecord.open(record_path)
    executor.start()
    try:
        mic = WavFileMicrophone(speech_like(0.4, silence_before_s=0.1, silence_after_s=0.0), realtime=False)
        result = await Assistant(deps, record=record).handle(mic.chunks(), Press())
    finally:
        await executor.close()
        record.close()
        timers.close()
        lists.close()

    assert result.outcome == Outcome.ANSWERED, result.timeline.render()
    assert sink.text() == confirmation
    # The store's write began with the call already on disk as started, not yet settled.
    assert seen_at_write == [[(tool, "started")]]
    # The first sound of "done" reached the speaker with the call settled on disk.
    assert sink.on_record[0] == [(tool, "started"), (tool, "ok")]
    assert _tool_rows(record_path) == [(tool, "started"), (tool, "ok")]


def test_history_shows_a_settled_call_once_and_one_that_never_settled_as_started(tmp_path: Path):
    from agent.record import RecordEntry

    record = ConversationRecord.open(tmp_path / "conversation.sqlite3")
    try:
        record.append([
            RecordEntry(1, "user", "add eggs", "heard"),
            RecordEntry(1, "tool", "shopping_add", "started", "shopping_add", data={"args": {"item": "eggs"}}),
            RecordEntry(1, "tool", "shopping_add", "ok", "shopping_add", data={"args": {"item": "eggs"}}),
            RecordEntry(1, "turn", "", "answered"),
            RecordEntry(2, "user", "add milk", "heard"),
            RecordEntry(2, "tool", "shopping_add", "started", "shopping_add", data={"args": {"item": "milk"}}),
        ])
        text = format_turns(record.entries(), 10)
    finally:
        record.close()
    assert 'tool:   shopping_add {"item": "eggs"} -> ok' in text
    assert "eggs\"} -> started" not in text
    assert 'tool:   shopping_add {"item": "milk"} -> started' in text
    assert "#2" in text and "not finished" in text
