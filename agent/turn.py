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
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from enum import Enum

import numpy as np

from agent.events import (
    Event,
    ReplyTextAppended,
    State,
    StateChanged,
    TranscriptFinal,
    TranscriptPartial,
    TurnFailed,
    TurnInterrupted,
    UnitSpoken,
)
from agent.llm import ChatMessage, ChatModel
from agent.phrases import Phrase, phrase
from agent.sentences import SentenceSplitter
from agent.timeline import Timeline
from audio.protocols import AudioChunk, Recognizer, Speaker, Synthesizer, VoiceActivityDetector

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ListenSettings:
    """When an utterance is over."""

    tap_silence_s: float = 0.0
    """Extra silence after the detector's own end-of-speech before a tapped utterance ends."""
    hold_silence_s: float = 1.5
    """While the button is held, a pause this long ends the utterance anyway."""
    no_speech_timeout_s: float = 6.0
    """Give up if no speech starts within this long after the press."""
    max_utterance_s: float = 28.0
    """Longest utterance; Whisper sees at most 30 s, and a monologue must not block the speaker."""
    preroll_s: float = 0.3
    """Audio kept from before the detected speech start, so the first syllable is not cut."""
    tail_s: float = 0.25
    """Audio passed on after the detected speech end (the rest is held back unless speech resumes)."""


class Press:
    """One press of the push-to-talk button, as a turn sees it."""

    def __init__(self, pressed_at: float | None = None) -> None:
        self.pressed_at = time.monotonic() if pressed_at is None else pressed_at
        self.released_at: float | None = None

    def release(self, at: float | None = None) -> None:
        if self.released_at is None:
            self.released_at = time.monotonic() if at is None else at


class Outcome(str, Enum):
    ANSWERED = "answered"
    NO_SPEECH = "no_speech"
    NOT_UNDERSTOOD = "not_understood"
    NO_ANSWER = "no_answer"
    INTERRUPTED = "interrupted"
    FAILED = "failed"


@dataclass
class TurnResult:
    outcome: Outcome
    timeline: Timeline
    transcript: str = ""
    reply: str = ""
    spoken: list[str] = field(default_factory=list)
    unspoken: list[str] = field(default_factory=list)
    reply_audio_s: float = 0.0


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

    # -- control ---------------------------------------------------------------------------
    def start(self) -> asyncio.Task[TurnResult]:
        self._task = asyncio.create_task(self.run(), name="turn")
        return self._task

    def cancel(self) -> None:
        """Stop listening, thinking and speaking now; the speaker goes silent at once."""
        self.deps.speaker.interrupt()
        if self._task is not None and not self._task.done():
            self._task.cancel()

    async def run(self) -> TurnResult:
        try:
            await self._run()
        except asyncio.CancelledError:
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
        """Feed the microphone through the VAD into the recognizer until the utterance ends."""
        d, s, tl = self.deps, self.deps.listen, self.timeline
        rate = d.vad.sample_rate
        d.vad.reset()
        to_recognizer: asyncio.Queue[AudioChunk | None] = asyncio.Queue()

        async def utterance() -> AsyncIterator[AudioChunk]:
            while (chunk := await to_recognizer.get()) is not None:
                yield chunk

        async def recognize() -> str:
            final = ""
            async for hyp in d.recognizer.transcribe(utterance()):
                if hyp.is_final:
                    final = hyp.text.strip()
                    tl.mark("final_transcript", text=final)
                    self.emit(TranscriptFinal(final))
                else:
                    tl.mark("partial_transcript", text=hyp.text, stable_chars=hyp.stable_chars)
                    self.emit(TranscriptPartial(hyp.text))
            return final

        recognizer_task = asyncio.create_task(recognize(), name="recognize")
        history: list[np.ndarray] = []  # every sample since the press, for pre-roll and resumption
        total = 0  # samples seen
        forwarded = 0  # samples handed to the recognizer
        speech_start: int | None = None
        speech_end: int | None = None  # last end of speech while not speaking again
        speaking = False
        speech_start_at = 0.0

        origin: float | None = None  # monotonic time of the stream's first sample

        def at(sample: int) -> float:
            # Stream time, not arrival time: chunks arrive in bursts, samples do not.
            assert origin is not None
            return origin + sample / rate

        def forward_until(sample: int) -> None:
            nonlocal forwarded
            if sample <= forwarded:
                return
            audio = np.concatenate(history)[forwarded:sample]
            to_recognizer.put_nowait(AudioChunk(audio.astype(np.float32, copy=False), rate))
            forwarded = sample

        try:
            async for chunk in self.audio:
                now = time.monotonic()
                if chunk.sample_rate != rate:
                    raise ValueError(f"microphone gives {chunk.sample_rate} Hz, the detector needs {rate} Hz")
                if origin is None:
                    origin = now - chunk.duration
                history.append(chunk.samples)
                total += len(chunk.samples)
                for event in d.vad.accept(chunk.samples):
                    if event.speech:
                        speaking = True
                        if speech_start is None:
                            speech_start = event.sample
                            speech_start_at = at(event.sample)
                            tl.mark("speech_start", speech_start_at)
                            forwarded = max(0, event.sample - int(s.preroll_s * rate))
                        speech_end = None
                    else:
                        speaking = False
                        speech_end = event.sample
                        tl.mark("speech_end", at(event.sample))
                if speech_start is not None:
                    limit = total if speaking or speech_end is None else min(total, speech_end + int(s.tail_s * rate))
                    forward_until(limit)
                if speech_start is None:
                    if total / rate >= s.no_speech_timeout_s:
                        break
                    continue
                if (total - speech_start) / rate >= s.max_utterance_s:
                    log.info("utterance reached %.0f s; ending it", s.max_utterance_s)
                    tl.mark("utterance_capped")
                    break
                # Hold-to-talk: releasing after speech began ends the utterance exactly.
                # A tap before speaking means "listen until I stop": the detector decides.
                held = self.press.released_at is None
                tapped = not held and self.press.released_at < speech_start_at
                if speech_end is not None:
                    silence = (total - speech_end) / rate
                    if silence >= (s.hold_silence_s if held else s.tap_silence_s):
                        break
                if not held and not tapped:
                    break
            tl.mark("endpoint")
            if speech_start is None:
                recognizer_task.cancel()
                await asyncio.gather(recognizer_task, return_exceptions=True)
                return False, ""
            if speech_end is None:  # the button, the cap or the end of the source ended it mid-speech
                tl.mark("speech_end")
                forward_until(total)
            to_recognizer.put_nowait(None)
            return True, await recognizer_task
        finally:
            if not recognizer_task.done():
                recognizer_task.cancel()
                await asyncio.gather(recognizer_task, return_exceptions=True)

    # -- answering -------------------------------------------------------------------------
    async def _respond(self, text: str) -> None:
        d, tl = self.deps, self.timeline
        messages = [ChatMessage("system", d.system_prompt), *self.history, ChatMessage("user", text)]
        units: asyncio.Queue[int | None] = asyncio.Queue()
        reply_parts: list[str] = []
        splitter = SentenceSplitter()

        async def think() -> None:
            tl.mark("llm_start")
            try:
                async for piece in d.chat.stream(messages, d.max_reply_tokens):
                    tl.mark_once("first_token", text=piece)
                    reply_parts.append(piece)
                    self.emit(ReplyTextAppended(piece))
                    for unit in splitter.feed(piece):
                        units.put_nowait(self._add_unit(unit))
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
