"""One user utterance and hearth's answer to it.

A :class:`Turn` owns every task it starts (listening, recognition, the LLM,
synthesis, playback), so one ``cancel()`` stops them all and silences the
speaker at once.  It records its :class:`~agent.timeline.Timeline` on the
listener's side: speech times come from sample offsets in the microphone
stream, audio times from the speaker's clock.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections import defaultdict
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum

import numpy as np

from agent.cadence import Cadence, CadenceRules, PaceSettings
from agent.events import (
    Event,
    ReplyTextAppended,
    State,
    StateChanged,
    TurnFailed,
    TurnInterrupted,
    UnitSpoken,
)
from agent.features import Features
from agent.filters import FilterChain, default_chain
from agent.listen import ListenSettings, Press, UtteranceListener
from agent.llm import ChatMessage, ChatModel
from agent.phrases import Phrase, phrase
from agent.timeline import Timeline
from agent.tool_calls import NO_TOOL, SayDelta, ToolChosen, ToolPlan
from agent.tool_use import ToolUse, answer_prompt, pretool_line, spoken_result, tool_error_line, usable_line
from audio.levels import leading_quiet_s, trailing_quiet_s
from audio.protocols import AudioChunk, Recognizer, Speaker, Synthesizer, VoiceActivityDetector

__all__ = ["ListenSettings", "Outcome", "Press", "SpokenUnit", "Turn", "TurnDeps", "TurnResult"]

log = logging.getLogger(__name__)

_SILENCE_SLICE_S = 0.04
"""Pauses are written to the speaker in slices this long, so that a barge-in can cut one short."""


class Outcome(str, Enum):
    ANSWERED = "answered"
    NO_SPEECH = "no_speech"
    NOT_UNDERSTOOD = "not_understood"
    NO_ANSWER = "no_answer"
    INTERRUPTED = "interrupted"
    FAILED = "failed"


@dataclass(frozen=True)
class ToolCallRecord:
    """A tool the turn called, as the model asked for it."""

    name: str
    args: dict[str, object]


@dataclass(frozen=True)
class SpokenUnit:
    """One unit of what hearth had to say, and how much of it the listener heard."""

    text: str
    kind: str
    """"answer", "pretool" (the line before a tool) or "phrase" (a fixed line)."""
    status: str
    """"spoken" (heard to its end), "cut" (cut off partway) or "unspoken" (never heard)."""


@dataclass
class TurnResult:
    outcome: Outcome
    timeline: Timeline
    transcript: str = ""
    reply: str = ""
    spoken: list[str] = field(default_factory=list)
    unspoken: list[str] = field(default_factory=list)
    reply_audio_s: float = 0.0
    tool_calls: list[ToolCallRecord] = field(default_factory=list)
    units: list[SpokenUnit] = field(default_factory=list)
    """Every unit in order, with its kind and whether it was heard."""


@dataclass
class TurnDeps:
    """The components a turn uses; all behind protocols so fakes can stand in."""

    vad: VoiceActivityDetector
    recognizer: Recognizer
    chat: ChatModel
    synthesizer: Synthesizer
    speaker: Speaker
    language: str
    system_prompt: str
    listen: ListenSettings = field(default_factory=ListenSettings)
    max_reply_tokens: int | None = None
    features: Features = field(default_factory=Features)
    tools: ToolUse | None = None
    """Tool calling; None answers with free text only."""
    filters: Callable[[], FilterChain] = default_chain
    """Builds the stream filters for one reply."""
    cadence: CadenceRules = field(default_factory=CadenceRules)
    """How a reply is cut into spoken units."""
    pace: PaceSettings = field(default_factory=PaceSettings)
    """The pauses between a reply's units."""


