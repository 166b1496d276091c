"""The assistant across turns: one turn at a time, barge-in, and the conversation so far."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable

from agent.events import Event, State, StateChanged
from agent.llm import ChatMessage
from agent.timeline import Timeline
from agent.turn import Outcome, Press, Turn, TurnDeps, TurnResult
from audio.protocols import AudioChunk

log = logging.getLogger(__name__)


class Assistant:
    """Runs turns one after another; a new press cancels the turn in progress (barge-in)."""

    def __init__(
        self,
        deps: TurnDeps,
        history_turns: int = 4,
        on_event: Callable[[Event], None] = lambda _e: None,
    ) -> None:
        self.deps = deps
        self.history_turns = history_turns
        self.on_event = on_event
        self.history: list[ChatMessage] = []
        self.current: Turn | None = None
        self.results: list[TurnResult] = []

    async def warm(self) -> None:
        """Evaluate the system prompt once, before the first press."""
        await self.deps.chat.warm(self.deps.system_prompt)

    def interrupt(self) -> None:
        """Stop the turn in progress, if any; its speaker goes silent at once."""
        if self.current is not None:
            self.current.cancel()

    def start_turn(self, audio: AsyncIterator[AudioChunk], press: Press, timeline: Timeline | None = None) -> Turn:
        """Cancel whatever is going on and start listening to a new utterance."""
        self.interrupt()
        turn = Turn(
            self.deps,
            audio,
            press,
            history=self.history,
            emit=self.on_event,
            timeline=timeline or Timeline(press.pressed_at),
        )
        self.current = turn
        task = turn.start()
        task.add_done_callback(lambda t, turn=turn: self._finished(turn, t))
        return turn

    async def handle(self, audio: AsyncIterator[AudioChunk], press: Press, timeline: Timeline | None = None) -> TurnResult:
        """Run one turn to its end and return what happened."""
        turn = self.start_turn(audio, press, timeline)
        assert turn._task is not None
        return await turn._task

    def _finished(self, turn: Turn, task: asyncio.Task[TurnResult]) -> None:
        if task.cancelled():
            if self.current is turn:
                self.current = None
            return
        result = task.result()
        self.results.append(result)
        if result.transcript and result.outcome in (Outcome.ANSWERED, Outcome.INTERRUPTED):
            # Only what the listener heard goes into the history: the model must not
            # believe it said something that was cut off.
            spoken = " ".join(result.spoken) if result.outcome == Outcome.INTERRUPTED else result.reply
            self.history += [ChatMessage("user", result.transcript), ChatMessage("assistant", spoken)]
            self.history = self.history[-2 * self.history_turns :]
        if self.current is turn:
            self.current = None
            self.on_event(StateChanged(State.IDLE))
        log.info("turn %s: %r -> %r", result.outcome.value, result.transcript, result.reply)
