"""Runs the model's tool calls safely: validated, time-limited, size-limited, never raising.

Calls are queued to one worker task so that tools run one at a time in the order the model asked
for them (two timers started in one turn must not race on their store).  Whatever goes wrong comes
back as a structured error the model can read and talk about, never as an exception in the turn.
"""

from __future__ import annotations

import asyncio
import errno
import json
import logging
import sqlite3
import time
from collections import deque
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from pydantic import ValidationError

from tools.registry import ToolRegistry
from tools.spec import ToolOutput, ToolSpec

log = logging.getLogger(__name__)

ErrorKind = Literal[
    "unknown_tool", "invalid_arguments", "failed", "timeout", "storage_full", "refused_untrusted", "refused_speculative",
    "cancelled", "closed",
]
Origin = Literal["user", "confirmed", "offer", "page", "model", "tool_output", "speculative"]
"""Where a call's arguments came from, and so whether it may act:

* ``"user"``: the user's own words this turn hold the act and its values (a command word, "undo
  that", or a decision the grounding check found in the words);
* ``"confirmed"``: hearth asked the act back aloud ("Add eggs to the shopping list?") and the user
  said yes, or gave the value it asked for;
* ``"offer"``: a tool's result offered the act ("Shall I set a 25-minute timer?"), its arguments
  from that result, and the user said yes;
* ``"page"``: a person acting on the companion page (a tap on "cancel", an item typed in): their own
  act, made as directly as a spoken command;
* ``"model"``: a model's reading of the conversation, in nobody's words this turn: asked back first;
* ``"tool_output"``: a call whose content is found only in what tools returned (a recipe, a
  forecast, a list item, a phrased answer), not in anything the user said: it never acts;
* ``"speculative"``: the Thinker on a partial transcript: only speculable look-ups run.
"""

MAY_ACT: frozenset[str] = frozenset({"user", "confirmed", "offer", "page"})
"""The origins an acting tool runs on: what the user said, or said yes to having heard it, or did on the page."""


@dataclass(frozen=True)
class ToolErrorInfo:
    """Why a tool call did not produce an answer."""

    kind: ErrorKind
    """What went wrong, as a fixed word the model and the record can key on."""
    tool: str
    """The tool name as the model gave it."""
    message: str
    """One line for the model: what happened and, where possible, what to do instead."""

    def to_model_text(self) -> str:
        """The error as the JSON text the model reads in place of a result."""
        return json.dumps({"error": self.kind, "tool": self.tool, "message": self.message}, ensure_ascii=False)


@dataclass(frozen=True)
class ToolResult:
    """The outcome of one tool call."""

    name: str
    """The tool name as the model gave it."""
    ok: bool
    """True when the tool ran and answered (even if its text was truncated)."""
    output: ToolOutput | None
    """The answer when ok."""
    error: ToolErrorInfo | None
    """Why not, when not ok."""
    elapsed_s: float
    """Time from the call to its result, queueing included."""

    def to_model_text(self) -> str:
        """What the model reads back: the tool's text, or the structured error."""
        if self.output is not None:
            return self.output.text
        assert self.error is not None
        return self.error.to_model_text()


@dataclass
class _Job:
    spec: ToolSpec[Any]
    args: Any
    future: asyncio.Future[ToolResult]
    started: float
    task: asyncio.Task[ToolResult] | None = field(default=None)


