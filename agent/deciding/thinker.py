"""Heartbeat: think about the request, and fetch what it needs, while the user is still speaking.

Every ``interval_s`` the Thinker looks at the latest partial transcript.  When the words have
changed since its last look, or an early tool call has finished, it asks the planner for a
decision on those words, the same grammar-constrained decision the answer uses.  The decision is
recorded first; then, when it names a tool that is declared speculable (a look-up that changes
nothing), the call runs on its own lane, so a slow early read never delays the user's own call.

Nothing is ever done on a partial transcript: an acting tool is never called here, and the
speculative lane refuses one even if asked.  At most ``max_in_flight`` decisions are under way at
once; a look that finds every slot busy is skipped, and new words never interrupt a decision in
flight, they feed the next.  At the handoff (the user has finished) the Thinker stops, cuts short
the decisions still under way, and hands over its record; early calls still running go on, for
the Responder to wait on rather than ask again.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from agent.deciding.speculation import Decision, SpeculativeCall, SpeculativeRecord, call_key
from agent.deciding.tool_calls import ToolCallPlanner
from agent.events import EarlyCall, Event, Thought
from agent.listening.hearing import words_of
from agent.model.llm import ChatMessage
from agent.timeline import Timeline
from tools.executor import ToolExecutor
from tools.registry import NO_TOOL

log = logging.getLogger(__name__)


class Foreseeing(Protocol):
    """What makes ahead the audio of a decision's first words (:class:`agent.speaking.foresight.Foresight`)."""

    def act(self, tool: str, args: dict[str, Any]) -> None:
        """An act about to be made."""
        ...

    def result(self, result: Any) -> None:
        """A call's result already back."""
        ...


@dataclass(frozen=True)
class ThinkerSettings:
    """How often and how much the Thinker thinks while the user speaks."""

    interval_s: float = 0.5
    """Δ: how often the latest partial transcript is looked at."""
    max_in_flight: int = 1
    """K: decisions under way at once; a look that finds every slot busy is skipped. With one model
    a second decision can only wait for the first, and then decides on words already old, so one
    is the default; more pays with a model instance per decision."""
    min_words: int = 2
    """Fewer words than this are not worth a decision ("What's")."""
    stop_at_end: bool = True
    """Cut short the decisions under way as soon as the user has finished, before the final
    transcript is decoded: on a few cores the final decode needs them, and what a cut decision
    evaluated stays in the model's cache for the answer's. False lets them run to the handoff."""
    finish_newest: bool = True
    """At the end, the decision on the newest partial's words is not cut short but runs on, and
    one is started on them if none was: on most turns the final transcript has those very words,
    and the answer then takes that decision instead of making it again. Decisions on older words
    are cut short, and so is this one when the final's words turn out to differ."""


def example_key(planner: Any, text: str) -> tuple[str, ...] | None:
    """The tool of the example nearest ``text`` (what the examples shown for it are about), when the
    planner picks its examples per request; None otherwise."""
    tools_for = getattr(getattr(planner, "examples", None), "tools_for", None)
    return tuple(tools_for(text, 1)) if callable(tools_for) else None


