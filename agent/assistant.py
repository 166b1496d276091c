"""The assistant across turns: one turn at a time, barge-in, and the conversation so far."""

from __future__ import annotations

import asyncio
import collections
import functools
import logging
import sqlite3
import time
from collections.abc import AsyncIterator, Callable

from agent.events import Event, State, StateChanged, ToolCalled, ToolStarted, TranscriptFinal, UnitSpoken
from agent.model.llm import ChatMessage
from agent.record import ConversationRecord, RecordEntry
from agent.timeline import Timeline
from agent.deciding.confirm import PendingAct
from agent.deciding.home_commands import home_things
from agent.deciding.undo import Act
from agent.deps import TurnDeps
from agent.listening.listen import Press
from agent.results import Outcome, TurnResult
from agent.turn import Turn
from audio.protocols import AudioChunk

log = logging.getLogger(__name__)

KEEP_RESULTS = 16
ANSWER_WINDOW_S = 60.0
"""How long a question hearth asked ("Cancel the pasta timer?") waits for its answer: the next
utterance within it answers; one after it is a new request."""
"""How many finished turns' results are kept in memory (the record on disk keeps them all)."""
THINGS_WINDOW_S = 120.0
"""How long the home's things a turn switched or asked about stay what "it" means in the turn
after: a "turn it off" said much later is no longer about them."""


def things_after(called: tuple[str, ...] | None, kept: tuple[str, ...], kept_at: float, now: float) -> tuple[tuple[str, ...], float]:
    """What "it" means after a turn, and since when: the home's things the turn's last tool
    switched or asked about (``called``; () for a tool of another kind or none called); before the
    next turn (``called`` None), the things kept while :data:`THINGS_WINDOW_S` has not passed. A
    turn that called no tool forgets them: "The dishwasher's packed, get it running" two turns
    after the lights is never about the lights."""
    if called is not None:
        return called, now
    return (kept, kept_at) if now - kept_at <= THINGS_WINDOW_S else ((), kept_at)


