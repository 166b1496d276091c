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
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import replace
from typing import TypeVar

from agent.deciding.confirm import PendingAct
from agent.deciding.intents import is_backchannel
from agent.deciding.reasoner import EarlyReading
from agent.deciding.responder import Responder
from agent.deciding.speculation import SpeculativeRecord
from agent.deciding.thinker import Thinker
from agent.deciding.tool_use import spoken_result
from agent.deciding.undo import Act
from agent.deps import TurnDeps
from agent.events import Event, State, StateChanged, TranscriptFinal, TranscriptPartial, TurnFailed, TurnInterrupted, UtteranceEnded
from agent.listening.hearing import SURE, Hearing
from agent.listening.listen import Press, UtteranceListener
from agent.model.llm import ChatMessage, stopped_at_cap
from agent.results import Outcome, TurnResult
from agent.speaking.cadence import Cadence
from agent.speaking.foresight import Foresight, first_unit
from agent.speaking.phrases import Phrase, phrase
from agent.speaking.reply import ReplyPath
from agent.speaking.speech_out import UnitSpeaker
from agent.timeline import Timeline
from audio.protocols import AudioChunk, AudioDeviceError

__all__ = ["StageFailed", "Turn", "device_lost"]

log = logging.getLogger(__name__)

T = TypeVar("T")
E = TypeVar("E", bound=BaseException)

_APOLOGIES = {"hearing": Phrase.FAILED_HEARING, "answer": Phrase.FAILED_ANSWER, "voice": Phrase.FAILED_VOICE}
_STAGE_WORDS = {"hearing": "hearing the user", "answer": "the answer", "voice": "speaking"}


class StageFailed(Exception):
    """A stage of the turn raised; ``stage`` says which (for the apology and the log), the cause is chained."""

    def __init__(self, stage: str, cause: BaseException) -> None:
        while isinstance(cause, BaseExceptionGroup):  # the stage's own task group: its first error says what
            cause = cause.exceptions[0]
        super().__init__(f"{type(cause).__name__}: {' '.join(str(cause).split())}")
        self.stage = stage


async def _in_stage(stage: str, work: Awaitable[T]) -> T:
    try:
        return await work
    except StageFailed:
        raise
    except Exception as exc:
        if device_lost(exc) is not None:
            raise  # a lost sound device has its own ending: no apology into a dead speaker
        raise StageFailed(stage, exc) from exc


def _stage_of(exc: BaseException) -> StageFailed | None:
    """The stage failure in ``exc`` (a task group wraps it in an exception group), if any."""
    return _first_of(exc, StageFailed)


def _first_of(exc: BaseException, kind: type[E]) -> E | None:
    """``exc`` if it is a ``kind``, else the first ``kind`` inside it (task groups nest their errors)."""
    if isinstance(exc, kind):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        found, _rest = exc.split(kind)
        while isinstance(found, BaseExceptionGroup):
            found = found.exceptions[0]
        return found
    return None



