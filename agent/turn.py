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
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from enum import Enum


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
from agent.filters import default_chain
from agent.listen import ListenSettings, Press, UtteranceListener
from agent.llm import ChatMessage, ChatModel
from agent.phrases import Phrase, phrase
from agent.sentences import SentenceSplitter
from agent.timeline import Timeline
from audio.protocols import AudioChunk, Recognizer, Speaker, Synthesizer, VoiceActivityDetector

__all__ = ["ListenSettings", "Outcome", "Press", "Turn", "TurnDeps", "TurnResult"]

log = logging.getLogger(__name__)


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
        self._cancelled = False

    # -- control ---------------------------------------------------------------------------
    def start(self) -> asyncio.Task[TurnResult]:
        self._task = asyncio.create_task(self.run(), name="turn")
        return self._task

    def cancel(self) -> None:
        """Stop listening, thinking and speaking now; the speaker goes silent at once."""
        self._cancelled = True
        self.deps.speaker.interrupt()
        if self._task is not None and not self._task.done():
            self._task.cancel()

    async def run(self) -> TurnResult:
        try:
            await self._run()
        except asyncio.CancelledError:
            if not self._cancelled:
                # Cancelled from outside (shutdown): still nothing more may be heard. After
                # cancel() this is skipped, since the next turn may own the speaker by now.
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
        d, tl = self.deps, self.timeline
        messages = [ChatMessage("system", d.system_prompt), *self.history, ChatMessage("user", text)]
        units: asyncio.Queue[int | None] = asyncio.Queue()
        reply_parts: list[str] = []
        splitter = SentenceSplitter() if d.features.first_unit_comma else SentenceSplitter(first_unit_comma_chars=None)
        filters = default_chain()

        def pass_on(text: str) -> None:
            if text:
                reply_parts.append(text)
                self.emit(ReplyTextAppended(text))
                for unit in splitter.feed(text):
                    units.put_nowait(self._add_unit(unit))

        async def think() -> None:
            tl.mark("llm_start")
            try:
                async for piece in d.chat.stream(messages, d.max_reply_tokens):
                    tl.mark_once("first_token", text=piece)
                    pass_on(filters.feed(piece))
                pass_on(filters.flush())
                for unit in splitter.flush():
                    units.put_nowait(self._add_unit(unit))
            finally:
                tl.mark("llm_end")
            reply = "".join(reply_parts)
            if not any(ch.isalpha() for ch in reply):
                log.warning("the model gave no usable reply: %r", reply[:200])
                self.result.outcome = Outcome.NO_ANSWER
                units.put_nowait(self._add_unit(phrase(d.language, Phrase.NO_ANSWER)))
            units.put_nowait(None)

        self.result.outcome = Outcome.ANSWERED
        try:
            async with asyncio.TaskGroup() as group:
                group.create_task(think(), name="think")
                group.create_task(self._speak(units), name="speak")
        finally:
            # Also on cancellation: what the model wrote but nobody heard is part of the record.
            for unit in splitter.flush():
                self._add_unit(unit)
            self.result.reply = "".join(reply_parts).strip()
        self._finish_units()

    def _add_unit(self, text: str) -> int:
        self._units.append(text)
        return len(self._units) - 1

    async def _say_phrase(self, which: Phrase) -> None:
        units: asyncio.Queue[int | None] = asyncio.Queue()
        units.put_nowait(self._add_unit(phrase(self.deps.language, which)))
        units.put_nowait(None)
        try:
            await self._speak(units)
        except Exception:  # noqa: BLE001 - the apology itself failed; the log is all that is left
            log.exception("could not speak %s", which.value)
        self._finish_units()

    async def _speak(self, units: asyncio.Queue[int | None]) -> None:
        """Synthesize unit n+1 while unit n plays; stamp audio when the speaker plays it."""
        d, tl = self.deps, self.timeline
        audio: asyncio.Queue[tuple[int, AudioChunk] | None] = asyncio.Queue(maxsize=64)

        async def synthesize() -> None:
            while (index := await units.get()) is not None:
                unit = self._units[index]
                tl.mark("tts_start", unit=index, text=unit.strip())
                seconds = 0.0
                async for chunk in d.synthesizer.synthesize(unit.strip()):
                    seconds += chunk.duration
                    await audio.put((index, chunk))
                tl.mark("tts_end", unit=index, audio_s=round(seconds, 3))
            await audio.put(None)

        async def play() -> None:
            last_index = -1
            while (item := await audio.get()) is not None:
                index, chunk = item
                self.result.reply_audio_s += chunk.duration
                first_of_unit = index != last_index
                last_index = index
                await d.speaker.write(chunk, self._on_heard(index) if first_of_unit else None)
            if last_index >= 0:
                tl.mark("last_audio_out", await d.speaker.drain())
                for i in range(last_index + 1):
                    if i in self._heard_units:
                        self.emit(UnitSpoken(self._units[i]))

        async with asyncio.TaskGroup() as group:
            group.create_task(synthesize(), name="synthesize")
            group.create_task(play(), name="play")

    def _on_heard(self, index: int) -> Callable[[float], None]:
        def heard(at: float) -> None:
            self._heard_units.add(index)
            self.timeline.mark("unit_audio_out", at, unit=index)
            if self.timeline.mark_once("first_audio_out", at) is not None:
                self.emit(StateChanged(State.SPEAKING))

        return heard

    def _finish_units(self) -> None:
        self.result.spoken = [u.strip() for i, u in enumerate(self._units) if i in self._heard_units]
        self.result.unspoken = [u.strip() for i, u in enumerate(self._units) if i not in self._heard_units]