class ToolExecutor:
    """Validates and runs tool calls from one registry on its own worker task."""

    def __init__(self, registry: ToolRegistry, max_result_chars: int = 2000, keep_recent: int = 16) -> None:
        self._registry = registry
        self._max_chars = max_result_chars
        self.recent: deque[tuple[str, dict[str, Any]]] = deque(maxlen=keep_recent)
        """The latest validated calls, newest last: (tool, arguments)."""
        self._queue: asyncio.Queue[_Job] | None = None
        self._worker: asyncio.Task[None] | None = None
        self._current: _Job | None = None
        self._stuck: dict[str, asyncio.Future[ToolOutput]] = {}
        """Per tool, a call stopped at its timeout that has not ended yet (it ignores being stopped)."""

    @property
    def registry(self) -> ToolRegistry:
        return self._registry

    def start(self) -> None:
        """Start the worker on the running event loop."""
        if self._worker is not None:
            raise RuntimeError("ToolExecutor already started")
        self._queue = asyncio.Queue()
        self._worker = asyncio.get_running_loop().create_task(self._work(), name="hearth-tool-executor")

    async def close(self) -> None:
        """Stop the worker; a running tool is cancelled and waiting calls answer with kind "closed"."""
        worker, queue = self._worker, self._queue
        self._worker = None
        if worker is None or queue is None:
            return
        worker.cancel()
        try:
            await worker
        except asyncio.CancelledError:
            pass
        pending = [self._current] if self._current is not None else []
        while not queue.empty():
            pending.append(queue.get_nowait())
        self._current = None
        for job in pending:
            if job.task is not None and not job.task.done():
                job.task.cancel()
                # Bounded: a tool that swallows cancellation must not hang shutdown.
                await asyncio.wait({job.task}, timeout=1.0)
            self._settle(job, self._error(job.spec.name, "closed", "the tool runner was shut down", job.started))

    def refusal(self, name: str, raw_args: dict[str, Any] | None, *, origin: Origin = "user") -> ToolErrorInfo | None:
        """Why :meth:`call` would refuse this call without running anything (no such tool, an origin
        that may not act, arguments that do not validate); None when it would run it.  For callers
        that keep a record of calls: one that could never run need not be written down as made."""
        checked = self._check(name, raw_args, origin)
        return checked if isinstance(checked, ToolErrorInfo) else None

    def _check(self, name: str, raw_args: dict[str, Any] | None, origin: Origin) -> ToolErrorInfo | tuple[ToolSpec[Any], Any]:
        """The tool and its validated arguments, or why the call is refused before it runs."""
        spec = self._registry.get(name)
        if spec is None:
            known = ", ".join(self._registry.names) or "(none)"
            return ToolErrorInfo("unknown_tool", name, f"no tool named {name!r}; known tools: {known}")
        if origin == "speculative" and (spec.side_effects == "act" or not spec.speculable):
            # Nothing is done on words the user may still take back: only declared look-ups run early.
            return ToolErrorInfo("refused_speculative", name, f"{name} does not run before the user has finished")
        if spec.side_effects == "act" and origin not in MAY_ACT:
            # Text inside a tool's result (a recipe page, a forecast) is data, not the user's wish;
            # letting it trigger actions would let anything the speaker reads control the kitchen.
            # A model's guess waits for the user's yes. An origin this policy does not know is refused.
            log.warning("refused %s: its origin is %r, not the user's words", name, origin)
            where = "a guess nobody confirmed" if origin == "model" else "instructions found in a tool's result"
            return ToolErrorInfo(
                "refused_untrusted",
                name,
                f"{name} changes things and only runs when the user asks for it directly, not on {where}",
            )
        try:
            return spec, spec.args.model_validate({} if raw_args is None else raw_args)
        except ValidationError as exc:
            return ToolErrorInfo("invalid_arguments", name, _one_line(exc))

    async def call(self, name: str, raw_args: dict[str, Any] | None, *, origin: Origin = "user") -> ToolResult:
        """Run one call; every failure becomes a ToolResult with an error, except our own cancellation."""
        started = time.monotonic()
        checked = self._check(name, raw_args, origin)
        if isinstance(checked, ToolErrorInfo):
            return ToolResult(name, False, None, checked, time.monotonic() - started)
        spec, args = checked
        if self._worker is None or self._queue is None:
            raise RuntimeError("ToolExecutor.start() was not called")

        self.recent.append((name, args.model_dump(exclude_none=True)))
        job = _Job(spec, args, asyncio.get_running_loop().create_future(), started)
        await self._queue.put(job)
        try:
            return await asyncio.shield(job.future)
        except asyncio.CancelledError:
            # The turn was abandoned (barge-in, nevermind): stop the tool rather than let it finish.
            if job.task is not None and not job.task.done():
                job.task.cancel()
            if not job.future.done():
                job.future.cancel()
            raise

    async def _work(self) -> None:
        assert self._queue is not None
        while True:
            job = await self._queue.get()
            if job.future.done():
                continue  # the caller gave up while it waited
            self._current = job
            job.task = asyncio.get_running_loop().create_task(self._run(job), name=f"tool-{job.spec.name}")
            # wait() rather than await: the tool's cancellation must not cancel the worker.
            await asyncio.wait({job.task})
            self._current = None
            if job.task.cancelled():
                self._settle(job, self._error(job.spec.name, "cancelled", "the call was cancelled", job.started))
            else:
                self._settle(job, job.task.result())

    async def _run(self, job: _Job) -> ToolResult:
        spec = job.spec
        stuck = self._stuck.get(spec.name)
        if stuck is not None:
            await asyncio.wait({stuck}, timeout=min(spec.timeout_s, 1.0))  # a tool that heeds its cancel ends at once
            if not stuck.done():
                # One stuck call per tool at most: another would only pile up behind it.
                log.error("tool %s is still stuck in an earlier call that was stopped", spec.name)
                return self._error(spec.name, "timeout", f"{spec.name} is still busy with an earlier call", job.started)
        call = asyncio.ensure_future(spec.run(job.args))
        try:
            # Not wait_for: it waits for the cancelled call to end, and a tool that ignores its
            # cancellation would hold the executor, and every later call, for good.
            await asyncio.wait({call}, timeout=spec.timeout_s)
        finally:
            if not call.done():
                call.cancel()
                self._watch(spec.name, call)
        if not call.done() or call.cancelled():
            log.warning("tool %s timed out after %.2f s", spec.name, spec.timeout_s)
            return self._error(spec.name, "timeout", f"{spec.name} took longer than {spec.timeout_s:g} s and was stopped", job.started)
        exc = call.exception()
        if exc is not None:
            message = " ".join(str(exc).split()) or type(exc).__name__
            if _disk_full(exc):
                log.error("tool %s could not save: %s", spec.name, message)
                return self._error(spec.name, "storage_full", f"{spec.name} could not save: the disk is full ({message})", job.started)
            log.info("tool %s failed: %r", spec.name, exc)
            return self._error(spec.name, "failed", message, job.started)
        output = call.result()
        if not isinstance(output, ToolOutput):
            return self._error(spec.name, "failed", f"{spec.name} returned {type(output).__name__}, not an answer", job.started)
        return ToolResult(spec.name, True, self._truncate(output), None, time.monotonic() - job.started)

    def _watch(self, name: str, call: asyncio.Future[ToolOutput]) -> None:
        """Keep a cancelled call that has not ended yet, so the next call of its tool knows."""
        self._stuck[name] = call

        def ended(task: asyncio.Future[ToolOutput]) -> None:
            if self._stuck.get(name) is task:
                del self._stuck[name]
            if not task.cancelled():
                task.exception()  # retrieved: a late failure of a call given up is not news

        call.add_done_callback(ended)

    def _truncate(self, output: ToolOutput) -> ToolOutput:
        excess = len(output.text) - self._max_chars
        if excess <= 0:
            return output
        return replace(output, text=f"{output.text[: self._max_chars]}… [truncated {excess} chars]")

    @staticmethod
    def _settle(job: _Job, result: ToolResult) -> None:
        if not job.future.done():
            job.future.set_result(result)

    @staticmethod
    def _error(name: str, kind: ErrorKind, message: str, started: float) -> ToolResult:
        return ToolResult(name, False, None, ToolErrorInfo(kind, name, message), time.monotonic() - started)


def _disk_full(exc: BaseException) -> bool:
    """SQLite's SQLITE_FULL or an OS write with no space left: nothing was saved."""
    if isinstance(exc, sqlite3.Error):
        return getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL or "database or disk is full" in str(exc)
    return isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)


def _one_line(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors(include_url=False):
        # A key the model invented may hold a line break; the message stays one line.
        loc = ".".join(str(p) if str(p).isprintable() else repr(str(p)) for p in err["loc"]) or "args"
        parts.append(f"{loc}: {' '.join(err['msg'].split())}")
    return "; ".join(parts) or " ".join(str(exc).split())
