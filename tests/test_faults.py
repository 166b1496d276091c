"""Faults a turn must survive: every stage raising, a full disk under a tool and under the record,
a tool that hangs (in a coroutine that ignores its cancellation, or in a thread), a model file
damaged at start-up.  Each gets a clear message, spoken where a turn is under way, and the next
press is served."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import threading
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from agent.assistant import Assistant
from agent.events import Event, ToolCalled, TurnFailed
from agent.record import ConversationRecord, RecordEntry
from agent.speaking.phrases import Phrase, phrase
from agent.deps import TurnDeps
from agent.results import Outcome
from audio.protocols import AudioChunk, Transcript
from audio.wav import WavFileSpeaker
from tests.fakes import EnergyVad, ScriptedChatModel, ScriptedRecognizer, ToneSynthesizer, say, speech_like
from tests.test_turn import make_deps
from tests.test_turn_tools import CharSink, CharSynthesizer, TimedJson, decision
from tools.executor import ToolExecutor
from tools.lists import ListStore, list_tools
from tools.registry import ToolRegistry
from tools.spec import NoArgs, ToolOutput, ToolSpec
from tools.threads import ToolThread
from agent.deciding.tool_calls import ToolCallPlanner
from agent.deciding.tool_use import ToolUse


# -- stages that raise -----------------------------------------------------------------------
class BrokenVad(EnergyVad):
    def __init__(self, failures: int) -> None:
        super().__init__()
        self.failures = failures

    def accept(self, samples: np.ndarray):
        if self.failures:
            self.failures -= 1
            raise RuntimeError("voice detector session lost")
        return super().accept(samples)


class BrokenRecognizer(ScriptedRecognizer):
    def __init__(self, text: str, failures: int) -> None:
        super().__init__(text)
        self.failures = failures

    async def transcribe(self, audio: AsyncIterator[AudioChunk], context: str = "", *, hypotheses: int = 1) -> AsyncIterator[Transcript]:
        if self.failures:
            self.failures -= 1
            async for _chunk in audio:
                raise RuntimeError("decoder out of memory")
        async for transcript in super().transcribe(audio, context):
            yield transcript


class BrokenChat(ScriptedChatModel):
    def __init__(self, reply: str, failures: int) -> None:
        super().__init__(reply)
        self.failures = failures

    async def stream(self, messages: Sequence, max_tokens: int | None = None) -> AsyncIterator[str]:
        if self.failures:
            self.failures -= 1
            raise ValueError("llama_decode returned -1")
        async for piece in super().stream(messages, max_tokens):
            yield piece


class BrokenSynthesizer(ToneSynthesizer):
    def __init__(self, failures: int) -> None:
        super().__init__()
        self.failures = failures

    async def synthesize(self, text: str) -> AsyncIterator[AudioChunk]:
        if self.failures:
            self.failures -= 1
            raise RuntimeError("onnxruntime: invalid input")
        async for chunk in super().synthesize(text):
            yield chunk


class BrokenSpeaker(WavFileSpeaker):
    def __init__(self, failures: int) -> None:
        super().__init__(16000)
        self.failures = failures

    async def write(self, chunk: AudioChunk, on_heard=None) -> None:
        if self.failures:
            self.failures -= 1
            raise OSError("PortAudio: Unanticipated host error")
        await super().write(chunk, on_heard)


def broken(stage: str, failures: int, language: str = "en") -> TurnDeps:
    text, reply = ("지금 몇 시야", "열두 시예요.") if language == "ko" else ("what time is it", "It is noon.")
    parts = {
        "vad": {"vad": BrokenVad(failures)},
        "asr": {"recognizer": BrokenRecognizer(text, failures)},
        "llm": {"chat": BrokenChat(reply, failures)},
        "tts": {"synthesizer": BrokenSynthesizer(failures)},
        "speaker": {"speaker": BrokenSpeaker(failures)},
    }[stage]
    deps = make_deps(reply=reply, text=text, **{k: v for k, v in parts.items() if k != "vad"})
    deps.language = language
    if "vad" in parts:
        deps.vad = parts["vad"]
    return deps


async def turn(assistant: Assistant):
    from agent.listening.listen import Press
    from audio.wav import WavFileMicrophone

    press = Press()
    press.release()
    mic = WavFileMicrophone(speech_like(0.8), realtime=False)
    return await assistant.handle(mic.chunks(), press)


STAGES = [("vad", "hearing", Phrase.FAILED_HEARING), ("asr", "hearing", Phrase.FAILED_HEARING),
          ("llm", "answer", Phrase.FAILED_ANSWER), ("tts", "voice", Phrase.FAILED_VOICE), ("speaker", "voice", Phrase.FAILED_VOICE)]
CAUSES = {"vad": "RuntimeError: voice detector session lost", "asr": "RuntimeError: decoder out of memory",
          "llm": "ValueError: llama_decode returned -1", "tts": "RuntimeError: onnxruntime: invalid input",
          "speaker": "OSError: PortAudio: Unanticipated host error"}


@pytest.mark.parametrize(("part", "stage", "apology"), STAGES)
async def test_a_stage_that_raises_once_is_apologised_for_by_name_and_the_next_press_is_answered(part, stage, apology, caplog):
    deps = broken(part, failures=1)
    events: list[Event] = []
    assistant = Assistant(deps, on_event=events.append)
    with caplog.at_level(logging.ERROR):
        result = await turn(assistant)
    assert result.outcome == Outcome.FAILED
    assert [(e.stage) for e in events if isinstance(e, TurnFailed)] == [stage]
    assert result.spoken == [phrase("en", apology)]
    assert phrase("en", apology).startswith("Sorry, something went wrong with ")
    (line,) = [r.getMessage() for r in caplog.records if r.name == "agent.turn"]
    assert line.startswith("turn failed in ") and line.endswith(CAUSES[part]) and "\n" not in line
    second = await turn(assistant)
    assert second.outcome == Outcome.ANSWERED and second.spoken == ["It is noon."]


@pytest.mark.parametrize(("part", "stage", "apology"), STAGES[:3])
async def test_korean_apologies_name_the_stage_too(part, stage, apology):
    deps = broken(part, failures=1, language="ko")
    assistant = Assistant(deps)
    result = await turn(assistant)
    assert result.outcome == Outcome.FAILED
    assert " ".join(result.spoken) == phrase("ko", apology)
    assert "문제가 생겼어요" in phrase("ko", apology)
    assert (await turn(assistant)).outcome == Outcome.ANSWERED


@pytest.mark.parametrize("part", ["tts", "speaker"])
async def test_a_voice_that_stays_broken_leaves_the_apology_in_the_log_and_the_loop_serving(part, caplog):
    deps = broken(part, failures=2)  # the answer and the apology both fail
    assistant = Assistant(deps)
    with caplog.at_level(logging.ERROR):
        result = await turn(assistant)
    assert result.outcome == Outcome.FAILED and result.spoken == []
    assert any(r.getMessage() == "could not speak failed_voice" for r in caplog.records)
    assert (await turn(assistant)).spoken == ["It is noon."]


# -- a full disk -----------------------------------------------------------------------------
def fill(conn: sqlite3.Connection, write) -> None:
    """Cap the database at its size and write until SQLite says it is full."""
    (pages,) = conn.execute("PRAGMA page_count").fetchone()
    conn.execute(f"PRAGMA max_page_count = {pages}")
    with pytest.raises(sqlite3.OperationalError, match="database or disk is full"):
        for n in range(100_000):
            write(n)


def list_deps(store: ListStore, chat, text: str, language: str = "en") -> tuple[TurnDeps, CharSink]:
    registry = ToolRegistry(list_tools(store, language))
    planner = ToolCallPlanner(chat, registry.specs, registry.tool_call_schema(), "be brief")
    sink = CharSink()
    deps = TurnDeps(
        vad=EnergyVad(), recognizer=ScriptedRecognizer(text), chat=chat, synthesizer=CharSynthesizer(),
        speaker=sink, language=language, system_prompt="be brief", tools=ToolUse(planner, ToolExecutor(registry), registry),
    )
    return deps, sink


@pytest.mark.parametrize(("language", "heard"), [
    ("en", "Sorry, I couldn't save that: the storage is full."), ("ko", "죄송해요, 저장 공간이 꽉 차서 저장하지 못했어요.")])
async def test_a_full_disk_under_a_tool_is_said_nothing_claims_success_and_the_next_turn_saves(tmp_path: Path, language, heard, caplog):
    store = ListStore(tmp_path / "hearth.db")
    store.open()
    fill(store.conn, lambda n: store.add(f"item {n:04d}"))
    before = [i.item for i in store.items()]
    deps, sink = list_deps(store, TimedJson(decision("", "shopping_add", {"item": "milk"})), "add milk to the shopping list", language)
    events: list[Event] = []
    assistant = Assistant(deps, on_event=events.append)
    deps.tools.executor.start()
    try:
        with caplog.at_level(logging.ERROR):
            result = await say(assistant, "add milk to the shopping list")
        assert result.outcome == Outcome.ANSWERED
        assert " ".join(result.spoken) == heard
        assert [i.item for i in store.items()] == before  # nothing half-written
        (called,) = [e for e in events if isinstance(e, ToolCalled)]
        assert called.status == "error" and not result.tool_calls[0].acted
        assert [r.getMessage() for r in caplog.records if r.name == "tools.executor"] == [
            "tool shopping_add could not save: database or disk is full"]
        # Room again (an old file deleted): the same request now saves, and says so.
        store.conn.execute("PRAGMA max_page_count = 1073741823")
        sink.written.clear()
        result = await say(assistant, "add milk to the shopping list")
        assert result.tool_calls[0].acted and "milk" in [i.item for i in store.items()]
        assert result.spoken[0].startswith("Added milk" if language == "en" else "장보기 목록에")
    finally:
        await deps.tools.executor.close()
        store.close()


class CappedRecord(ConversationRecord):
    """The real record, with the disk's room in our hands (SQLite's page cap)."""

    def cap(self) -> None:
        fill(self._conn, lambda n: self.append([RecordEntry(0, "assistant", f"filler {n:05d}", "spoken")]))

    def uncap(self) -> None:
        self._conn.execute("PRAGMA max_page_count = 1073741823")


async def test_a_full_disk_under_the_record_costs_the_record_one_log_line_not_the_turn(tmp_path: Path, caplog):
    record = CappedRecord.open(tmp_path / "conversation.sqlite3")
    record.cap()
    deps = make_deps(reply="It is noon. Enjoy your lunch.")
    assistant = Assistant(deps, record=record)
    with caplog.at_level(logging.WARNING):
        result = await turn(assistant)
        assert result.outcome == Outcome.ANSWERED and result.spoken == ["It is noon.", "Enjoy your lunch."]
        errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
        assert len(errors) == 1 and "conversation record" in errors[0].getMessage() and "disk is full" in errors[0].getMessage()
        assert errors[0].exc_info is None  # one line, no traceback
        record.uncap()
        second = await turn(assistant)
    assert second.outcome == Outcome.ANSWERED
    assert any("written again" in r.getMessage() for r in caplog.records)
    words = [e.text for e in record.entries() if e.role == "assistant" and not e.text.startswith("filler")]
    assert words[-2:] == ["It is noon.", "Enjoy your lunch."]  # the turn after is in the record
    record.close()


def test_sqlite_reports_a_capped_database_as_full(tmp_path: Path):
    """The cap stands for the real thing: the same error, the same code, as a full disk."""
    store = ListStore(tmp_path / "hearth.db")
    store.open()
    with pytest.raises(sqlite3.OperationalError) as info:
        fill(store.conn, lambda n: store.add(f"item {n:04d}"))
        store.add("milk")
    assert info.value.sqlite_errorcode == sqlite3.SQLITE_FULL
    store.close()


async def test_no_space_left_from_the_os_is_a_full_disk_too():
    async def note(_args: NoArgs) -> ToolOutput:
        raise OSError(28, "No space left on device")

    executor = ToolExecutor(ToolRegistry([ToolSpec("note_add", "A note.", NoArgs, note, side_effects="act")]))
    executor.start()
    result = await executor.call("note_add", {})
    await executor.close()
    assert result.error is not None and result.error.kind == "storage_full"


# -- a tool that hangs -----------------------------------------------------------------------
async def test_a_tool_that_ignores_its_cancellation_times_out_and_leaves_the_executor_free():
    starts: list[int] = []
    released = asyncio.Event()

    async def stubborn(_args: NoArgs) -> ToolOutput:
        starts.append(1)
        while not released.is_set():
            try:
                await released.wait()
            except asyncio.CancelledError:
                pass  # a badly written tool: it will not stop (until the test lets it go)
        return ToolOutput("too late")

    async def clock(_args: NoArgs) -> ToolOutput:
        return ToolOutput("It's noon.")

    executor = ToolExecutor(ToolRegistry([
        ToolSpec("weather", "The weather.", NoArgs, stubborn, timeout_s=0.05), ToolSpec("time_now", "The time.", NoArgs, clock),
    ]))
    executor.start()
    # Hang guards only: without the fix the first call never returns at all.
    first = await asyncio.wait_for(executor.call("weather", {}), 30)
    assert first.error is not None and first.error.kind == "timeout"
    assert (await asyncio.wait_for(executor.call("time_now", {}), 30)).ok
    again = await asyncio.wait_for(executor.call("weather", {}), 30)
    assert again.error is not None and again.error.kind == "timeout" and "still busy" in again.error.message
    assert len(starts) == 1  # the stuck call was not joined by a second one
    released.set()
    await executor.close()


async def test_tools_hung_in_their_threads_leave_the_models_threads_free():
    hung = threading.Event()
    thread = ToolThread("weather")

    async def sensor(_args: NoArgs) -> ToolOutput:
        await thread.run(hung.wait)
        return ToolOutput("21 degrees")

    executor = ToolExecutor(ToolRegistry([ToolSpec("weather", "The weather.", NoArgs, sensor, timeout_s=0.05)]))
    executor.start()
    threads = threading.active_count()
    try:
        for _ in range(12):  # twice the event loop's default pool on a two-core machine
            result = await asyncio.wait_for(executor.call("weather", {}), 30)
            assert result.error is not None and result.error.kind == "timeout"
        assert threading.active_count() <= threads + 1
        # What the language model streams on is still free.
        assert await asyncio.wait_for(asyncio.to_thread(lambda: "free"), 30) == "free"
    finally:
        hung.set()
        await executor.close()


async def test_a_tool_thread_ends_when_idle_and_comes_back_when_needed():
    thread = ToolThread("recipes", idle_s=0.01)
    assert await thread.run(lambda: 1) == 1
    for _ in range(1000):
        if not thread.alive:
            break
        await asyncio.sleep(0.01)
    assert not thread.alive
    assert await thread.run(lambda a, b: a + b, 2, 3) == 5
    with pytest.raises(ZeroDivisionError):
        await thread.run(lambda: 1 / 0)


@pytest.mark.parametrize(("language", "heard"), [
    ("en", "Sorry, something went wrong with the shopping list. Please try again."),
    ("ko", "죄송해요, 장보기 목록에 문제가 생겼어요. 다시 해 주세요."),
])
async def test_a_tool_that_raises_is_named_in_the_apology(tmp_path: Path, language, heard):
    store = ListStore(tmp_path / "hearth.db")
    store.open()
    store.close()  # the tool's connection is gone: it raises
    deps, _sink = list_deps(store, TimedJson(decision("", "shopping_add", {"item": "milk"})), "add milk", language)
    assistant = Assistant(deps)
    deps.tools.executor.start()
    try:
        result = await say(assistant, "add milk")
    finally:
        await deps.tools.executor.close()
    assert result.outcome == Outcome.ANSWERED and " ".join(result.spoken) == heard


async def test_an_early_decision_that_raises_is_one_warning_and_the_turn_still_decides(caplog):
    from agent.deciding.thinker import Thinker
    from agent.timeline import Timeline
    from tests.test_heartbeat import Kitchen, ScriptedPlanner

    class BrokenPlanner(ScriptedPlanner):
        async def plan(self, text: str, history=(), on_say=None, examples=None):
            raise ValueError("llama_decode returned -1")

    lane = ToolExecutor(Kitchen().registry())
    lane.start()
    timeline = Timeline()
    thinker = Thinker(BrokenPlanner([]), lane, (), timeline)
    thinker.hear("what is the weather in busan")
    with caplog.at_level(logging.WARNING):
        assert thinker.look()
        for _ in range(5):
            await asyncio.sleep(0.01)
        record = await thinker.handoff()
        await thinker.close()
        import gc

        gc.collect()  # an exception nobody retrieved is reported when its task is collected
    await lane.close()
    assert record.latest_decision() is None
    assert [r.getMessage() for r in caplog.records] == ["an early decision failed: llama_decode returned -1"]
    assert timeline.first("heartbeat_think_end").detail["error"] == "llama_decode returned -1"