class Thinker:
    """Decisions and early look-ups on the partial transcripts of one utterance."""

    def __init__(
        self,
        planner: ToolCallPlanner,
        lane: ToolExecutor,
        history: Sequence[ChatMessage],
        timeline: Timeline,
        settings: ThinkerSettings = ThinkerSettings(),
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        clock: Callable[[], float] = time.monotonic,
        emit: Callable[[Event], None] = lambda _e: None,
        foresight: Foreseeing | None = None,
    ) -> None:
        self.emit = emit
        """Where each decision and early look-up is told, for the live view."""
        self.foresight = foresight
        """Once the user has finished, the decision on their newest words has its first words made
        into audio ahead (:mod:`agent.speaking.foresight`): an act's confirmation, an early answer."""
        self.planner = planner
        self.lane = lane
        self.history = list(history)
        self.timeline = timeline
        self.settings = settings
        self._sleep = sleep
        self.clock = clock
        self.record = SpeculativeRecord(lane.registry, clock)
        self.calls = 0
        """Decisions started."""
        self.skipped = 0
        """Looks that found new words but every slot busy."""
        self._latest = ""
        self._considered = ""
        self._tool_finished = False
        self._in_flight: dict[asyncio.Task[None], str] = {}
        """Decisions under way, and the words (:func:`words_of`) each decides on."""
        self._pinned: tuple[tuple[str, ...] | None, Sequence[Any]] | None = None
        self._loop: asyncio.Task[None] | None = None
        self._stopped = False
        self._stopping: set[asyncio.Task[None]] = set()
        """Tasks cancelled and not yet waited for."""

    # -- control -----------------------------------------------------------------------
    def start(self) -> None:
        """Start looking (again, after a handoff the user turned out to talk past: the record,
        and what was fetched, carry on)."""
        self._stopped = False
        if self._loop is None:
            self._loop = asyncio.create_task(self._run(), name="thinker")

    def hear(self, text: str) -> None:
        """A newer partial transcript."""
        self._latest = text

    def stop(self, keep: str | None = None) -> None:
        """Stop looking and cut short the decisions under way, now, but one on the words ``keep``
        (:meth:`handoff` waits for them)."""
        self._stopped = True
        loop, self._loop = self._loop, None
        if loop is not None:
            loop.cancel()
            self._stopping.add(loop)
        pending = [t for t, words in self._in_flight.items() if not t.done() and t not in self._stopping and words != keep]
        for task in pending:
            task.cancel()
        self._stopping.update(pending)
        self.record.cancelled += len(pending)
        if pending:
            self.timeline.mark("heartbeat_cancelled", count=len(pending))

    def user_finished(self) -> None:
        """The listener has decided the user finished: the final decode is next."""
        if not self.settings.stop_at_end:
            return
        newest = words_of(self._latest) if self.settings.finish_newest else None
        self.stop(keep=newest)
        self._foresee_newest()
        if not newest:
            return
        if not self._deciding_on(newest) and self._worth(self._latest, newest):
            self._start(self._latest, newest)  # the last words came after the last look
        if self._deciding_on(newest):
            self.timeline.mark("heartbeat_finishing", text=self._latest)

    def _newest_decision(self) -> Decision | None:
        """The latest decision, when it was on the newest words heard."""
        latest = self.record.latest_decision()
        return latest if latest is not None and words_of(latest.heard) == words_of(self._latest) else None

    def _is_newest(self, plan: Any) -> bool:
        newest = self._newest_decision()
        return newest is not None and newest.plan == plan

    def _foresee_newest(self) -> None:
        """At the end, an early answer already back for the newest words: its first words ahead."""
        latest = self._newest_decision()
        if self.foresight is None or latest is None or latest.plan.tool is None:
            return
        key = call_key(self.lane.registry, latest.plan.tool, latest.plan.args)
        call = self.record.usable(key) if key is not None else None
        if call is not None and call.task.done() and not call.task.cancelled() and call.task.exception() is None and call.task.result().ok:
            self.foresight.result(call.task.result())

    def _deciding_on(self, words: str) -> bool:
        return any(w == words and not t.done() and t not in self._stopping for t, w in self._in_flight.items())

    async def handoff(self, final: str | None = None) -> SpeculativeRecord:
        """Stop looking, cut short the decisions under way but one on the words of ``final`` (the
        final transcript), wait for that one, and hand the record over."""
        self.stop(keep=words_of(final) if final is not None and self.settings.finish_newest else None)
        finishing = [t for t in self._in_flight if not t.done()]
        stopping, self._stopping = list(self._stopping), set()
        await asyncio.gather(*stopping, *finishing, return_exceptions=True)
        return self.record

    async def close(self) -> None:
        """Stop everything, early calls included (the turn is over or cancelled)."""
        await self.handoff()
        running = [c.task for c in self.record.calls.values() if not c.task.done()]
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)

    # -- the loop ----------------------------------------------------------------------
    async def _run(self) -> None:
        while True:
            await self._sleep(self.settings.interval_s)
            self.look()

    def look(self) -> bool:
        """One tick: start a decision when there is something new to think about; True if started."""
        words = words_of(self._latest)
        if self._stopped or not self._worth(self._latest, words):
            return False
        if len(self._in_flight) >= self.settings.max_in_flight:
            self.skipped += 1
            return False
        self._start(self._latest, words)
        return True

    def _worth(self, heard: str, words: str) -> bool:
        """Whether ``heard`` has words enough, and ``words`` (its :func:`words_of`) are new (or an
        early look-up came back since), to decide on."""
        # Counted as heard: the words' key joins Korean into one run ("라면 타이머" -> "라면타이머").
        if sum(any(c.isalnum() for c in word) for word in heard.split()) < self.settings.min_words:
            return False
        return words != self._considered or self._tool_finished  # the clock alone is no reason

    def _start(self, heard: str, words: str) -> None:
        self._considered, self._tool_finished = words, False
        self.calls += 1
        task = asyncio.create_task(self._decide(heard), name="thinker-decision")
        self._in_flight[task] = words
        task.add_done_callback(lambda t: self._in_flight.pop(t, None))

    def _examples(self, heard: str) -> tuple[tuple[str, ...] | None, Sequence[Any]]:
        """The nearest example's tool for ``heard``, and the examples for a decision on it: those of
        the decision before while that tool stays the same, so each decision's prompt differs from
        the one before only in the words, and only those are evaluated again."""
        key = example_key(self.planner, heard)
        if self._pinned is None or key is None or self._pinned[0] != key:
            self._pinned = (key, self.planner.examples_for(heard))
        return self._pinned

    async def _decide(self, heard: str) -> None:
        key, examples = self._examples(heard)
        self.record.last_prompt = (heard, examples, key)
        self.timeline.mark("heartbeat_think_start", text=heard)
        try:
            plan = await self.planner.plan(heard, self.history, examples=examples)
        except asyncio.CancelledError:
            self.timeline.mark("heartbeat_think_end", cancelled=True)
            raise
        except Exception as exc:  # noqa: BLE001 - thinking ahead is optional: the final decision is made anyway
            # Nobody awaits this task: unhandled, the error would surface later as asyncio's traceback.
            log.warning("an early decision failed: %s", " ".join(str(exc).split()) or type(exc).__name__)
            self.timeline.mark("heartbeat_think_end", error=str(exc)[:200])
            return
        # The reasoning is on record before anything is fetched for it.
        self.record.add_decision(Decision(heard, plan, self.clock(), examples))
        self.timeline.mark("heartbeat_think_end", tool=plan.tool or NO_TOOL, args=plan.args)
        self.emit(Thought(heard, plan.tool, dict(plan.args)))
        if plan.tool is None:
            return
        spec = self.lane.registry.get(plan.tool)
        if spec is not None and spec.side_effects == "act" and self._stopped and self.foresight is not None:
            self.foresight.act(plan.tool, plan.args)  # the decision that runs on past the end: its confirmation
        if spec is None or spec.side_effects == "act" or not spec.speculable:
            return
        key = call_key(self.lane.registry, plan.tool, plan.args)
        if key is None or self.record.has(key):
            return
        task = asyncio.create_task(self.lane.call(plan.tool, plan.args, origin="speculative"), name=f"early-{plan.tool}")
        self.record.add_call(SpeculativeCall(key, plan, heard, self.clock(), task))
        self.timeline.mark("heartbeat_fetch_start", tool=plan.tool, args=plan.args)
        self.emit(EarlyCall(plan.tool, dict(plan.args), "running"))
        task.add_done_callback(lambda t, plan=plan: self._fetched(plan, t))

    def _fetched(self, plan: Any, task: asyncio.Task) -> None:
        ok = not task.cancelled() and task.exception() is None and task.result().ok
        self.timeline.mark("heartbeat_fetch_end", tool=plan.tool, ok=ok)
        if ok and self.foresight is not None and self._stopped and self._is_newest(plan):
            self.foresight.result(task.result())
        self.emit(EarlyCall(plan.tool, dict(plan.args), "ok" if ok else "cancelled" if task.cancelled() else "error"))
        self._tool_finished = True