class Turn:
    """Listen to one utterance, answer it aloud; ``cancel()`` stops everything."""

    def __init__(
        self,
        deps: TurnDeps,
        audio: AsyncIterator[AudioChunk],
        press: Press,
        history: Sequence[ChatMessage] = (),
        emit: Callable[[Event], None] = lambda _e: None,
        timeline: Timeline | None = None,
    ) -> None:
        self.deps = deps
        self.audio = audio
        self.press = press
        self.history = list(history)
        self.emit = emit
        self.timeline = timeline or Timeline()
        self.result = TurnResult(Outcome.FAILED, self.timeline)
        self._task: asyncio.Task[TurnResult] | None = None
        self._units: list[str] = []
        self._heard_units: set[int] = set()
        self._kinds: dict[int, str] = {}
        self._unit_written: dict[int, asyncio.Event] = {}
        self._synthesized: set[int] = set()
        self._unheard_chunks: defaultdict[int, int] = defaultdict(int)  # written, first sample not heard yet
        self._unit_end: dict[int, float] = {}  # when the unit's last heard sample ends
        self._heard_until = 0.0  # when everything heard so far has been played out
        self._paced: dict[int, int] = {}  # unit index -> its place in the reply's Cadence
        self._cadence: Cadence | None = None
        self._rushing = False
        self._pausing = False
        self._last_chunk: dict[int, list] = {}  # unit -> [its last chunk written, when it was heard]
        self._pause_when_heard: dict[int, float] = {}  # unit -> its trailing quiet, once its end is heard
        self._voice_ended: list[asyncio.TimerHandle] = []
        self._cancelled = False
        self._stopped_at: float | None = None

    # -- control ---------------------------------------------------------------------------
    def start(self) -> asyncio.Task[TurnResult]:
        self._task = asyncio.create_task(self.run(), name="turn")
        return self._task

    async def wait(self) -> TurnResult:
        """The result, once the turn is over (started or not)."""
        return await (self._task or self.start())

    def cancel(self) -> None:
        """Stop listening, thinking and speaking now; the speaker goes silent at once."""
        self._cancelled = True
        self._stopped_at = time.monotonic()
        self.deps.speaker.interrupt()
        if self._task is not None and not self._task.done():
            self._task.cancel()

    def rush(self) -> None:
        """The user spoke up: say the rest of the reply at once, with no more pauses."""
        if not self._rushing:
            self._rushing = True
            self.timeline.mark("barge_in", mode="rush")

    async def run(self) -> TurnResult:
        try:
            await self._run()
        except asyncio.CancelledError:
            if not self._cancelled:
                # Cancelled from outside (shutdown): still nothing more may be heard. After
                # cancel() this is skipped, since the next turn may own the speaker by now.
                self._stopped_at = time.monotonic()
                self.deps.speaker.interrupt()
            self.timeline.mark("interrupted")
            self.result.outcome = Outcome.INTERRUPTED
            self._finish_units()
            self.emit(TurnInterrupted(tuple(self.result.unspoken)))
            # The turn is over either way; its owner decides what happens next.
        except Exception as exc:  # noqa: BLE001 - a turn must never take the loop down
            log.exception("turn failed")
            self.emit(TurnFailed(repr(exc)))
            self.result.outcome = Outcome.FAILED
            await self._say_phrase(Phrase.FAILED)
        return self.result

    # -- the turn --------------------------------------------------------------------------
    async def _run(self) -> None:
        self.emit(StateChanged(State.LISTENING))
        heard_speech, text = await self._listen()
        self.result.transcript = text
        self.emit(StateChanged(State.THINKING))
        if not heard_speech:
            self.result.outcome = Outcome.NO_SPEECH
            await self._say_phrase(Phrase.NO_SPEECH)
            return
        if not text.strip():
            self.result.outcome = Outcome.NOT_UNDERSTOOD
            await self._say_phrase(Phrase.NOT_UNDERSTOOD)
            return
        await self._respond(text)

    # -- listening -------------------------------------------------------------------------
    async def _listen(self) -> tuple[bool, str]:
        d = self.deps
        listener = UtteranceListener(
            d.vad, d.recognizer, d.listen, self.press, self.timeline, self.emit, features=d.features
        )
        return await listener.run(self.audio)

    # -- answering -------------------------------------------------------------------------
    async def _respond(self, text: str) -> None:
        units: asyncio.Queue[int | None] = asyncio.Queue()
        reply = _ReplyText(self, units)
        self.result.outcome = Outcome.ANSWERED
        think = self._think_with_tools if self.deps.tools is not None else self._think
        try:
            async with asyncio.TaskGroup() as group:
                group.create_task(think(text, reply), name="think")
                group.create_task(self._speak(units), name="speak")
        finally:
            # Also on cancellation: what the model wrote but nobody heard is part of the record.
            reply.close()
        self._finish_units()

    async def _think(self, text: str, reply: _ReplyText) -> None:
        d, tl = self.deps, self.timeline
        messages = [ChatMessage("system", d.system_prompt), *self.history, ChatMessage("user", text)]
        tl.mark("llm_start")
        try:
            async for piece in d.chat.stream(messages, d.max_reply_tokens):
                tl.mark_once("first_token", text=piece)
                reply.feed(piece)
            reply.flush()
        finally:
            tl.mark("llm_end")
        reply.end()

    async def _think_with_tools(self, text: str, reply: _ReplyText) -> None:
        """One decision under the grammar: the line (or the whole answer), the tool, its arguments."""
        d, tl = self.deps, self.timeline
        tools = d.tools
        assert tools is not None
        say: list[str] = []
        plan: ToolPlan | None = None
        tl.mark("llm_start")
        try:
            async for event in tools.planner.stream(text, self.history):
                tl.mark_once("first_token")
                if isinstance(event, SayDelta):
                    say.append(event.text)
                elif isinstance(event, ToolChosen):
                    slow = event.tool is not None and tools.speaks_first(event.tool)
                    tl.mark("tool_chosen", tool=event.tool or NO_TOOL, slow=slow)
                    if event.tool is None:
                        reply.feed("".join(say))
                    elif d.features.pretool_line and slow:
                        line = "".join(say)
                        if not usable_line(line, text):
                            line = pretool_line(event.tool, d.language)
                        reply.kind = "pretool"
                        reply.feed(line)
                        if d.features.flush_at_tool:
                            reply.flush()
                        reply.kind = "answer"
                elif isinstance(event, ToolPlan):
                    plan = event
        finally:
            tl.mark("llm_end")
        assert plan is not None
        if plan.tool is None:
            if not say and plan.say:  # the decision broke off before the reader saw the tool
                reply.feed(plan.say)
            reply.flush()
        else:
            await self._call_tool(plan, text, reply)
        reply.end()

    async def _call_tool(self, plan: ToolPlan, text: str, reply: _ReplyText) -> None:
        d, tl = self.deps, self.timeline
        tools = d.tools
        assert tools is not None and plan.tool is not None
        self.result.tool_calls.append(ToolCallRecord(plan.tool, dict(plan.args)))
        if tools.acts(plan.tool) and tools.grounded is not None and not tools.grounded(plan.tool, plan.args, text):
            log.info("not acting on %s%s: not supported by %r", plan.tool, plan.args, text)
            tl.mark("tool_refused", tool=plan.tool, reason="ask_back")
            reply.feed(tool_error_line("ask_back", d.language))
            reply.flush()
            return
        # The line before the tool must reach the speaker before the tool starts.
        await reply.written()
        tl.mark("tool_start", tool=plan.tool)
        result = await tools.executor.call(plan.tool, plan.args, origin="user")
        tl.mark("tool_end", tool=plan.tool, ok=result.ok, error=result.error.kind if result.error else None)
        if tools.answer == "model" and result.ok:
            messages = [
                ChatMessage("system", d.system_prompt), *self.history, ChatMessage("user", text),
                ChatMessage("assistant", plan.say), ChatMessage("user", answer_prompt(plan.tool, result)),
            ]
            async for piece in d.chat.stream(messages, tools.answer_max_tokens):
                reply.feed(piece)
        else:
            reply.feed(spoken_result(result, d.language))
        reply.flush()

    def _add_unit(self, text: str, kind: str = "answer") -> int:
        self._units.append(text)
        index = len(self._units) - 1
        self._kinds[index] = kind
        return index

    async def _say_phrase(self, which: Phrase) -> None:
        units: asyncio.Queue[int | None] = asyncio.Queue()
        units.put_nowait(self._add_unit(phrase(self.deps.language, which), "phrase"))
        units.put_nowait(None)
        try:
            await self._speak(units)
        except Exception:  # noqa: BLE001 - the apology itself failed; the log is all that is left
            log.exception("could not speak %s", which.value)
        self._finish_units()

    async def _speak(self, units: asyncio.Queue[int | None]) -> None:
        """Synthesize unit n+1 while unit n plays; stamp audio when the speaker plays it."""
        d, tl = self.deps, self.timeline
        audio: asyncio.Queue[tuple[int, AudioChunk | None] | None] = asyncio.Queue(maxsize=64)

        async def synthesize() -> None:
            while (index := await units.get()) is not None:
                unit = self._units[index]
                tl.mark("tts_start", unit=index, text=unit.strip(), kind=self._kinds.get(index, "answer"))
                seconds = 0.0
                async for chunk in d.synthesizer.synthesize(unit.strip()):
                    seconds += chunk.duration
                    await audio.put((index, chunk))
                tl.mark("tts_end", unit=index, audio_s=round(seconds, 3))
                await audio.put((index, None))
            await audio.put(None)

        async def play() -> None:
            last_index, previous = -1, None
            while (item := await audio.get()) is not None:
                index, chunk = item
                if chunk is None:  # the unit's last sample is with the speaker
                    self._synthesized.add(index)
                    self._written(index).set()
                    self._unit_written_out(index)
                    continue
                first_of_unit = index != last_index
                if first_of_unit:
                    await self._pause_before(index, chunk, previous)
                last_index, previous = index, chunk
                self.result.reply_audio_s += chunk.duration
                await self._write(index, chunk, first_of_unit)
            if last_index >= 0:
                tl.mark("last_audio_out", await d.speaker.drain())
                for i in range(last_index + 1):
                    if i in self._heard_units:
                        self.emit(UnitSpoken(self._units[i]))

        async with asyncio.TaskGroup() as group:
            group.create_task(synthesize(), name="synthesize")
            group.create_task(play(), name="play")

    async def _write(self, index: int, chunk: AudioChunk, first_of_unit: bool) -> None:
        """Hand a chunk to the speaker; note when it is heard (the unit's first one on the timeline)."""
        self._unheard_chunks[index] += 1
        last = self._last_chunk[index] = [chunk, None]

        def heard(at: float) -> None:
            self._unheard_chunks[index] -= 1
            end = at + chunk.duration
            self._unit_end[index] = max(self._unit_end.get(index, 0.0), end)
            self._heard_until = max(self._heard_until, end)
            last[1] = at
            if first_of_unit:
                self._on_unit_heard(index, at)
            if index in self._pause_when_heard and self._last_chunk.get(index) is last:
                self._voice_ends(index, end - self._pause_when_heard.pop(index))

        await self.deps.speaker.write(chunk, heard)

    def _unit_written_out(self, index: int) -> None:
        """The unit's audio is all with the speaker: when its voice stops, hearth is pausing."""
        more = index + 1 < len(self._units) or (self._cadence is not None and not self._cadence.pacer.complete)
        if index not in self._last_chunk or not more or not self.deps.features.cadence:
            return
        chunk, heard_at = self._last_chunk[index]
        quiet = trailing_quiet_s(chunk)
        if heard_at is None:
            self._pause_when_heard[index] = quiet
        else:
            self._voice_ends(index, heard_at + chunk.duration - quiet)

    def _voice_ends(self, index: int, at: float) -> None:
        """At monotonic time ``at`` the voice of unit ``index`` stops: show "still talking" then.

        Stamped from the speaker's clock, so the light and the barge-in listener follow what the
        room hears, the voice's own trailing silence included.
        """
        loop = asyncio.get_running_loop()

        def pausing() -> None:
            if not self._cancelled and not self._pausing and max(self._heard_units, default=-1) == index:
                self._pausing = True
                self.emit(StateChanged(State.PAUSING))

        self._voice_ended.append(loop.call_at(loop.time() + max(0.0, at - time.monotonic()), pausing))

    async def _pause_before(self, index: int, first: AudioChunk, previous: AudioChunk | None) -> None:
        """Leave Cadence's pause before a reply's unit, counting any silence already heard.

        The pause is written as silence, so that the speaker's clock, not the event loop's,
        times it; it goes in short slices so that a barge-in collapses the rest of it.  What the
        listener hears between two voices also holds the silence the voice leaves at the end of
        one unit and the start of the next, and any wait for the model: all count toward it.
        """
        place, cadence = self._paced.get(index), self._cadence
        if place is None or place == 0 or cadence is None or not self.deps.features.cadence:
            return
        began = time.monotonic()
        waited = max(0.0, began - self._heard_until) if sum(self._unheard_chunks.values()) == 0 else 0.0
        edges = leading_quiet_s(first) + (trailing_quiet_s(previous) if previous is not None else 0.0)
        idle = waited + edges
        rate = self.deps.speaker.sample_rate
        step, written, target = round(_SILENCE_SLICE_S * rate), 0, 0.0
        # Asked again before every slice: the later the pause is decided, the more of the reply
        # is known, and the closer it is to the pause of the whole text.
        while not self._rushing:
            target = cadence.pause_before(place)
            left = round((target - idle) * rate) - written
            if left <= 0:
                break
            silence = AudioChunk(np.zeros(min(step, left), np.float32), rate)
            await self.deps.speaker.write(silence)
            written += len(silence.samples)
        cadence.paused(place, min(idle, target) + written / rate)
        self.timeline.mark(
            "pause",
            began,
            unit=index,
            pause_s=round(target, 3),
            silence_s=round(written / rate, 3),
            already_s=round(waited, 3),
            voice_edges_s=round(edges, 3),
        )

    def _written(self, index: int) -> asyncio.Event:
        return self._unit_written.setdefault(index, asyncio.Event())

    def _on_unit_heard(self, index: int, at: float) -> None:
        self._heard_units.add(index)
        self.timeline.mark("unit_audio_out", at, unit=index)
        first = self.timeline.mark_once("first_audio_out", at) is not None
        if first or self._pausing:
            self._pausing = False
            self.emit(StateChanged(State.SPEAKING))

    def _finish_units(self) -> None:
        for handle in self._voice_ended:
            handle.cancel()
        stopped = self._stopped_at if self._stopped_at is not None else math.inf
        units: list[SpokenUnit] = []
        for i, text in enumerate(self._units):
            if i not in self._heard_units:
                status = "unspoken"
            elif i in self._synthesized and self._unheard_chunks[i] == 0 and self._unit_end.get(i, 0.0) <= stopped:
                status = "spoken"
            else:
                status = "cut"
            units.append(SpokenUnit(text.strip(), self._kinds.get(i, "answer"), status))
        self.result.units = units
        self.result.spoken = [u.text for u in units if u.status != "unspoken"]
        self.result.unspoken = [u.text for u in units if u.status == "unspoken"]