class Turn:
    """Listen to one utterance, answer it aloud; ``cancel()`` stops everything.

    Given its ``transcript`` (words typed, or heard by another recognizer), a turn does not listen:
    it answers those words at once, and its units are told as soon as they are written, with no
    pauses (its deps' synthesizer and speaker are a text-only output: nothing plays).
    """

    def __init__(
        self,
        deps: TurnDeps,
        audio: AsyncIterator[AudioChunk],
        press: Press,
        history: Sequence[ChatMessage] = (),
        emit: Callable[[Event], None] = lambda _e: None,
        timeline: Timeline | None = None,
        pending: PendingAct | None = None,
        last_act: Act | None = None,
        last_tool: str | None = None,
        last_things: tuple[str, ...] = (),
        transcript: str | None = None,
    ) -> None:
        self.deps = deps
        self.transcript = transcript
        """The words to answer, for a turn that does not listen; None: listen to ``audio``."""
        self.last_tool = last_tool
        """The tool the turn before called ("recipe_step": "again" means the step again)."""
        self.last_act = last_act
        """The last act made in this conversation, which "undo that" takes back."""
        self.last_things = last_things
        """The home's things the turn before switched or asked about ("Is the fan on?" then "turn it off")."""
        self.pending = pending
        """The act the turn before asked about; this utterance may answer it."""
        self.audio = audio
        self.press = press
        self.history = list(history)
        self.emit = emit
        self.timeline = timeline or Timeline()
        self.result = TurnResult(Outcome.FAILED, self.timeline)
        self._task: asyncio.Task[TurnResult] | None = None
        self.out = self._unit_speaker()
        """What the turn says, and what of it was heard."""
        self._cancelled = False
        self._committed = asyncio.Event()
        """Set once the user has surely finished: until then nothing is said and no tool runs."""
        self._whole_request: asyncio.Future[bool] | None = None
        """After an early end: whether what the words ask for is whole, once the answer's decision
        knows (see :meth:`_watch`)."""
        self._thinker: Thinker | None = None
        self._reading: EarlyReading | None = None
        self.speculation: SpeculativeRecord | None = None
        """What the Thinker thought and fetched while the user spoke, handed over at the end of speech."""
        self.foresight = self._foresight()
        """Makes ahead the audio of what a call will say first; None where the voice cannot."""
        self.hearing: Hearing = SURE
        """How sure the words being answered were heard (typed words are sure)."""

    # -- control ---------------------------------------------------------------------------
    def start(self) -> asyncio.Task[TurnResult]:
        self._task = asyncio.create_task(self.run(), name="turn")
        return self._task

    @property
    def task(self) -> asyncio.Task[TurnResult] | None:
        """The turn's task once started: its end is the turn's end."""
        return self._task

    async def wait(self) -> TurnResult:
        """The result, once the turn is over (started or not)."""
        return await (self._task or self.start())

    def cancel(self) -> None:
        """Stop listening, thinking and speaking now; the speaker goes silent at once."""
        self._cancelled = True
        self.out.stop(time.monotonic())
        self.deps.speaker.interrupt()
        if self._task is not None and not self._task.done():
            self._task.cancel()

    def rush(self) -> None:
        """The user spoke up: say the rest of the reply at once, with no more pauses."""
        if not self.out.rushing:
            self.out.rush()
            self.timeline.mark("barge_in", mode="rush")

    async def run(self) -> TurnResult:
        try:
            await self._run()
        except asyncio.CancelledError:
            if not self._cancelled:
                # Cancelled from outside (shutdown): still nothing more may be heard. After
                # cancel() this is skipped, since the next turn may own the speaker by now.
                self.out.stop(time.monotonic())
                self.deps.speaker.interrupt()
            self.timeline.mark("interrupted")
            self.result.outcome = Outcome.INTERRUPTED
            self._finish_units()
            self.emit(TurnInterrupted(tuple(self.result.unspoken)))
            # The turn is over either way; its owner decides what happens next.
        except Exception as exc:  # noqa: BLE001 - a turn must never take the loop down
            if (lost := device_lost(exc)) is not None:
                # The speaker is gone: nothing more can be said; what was not heard is recorded so.
                log.warning("turn ended: %s", lost)
                self.emit(TurnFailed(str(lost), "voice"))
                self.result.outcome = Outcome.FAILED
                self._finish_units()
                return self.result
            failed = _stage_of(exc)
            stage = failed.stage if failed is not None else ""
            reason = f"{_STAGE_WORDS.get(stage, 'unknown stage')}: {failed if failed is not None else repr(exc)}"
            log.error("turn failed in %s", reason, exc_info=exc)
            self.emit(TurnFailed(reason, stage))
            self.result.outcome = Outcome.FAILED
            await self._say_phrase(_APOLOGIES.get(stage, Phrase.FAILED))
        return self.result

    # -- the turn --------------------------------------------------------------------------
    async def _run(self) -> None:
        if self.transcript is not None:
            await self._answer_transcript(self.transcript)
            return
        self.emit(StateChanged(State.LISTENING))
        self._thinker = self._start_thinker()
        d = self.deps
        if d.reasoner is not None and d.tools is not None and d.features.reasoner and d.features.read_ahead:
            self._reading = EarlyReading(d.reasoner, self.history, self.timeline)
        try:
            await self._listen_and_answer()
        finally:
            if self._thinker is not None:
                # Early calls nobody used stop with the turn; the ones used are done by now.
                await self._thinker.close()
            if self._reading is not None:
                await self._reading.close()

    def _start_thinker(self) -> Thinker | None:
        tools = self.deps.tools
        if tools is None or tools.lane is None or not self.deps.features.heartbeat:
            return None
        settings = tools.thinker if self.deps.features.finish_newest else replace(tools.thinker, finish_newest=False)
        thinker = Thinker(tools.planner, tools.lane, self.history, self.timeline, settings, emit=self.emit, foresight=self.foresight)
        thinker.start()
        return thinker

    def _heard(self, event: Event) -> None:
        if self._thinker is not None:
            if isinstance(event, TranscriptPartial):
                self._thinker.hear(event.text)
            elif isinstance(event, UtteranceEnded):
                self._thinker.user_finished()
        if self._reading is not None:
            if isinstance(event, TranscriptPartial):
                self._reading.hear(event.text)
            elif isinstance(event, UtteranceEnded) and self.deps.tools is not None and self.deps.tools.thinker.stop_at_end:
                self._reading.stop()  # the final decode needs the CPU; what was read stays cached
        self.emit(event)

    async def _listen_and_answer(self) -> None:
        listener = self._listener()
        heard_speech, text = await _in_stage("hearing", listener.run(self.audio))
        while True:
            if self._thinker is not None:
                self.speculation = await self._thinker.handoff(text)
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
            self.hearing = listener.hearing if self.deps.features.hearing_confidence else SURE
            if self.hearing.verdict == "unheard":
                # Words, but too poorly heard to answer or act on: asked again, nothing done. A
                # question hearth asked stays open, so the user can say their answer again.
                self.timeline.mark("not_heard", text=text, confidence=round(self.hearing.confidence, 3))
                self.result.outcome = Outcome.NOT_UNDERSTOOD
                self.result.pending = self.pending
                await self._say_phrase(Phrase.NOT_HEARD)
                return
            if listener.ended_by != "finished":
                self._committed.set()
                await self._respond(text)
                return
            # An early end is a head start: think now, but say and do nothing until the silence
            # is long enough to be sure; if the user goes on, drop it all and hear them out.
            self._whole_request = asyncio.get_running_loop().create_future()
            responding = asyncio.create_task(self._respond(text), name="respond")
            try:
                resumed = await _in_stage("hearing", self._watch(listener, text, responding))
            except BaseException:
                responding.cancel()
                await asyncio.gather(responding, return_exceptions=True)
                raise
            if not resumed:
                self._committed.set()
                await responding
                return
            responding.cancel()
            await asyncio.gather(responding, return_exceptions=True)
            self._start_over()
            self.emit(StateChanged(State.LISTENING))
            if self._thinker is not None:
                self._thinker.start()  # the user goes on: so does the thinking, with what it has
            heard_speech, text = await _in_stage("hearing", listener.carry_on())

    async def _watch(self, listener: UtteranceListener, text: str, responding: asyncio.Task[None]) -> bool:
        """After an early end: listen until the silence is long enough to answer (a sure end's
        short one, unless what the words ask for turns out not to be whole: "Set a timer."); True
        when the user went on."""
        unsure = self.deps.listen.turn_end.end_silence_s
        wait = listener.answer_after_s(text)
        if await listener.watch(wait):
            return True
        known = self._whole_request
        if wait < unsure and known is not None:
            # The decision is ready by now on most turns (the Thinker's, or one of ~0.2 s).
            await asyncio.wait([known, responding], return_when=asyncio.FIRST_COMPLETED)
            whole = known.result() if known.done() else True
            if not whole:
                self.timeline.mark("answer_after", silence_s=unsure, sure=False, call=False)
                return await listener.watch(unsure)
        return False

    def _decided(self, whole: bool) -> None:
        if self._whole_request is not None and not self._whole_request.done():
            self._whole_request.set_result(whole)

    async def _answer_transcript(self, text: str) -> None:
        """Words given, not heard: the user has surely finished, so the answer starts at once."""
        self.timeline.mark("final_transcript", text=text, typed=True)
        self.emit(TranscriptFinal(text, typed=True))
        self.result.transcript = text
        self.emit(StateChanged(State.THINKING))
        if not text.strip():
            self.result.outcome = Outcome.NOT_UNDERSTOOD
            await self._say_phrase(Phrase.NOT_UNDERSTOOD)
            return
        self._committed.set()
        await self._respond(text)

    def _start_over(self) -> None:
        """Forget the reply prepared for an utterance that turned out to go on."""
        self.result = TurnResult(Outcome.FAILED, self.timeline)
        self.out = self._unit_speaker()

    def _unit_speaker(self) -> UnitSpeaker:
        d, text_only = self.deps, self.transcript is not None
        return UnitSpeaker(d.synthesizer, d.speaker, self.timeline, self.emit, paced=d.features.cadence and not text_only, at_once=text_only)

    # -- listening -------------------------------------------------------------------------
    def _listener(self) -> UtteranceListener:
        d = self.deps
        context = ""
        if d.speech_context is not None and d.features.asr_bias:
            try:
                context = d.speech_context()
            except Exception:  # noqa: BLE001 - hearing without the household's words beats not hearing
                log.exception("could not read the words to listen for")
        return UtteranceListener(
            d.vad, d.recognizer, d.listen, self.press, self.timeline, self._heard,
            features=d.features, turn_model=d.turn_model, language=d.language, context=context,
        )

    # -- answering -------------------------------------------------------------------------
    async def _respond(self, text: str) -> None:
        if self.pending is None and is_backchannel(text, self.deps.language):
            self.timeline.mark("backchannel", text=text)
            self.result.outcome = Outcome.BACKCHANNEL  # folded into the conversation: no reply, no exchange
            return
        units: asyncio.Queue[int | None] = asyncio.Queue()
        reply = self._reply_path(units)
        self.result.outcome = Outcome.ANSWERED
        think: Callable[[str, ReplyPath], Awaitable[None]] = self._think
        if self.deps.tools is not None:
            responder = Responder(
                self.deps, self.timeline, self.result, self._committed, self.history,
                pending=self.pending, last_act=self.last_act, last_tool=self.last_tool, last_things=self.last_things,
                speculation=self.speculation, emit=self.emit,
                hearing=self.hearing, on_decided=self._decided, foresight=self.foresight,
            )
            think = responder.without_model(text) or responder.think
            if think != responder.think:
                self._decided(True)  # no decision to wait for: an answer to a question, an undo
        else:
            self._decided(True)
        try:
            async with asyncio.TaskGroup() as group:
                group.create_task(_in_stage("answer", think(text, reply)), name="think")
                group.create_task(_in_stage("voice", self._speak_when_sure(units)), name="speak")
        finally:
            # Also on cancellation: what the model wrote but nobody heard is part of the record.
            reply.close()
            self.result.reply = reply.text.strip()
            self.result.reply_sources = list(reply.sources)
        if reply.gave_nothing:
            self.result.outcome = Outcome.NO_ANSWER
        self._finish_units()

    def _reply_path(self, units: asyncio.Queue[int | None]) -> ReplyPath:
        d = self.deps
        return ReplyPath(self.out, d.filters(), self._cadence(), units, d.language, self.emit)

    def _cadence(self) -> Cadence:
        d = self.deps
        return Cadence(d.cadence if d.features.cadence else replace(d.cadence, enabled=False), d.pace)

    def _foresight(self) -> Foresight | None:
        d = self.deps
        if d.voice_ahead is None or d.tools is None or not d.features.ready_voice:
            return None
        return Foresight(
            d.voice_ahead, d.tools.registry, lambda text: first_unit(text, d.filters(), self._cadence()),
            lambda result: spoken_result(result, d.language), self.timeline,
        )

    async def _speak_when_sure(self, units: asyncio.Queue[int | None]) -> None:
        await self._committed.wait()
        await self.out.speak(units)

    async def _think(self, text: str, reply: ReplyPath) -> None:
        d, tl = self.deps, self.timeline
        messages = [ChatMessage("system", d.system_prompt), *self.history, ChatMessage("user", text)]
        tl.mark("llm_start")
        reply.source = "talker"  # no tools: the chat model is the whole answer
        try:
            count = 0
            async for piece in d.chat.stream(messages, d.max_reply_tokens):
                tl.mark_once("first_token", text=piece)
                count += 1
                reply.feed_counted(piece, count, d.max_reply_tokens)
            if stopped_at_cap(d.chat):
                tl.mark("reply_token_cap", tokens=d.max_reply_tokens)
                reply.cut_short()  # its last sentence was cut off at the cap: not said
            else:
                reply.flush()
        finally:
            tl.mark("llm_end")
        reply.end()

    async def _say_phrase(self, which: Phrase) -> None:
        units: asyncio.Queue[int | None] = asyncio.Queue()
        units.put_nowait(self.out.add(phrase(self.deps.language, which), "phrase"))
        units.put_nowait(None)
        try:
            await self.out.speak(units)
        except Exception as exc:  # noqa: BLE001 - the apology itself failed; the log is all that is left
            if (lost := device_lost(exc)) is not None:
                log.warning("could not speak %s: %s", which.value, lost)
            else:
                log.exception("could not speak %s", which.value)
        self._finish_units()

    def _finish_units(self) -> None:
        units = self.out.finish()
        self.result.units = units
        self.result.spoken = [u.text for u in units if u.status != "unspoken"]
        self.result.unspoken = [u.text for u in units if u.status == "unspoken"]
        self.result.reply_audio_s = self.out.audio_s


def device_lost(exc: BaseException) -> AudioDeviceError | None:
    """The lost sound device that alone caused ``exc`` (raised from tasks of a group), if that is what it was."""
    if isinstance(exc, BaseExceptionGroup) and exc.split(AudioDeviceError)[1] is not None:
        return None  # something else went wrong as well: that is the turn's failure
    return _first_of(exc, AudioDeviceError)