class Assistant:
    """Runs turns one after another; a new press cancels the turn in progress (barge-in).

    ``barge_in`` is what happens when the user speaks up while hearth is talking: "stop" cuts
    the reply off (what was not heard is kept as unspoken), "rush" says the rest at once with no
    pauses.  A press always stops the reply: the user is about to speak.  Every finished turn is
    appended to ``record``, unit by unit, heard or not.
    """

    def __init__(
        self,
        deps: TurnDeps,
        history_turns: int = 4,
        on_event: Callable[[Event], None] = lambda _e: None,
        barge_in: str = "stop",
        record: ConversationRecord | None = None,
    ) -> None:
        if barge_in not in ("stop", "rush"):
            raise ValueError(f"barge_in must be 'stop' or 'rush', not {barge_in!r}")
        self.deps = deps
        self.history_turns = history_turns
        self.on_event = on_event
        self.barge_in = barge_in
        self.record = record if record is not None else ConversationRecord.open(":memory:")
        """Where every turn is written as it happens, and where the history is read from."""
        self._since = 0
        """The first turn of the conversation the history is read from (see :meth:`forget`)."""
        self._numbers: dict[int, int] = {}
        """Each turn under way's number in the record."""
        self._settled: dict[int, int] = {}
        """Turns cut short: how many of their units were written then (the rest come at the end)."""
        self._ended: set[int] = set()
        """Turns recorded as interrupted by shutdown whose own end has not come yet: it writes nothing.
        A number leaves when that end comes, so the set stays as small as the turns still under way."""
        self._closed = False
        """The record is closed (shutdown): nothing more is read from it or written to it."""
        self.current: Turn | None = None
        self.results: collections.deque[TurnResult] = collections.deque(maxlen=KEEP_RESULTS)
        """The latest turns' results, newest last; bounded, since a speaker runs for months."""
        self.turns_started = 0
        """Turns started so far (presses and spoken starts): a ringing timer counts one as heard."""
        self.pending: PendingAct | None = None
        """An act the last turn asked about ("Cancel the pasta timer?"); the next utterance answers it,
        if it comes within :data:`ANSWER_WINDOW_S`."""
        self._pending_at = 0.0
        self.last_act: Act | None = None
        """The last act made (a timer, the list), which "undo that" takes back."""
        self.last_tool: str | None = None
        """The tool the last answered turn called, if any ("again" after a recipe step is the step)."""
        self.last_things: tuple[str, ...] = ()
        """The home's things the last answered turn switched or asked about, which "turn it off"
        means in the next turn, within :data:`THINGS_WINDOW_S`."""
        self._things_at = 0.0
        self._prewarming: asyncio.Task[int] | None = None
        """The reasoner's heads for the conversation as it stands, evaluated between turns."""
        self._announcing: asyncio.Task[None] | None = None
        self._announce_lock = asyncio.Lock()
        self._record_failing = False
        """The last write to the record failed (a full disk): the next failures are not logged again."""
        self._cut_by_voice: int | None = None
        """The turn the user's voice cut off last (:meth:`user_spoke`), until the next turn starts:
        a stop word recognized after it is recorded with that turn."""
        self.stops_heard = 0
        """Stop words heard so far (:meth:`stop_speaking`): a ringing timer counts one as heard."""

    @property
    def history(self) -> list[ChatMessage]:
        """The last ``history_turns`` exchanges as the listener heard them, read from the record."""
        if self._closed:
            return []
        try:
            exchanges = self.record.history(self.history_turns, since=self._since)
        except sqlite3.Error:
            log.exception("could not read the history from the conversation record")
            return []
        return [m for user, said in exchanges for m in (ChatMessage("user", user), ChatMessage("assistant", said))]

    def forget(self) -> None:
        """Start a new conversation: turns so far stay in the record but are no longer history, and
        a question left open is no longer waiting for its answer."""
        self._since = self.record.next_turn()
        self.pending = None

    def _take_pending(self) -> PendingAct | None:
        """The open question for the utterance starting now; one asked long ago is not taken: the
        next request after a silence is a request, not the answer ("장보기 목록에 뭘 넣을까요?" …
        half an hour later "타이머 10분 맞춰 줘" must not go on the list)."""
        pending, self.pending = self.pending, None
        if pending is not None and time.monotonic() - self._pending_at > ANSWER_WINDOW_S:
            log.info("the question about %s was left unanswered for over %.0f s; not waiting for it", pending.plan.tool, ANSWER_WINDOW_S)
            return None
        return pending

    async def warm(self) -> None:
        """Evaluate the fixed head of the prompt once, before the first press."""
        tools = self.deps.tools
        await self.deps.chat.warm(tools.planner.system_message() if tools is not None else self.deps.system_prompt)

    async def keep_heads(self) -> None:
        """Evaluate and keep the decision prompt's head for every tool (its fixed examples), so a
        request's first decision reads only its own words.  Any turn goes first: what is not kept
        by then is kept when first used."""
        tools = self.deps.tools
        keep = getattr(self.deps.chat, "keep_heads", None)
        if tools is None or not callable(keep):
            return
        started = time.monotonic()
        prompts = tools.planner.head_prompts()
        kept = await keep(prompts)
        log.info("kept %d of %d decision prompt heads in %.1f s", kept, len(prompts), time.monotonic() - started)
        self.prewarm()
        if self._prewarming is not None:
            await asyncio.gather(self._prewarming, return_exceptions=True)

    def prewarm(self) -> None:
        """Evaluate the reasoner's prompt heads for the conversation as it stands, in the background
        (the next press stops it): its system prompts, and the exchanges so far."""
        reasoner = self.deps.reasoner
        if reasoner is None or self._closed or not (self.deps.features.reasoner and self.deps.features.prewarm):
            return
        self._stop_prewarm()
        started, history = time.monotonic(), self.history

        async def prewarm() -> int:
            kept = await reasoner.prewarm(history)
            log.info("reasoner: %d prompt heads kept for %d exchanges in %.1f s", kept, len(history) // 2, time.monotonic() - started)
            return kept

        self._prewarming = asyncio.create_task(prewarm(), name="prewarm-reasoner")

    def _stop_prewarm(self) -> None:
        if self._prewarming is not None and not self._prewarming.done():
            self._prewarming.cancel()  # the model stops between slices; what it kept stays kept
        self._prewarming = None

    def interrupt(self) -> None:
        """Stop the turn in progress, if any; its speaker goes silent at once, and what the
        listener heard of it is in the record now (the next turn's history), not when it ends."""
        turn = self.current
        if turn is not None:
            turn.cancel()
            number = self._numbers.get(id(turn))
            if number is not None and number not in self._settled:
                units = turn.out.finish()  # tells the units heard to their end, as they were
                self._settled[number] = len(units)
                self._append(number, [RecordEntry(number, "assistant", u.text, u.status, u.kind) for u in units if u.status != "spoken"])

    async def settle(self, timeout_s: float = 3.0) -> None:
        """Wait (at most ``timeout_s``) for the turn in progress to end and be recorded.

        A turn that does not stop in time (a native call finishing the slice it is in) is
        recorded now as interrupted, with what was heard of it, so that shutdown can close the
        record: its late end writes nothing more."""
        turn = self.current
        if turn is None:
            return
        await asyncio.wait([asyncio.ensure_future(turn.wait())], timeout=timeout_s)
        await asyncio.sleep(0)  # the finished turn's callback records it
        number = self._numbers.get(id(turn))
        if self.current is turn and number is not None and number not in self._ended:
            log.warning("turn %d did not stop within %.1f s; recorded as interrupted", number, timeout_s)
            self.interrupt()  # what was heard of it, if not written yet
            self._ended.add(number)
            self._append(number, [RecordEntry(number, "turn", "", Outcome.INTERRUPTED.value)])

    def close(self) -> None:
        """Close the record, once the turn under way has settled: what happens later is not written."""
        self._stop_prewarm()
        self._closed = True
        self.record.close()

    def user_spoke(self) -> None:
        """The user started speaking while a reply plays: stop it, or rush through it."""
        turn = self.current
        if turn is None:
            return
        if self.barge_in == "rush":
            turn.rush()
        else:
            turn.timeline.mark("barge_in", mode="stop")
            self._cut_by_voice = self._numbers.get(id(turn))
            self.interrupt()

    def stop_speaking(self, said: str = "") -> bool:
        """The user said a stop word (``said``: "stop", "그만") over hearth: the reply and any
        announcement (a ringing timer) end now, and no turn starts.

        A reply still playing ("rush", or a stop word heard before any onset stopped it) is cut
        as by a press: recorded as interrupted, with its units not heard as cut or unspoken.
        ``said`` is recorded with the turn it stopped (role ``user``, status ``"stop"``: not
        history, the model never reads it as a request).  True if anything was playing."""
        stopped = False
        number = self._cut_by_voice
        turn = self.current
        # A text turn plays nothing to stop; one the onset cut is already silent (still current
        # until its task ends).
        if turn is not None and turn.transcript is None and (number is None or self._numbers.get(id(turn)) != number):
            turn.timeline.mark("barge_in", mode="stop_word")
            number = self._numbers.get(id(turn))
            self.interrupt()
            stopped = True
        if self._announcing is not None and not self._announcing.done():
            self._announcing.cancel()
            self.deps.speaker.interrupt()
            stopped = True
        self.stops_heard += 1
        self._cut_by_voice = None
        if said and number:
            self._append(number, [RecordEntry(number, "user", said, "stop")])
        log.info("stopped by a stop word: %r%s", said, "" if stopped else " (nothing was playing)")
        return stopped

    def start_turn(self, audio: AsyncIterator[AudioChunk], press: Press, timeline: Timeline | None = None) -> Turn:
        """Cancel whatever is going on and start listening to a new utterance."""
        self.interrupt()
        self._stop_prewarm()
        if self._announcing is not None and not self._announcing.done():
            # A press during an announcement (a timer ringing) silences it: the user heard it.
            self._announcing.cancel()
            self.deps.speaker.interrupt()
        self.turns_started += 1
        self._cut_by_voice = None
        # The question is answered by the very next utterance or not at all.
        pending = self._take_pending()
        number = self._begin_turn()
        turn = Turn(
            self.deps,
            audio,
            press,
            # Read after the turn cut short above has told what was heard of it: its exchange is
            # this turn's history.
            history=self.history,
            emit=functools.partial(self._turn_event, number),
            timeline=timeline or Timeline(press.pressed_at),
            pending=pending,
            last_act=self.last_act,
            last_tool=self.last_tool,
            last_things=self._things(),
        )
        self._launch(turn, number)
        return turn

    def start_text_turn(self, text: str, emit: Callable[[Event], None], deps: TurnDeps) -> Turn:
        """Start answering ``text`` now with ``deps`` (the assistant's own, with a text-only output);
        ``emit`` gets the turn's events once they are recorded.  Only for when no turn is under way
        (:class:`agent.text_turns.TextTurns` waits for that)."""
        self._stop_prewarm()
        pending = self._take_pending()
        number = self._begin_turn()
        # Its units go back as text to whoever asked; none is played, so none is recorded spoken.
        record = functools.partial(self._turn_event, number, unit_status="told")

        def tell(event: Event) -> None:
            if not isinstance(event, StateChanged):  # the kitchen's light and ears follow spoken turns only
                record(event)
            emit(event)

        turn = Turn(
            deps,
            _no_audio(),
            Press(),
            history=self.history,
            emit=tell,
            pending=pending,
            last_act=self.last_act,
            last_tool=self.last_tool,
            last_things=self._things(),
            transcript=text,
        )
        self._launch(turn, number)
        return turn

    async def until_idle(self) -> None:
        """Wait until no turn is under way and the last one has been recorded."""
        while (turn := self.current) is not None:
            if turn.task is not None:
                await asyncio.wait([turn.task])
            await asyncio.sleep(0)  # let the finished turn's callback clear ``current``

    def _launch(self, turn: Turn, number: int) -> None:
        self.current = turn
        self._numbers[id(turn)] = number
        task = turn.start()
        task.add_done_callback(lambda t, turn=turn: self._finished(turn, t, number))

    async def handle(self, audio: AsyncIterator[AudioChunk], press: Press, timeline: Timeline | None = None) -> TurnResult:
        """Run one turn to its end and return what happened."""
        turn = self.start_turn(audio, press, timeline)
        assert turn.task is not None
        return await turn.task

    async def announce(self, text: str, sound: AudioChunk | None = None) -> bool:
        """Say ``text`` (after ``sound``) once no turn is in progress; False if a press cut it short.

        An announcement never talks over a turn: it waits until the user has been answered,
        so nothing hearth is saying is cut off mid-word.  Announcements queue one after another.
        """
        async with self._announce_lock:
            while (turn := self.current) is not None:
                await asyncio.wait([asyncio.ensure_future(turn.wait())])
                await asyncio.sleep(0)  # let the finished turn's callback clear ``current``
            task = asyncio.create_task(self._speak_announcement(text, sound), name="announcement")
            self._announcing = task
            try:
                await task
            except asyncio.CancelledError:
                current = asyncio.current_task()
                if current is not None and current.cancelling():
                    raise  # we were cancelled ourselves (shutdown), not just the announcement
            finally:
                self._announcing = None
            return not task.cancelled()

    async def _speak_announcement(self, text: str, sound: AudioChunk | None) -> None:
        speaker = self.deps.speaker
        self.on_event(StateChanged(State.SPEAKING))
        try:
            if sound is not None:
                await speaker.write(sound)
            async for chunk in self.deps.synthesizer.synthesize(text):
                await speaker.write(chunk)
            await speaker.drain()
            log.info("announced: %r", text)
        finally:
            if self.current is None:
                self.on_event(StateChanged(State.IDLE))

    def _things(self) -> tuple[str, ...]:
        """What "it" means for the next turn: the last things, while they are recent."""
        return things_after(None, self.last_things, self._things_at, time.monotonic())[0]

    def _finished(self, turn: Turn, task: asyncio.Task[TurnResult], number: int = 0) -> None:
        self._numbers.pop(id(turn), None)
        if task.cancelled():
            if self.current is turn:
                self.current = None
            return
        result = task.result()
        result.record_turn = number
        self.results.append(result)
        if result.outcome == Outcome.ANSWERED and self.current is turn:
            self.pending = result.pending
            self._pending_at = time.monotonic()
        if result.outcome == Outcome.ANSWERED and not result.repeated:
            ran = [c for c in result.tool_calls if c.ran]
            self.last_tool = ran[-1].name if ran else None
            self.last_things, self._things_at = things_after(
                home_things(ran[-1].name, ran[-1].data) if ran else (), self.last_things, self._things_at, time.monotonic())
        acts = [c for c in result.tool_calls if c.acted]
        if acts:
            self.last_act = Act(acts[-1].name, dict(acts[-1].args), dict(acts[-1].data))
        self._end_turn(number, result)
        if self.current is turn:
            self.current = None
            if turn.transcript is None:
                self.on_event(StateChanged(State.IDLE))
            self.prewarm()
        log.info("turn %s: %r -> %r", result.outcome.value, result.transcript, result.reply)

    # -- the record, as it happens --------------------------------------------------------
    def _begin_turn(self) -> int:
        if self._closed:
            return 0
        try:
            return self.record.begin_turn()
        except sqlite3.Error as exc:
            self._record_failed("could not start a turn in the conversation record", exc)
            return 0

    def _turn_event(self, number: int, event: Event, unit_status: str = "spoken") -> None:
        """A turn's event: what the record keeps of it is written now, then it goes on.  ``unit_status``:
        the status a unit gets once the listener has it ("told" for a text turn's)."""
        entry: RecordEntry | None = None
        if isinstance(event, TranscriptFinal) and event.text:
            # Words given as text (Home Assistant's handle) were not heard in the kitchen.
            entry = RecordEntry(number, "user", event.text, "typed" if event.typed else "heard")
        elif isinstance(event, UnitSpoken):
            entry = RecordEntry(number, "assistant", event.text, unit_status, event.kind)
        elif isinstance(event, ToolStarted):
            entry = RecordEntry(number, "tool", event.name, "started", event.name,
                                data={"args": event.args, "origin": event.origin})
        elif isinstance(event, ToolCalled):
            entry = RecordEntry(number, "tool", event.name, event.status, event.name,
                                data={"args": event.args, **event.data, "origin": event.origin})
        if entry is not None:
            self._append(number, [entry])
        self.on_event(event)

    def _end_turn(self, number: int, result: TurnResult) -> None:
        """What was not heard to its end (unless written when it was cut short), and how the turn ended."""
        written = self._settled.pop(number, 0)
        if number in self._ended:
            self._ended.discard(number)
            return  # recorded at shutdown, as it stood then
        entries = [
            RecordEntry(number, "assistant", unit.text, unit.status, unit.kind) for unit in result.units[written:] if unit.status != "spoken"]
        entries.append(RecordEntry(number, "turn", "", result.outcome.value))
        self._append(number, entries)

    def _append(self, number: int, entries: list[RecordEntry]) -> None:
        if self._closed:
            log.debug("turn %d: %d entries after the record was closed, not written", number, len(entries))
            return
        try:
            self.record.append(entries)
        except Exception as exc:  # noqa: BLE001 - a full disk must not take the conversation down
            self._record_failed(f"could not append to turn {number} of the conversation record", exc)
        else:
            if self._record_failing:
                self._record_failing = False
                log.warning("the conversation record is written again (turn %d)", number)

    def _record_failed(self, what: str, exc: Exception) -> None:
        """One line when the record stops taking writes, not one per unit while it stays so."""
        if self._record_failing:
            log.debug("%s: %s", what, exc)
            return
        self._record_failing = True
        log.error("%s: %s; hearth goes on without it", what, " ".join(str(exc).split()) or type(exc).__name__)


async def _no_audio() -> AsyncIterator[AudioChunk]:
    """The microphone of a turn given its words: it is never listened to."""
    return
    yield  # an async generator with nothing in it