class _ReplyText:
    """The reply's text path: filters, then Cadence, then the turn's units queue.

    ``kind`` labels the units cut while it is set ("pretool" for the line before a tool).
    ``flush()`` is the boundary: filters in order, then Cadence, so that every unit written
    so far is complete.  ``written()`` waits until those units' audio is with the speaker.
    """

    def __init__(self, turn: Turn, units: asyncio.Queue[int | None]) -> None:
        d = turn.deps
        self.turn = turn
        self.units = units
        self.filters = d.filters()
        rules = d.cadence if d.features.cadence else replace(d.cadence, enabled=False)
        self.cadence = Cadence(rules, d.pace)
        turn._cadence = self.cadence
        self.parts: list[str] = []
        self.kind = "answer"
        self.queued: list[int] = []
        self._after_boundary = False

    def feed(self, piece: str) -> None:
        self._pass_on(self.filters.feed(piece))

    def flush(self) -> None:
        self._pass_on(self.filters.flush())
        for unit in self.cadence.flush():
            self._queue(unit)
        self._after_boundary = True

    def _pass_on(self, text: str) -> None:
        if text:
            if self._after_boundary and self.parts and not self.parts[-1][-1:].isspace() and not text[:1].isspace():
                text = " " + text  # the line before a tool was flushed: what follows is a new sentence
            self._after_boundary = False
            self.parts.append(text)
            self.turn.emit(ReplyTextAppended(text))
            for unit in self.cadence.feed(text):
                self._queue(unit)

    def _queue(self, unit: str) -> None:
        index = self.turn._add_unit(unit, self.kind)
        self.turn._paced[index] = len(self.cadence.units) - 1
        self.queued.append(index)
        self.units.put_nowait(index)

    async def written(self) -> None:
        for index in self.queued:
            await self.turn._written(index).wait()

    def end(self) -> None:
        """No more text: a reply with nothing to say gets the fallback line; the speaker may stop."""
        turn = self.turn
        self.cadence.end()
        if not any(ch.isalpha() for ch in self.text):
            log.warning("the model gave no usable reply: %r", self.text[:200])
            turn.result.outcome = Outcome.NO_ANSWER
            index = turn._add_unit(phrase(turn.deps.language, Phrase.NO_ANSWER), "phrase")
            self.queued.append(index)
            self.units.put_nowait(index)
        self.units.put_nowait(None)

    def close(self) -> None:
        for unit in self.cadence.flush():
            self.turn._add_unit(unit, self.kind)
        self.turn.result.reply = self.text.strip()

    @property
    def text(self) -> str:
        return "".join(self.parts)
