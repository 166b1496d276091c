"""What was thought and fetched while the user was still speaking, kept for the answer.

The Thinker writes here; the Responder reads a snapshot of it once the user has finished.  Tool
calls are keyed by their name and their validated arguments in canonical JSON, so a call asked
for twice (on two partials that differ only in a trailing word) runs once, and the final decision
finds what was fetched for it exactly, or nothing: "the weather in Busan, no, I mean Ilsan" asks
for Ilsan, and the Busan result is simply never matched.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from agent.deciding.tool_calls import ToolPlan
from tools.executor import ToolResult
from tools.registry import ToolRegistry

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CallKey:
    """A tool call as it would run: the name and the validated arguments in canonical JSON."""

    tool: str
    args: str


def call_key(registry: ToolRegistry, tool: str, args: dict[str, Any]) -> CallKey | None:
    """The key of a call, or None when the tool is unknown or the arguments do not validate."""
    spec = registry.get(tool)
    if spec is None:
        return None
    try:
        valid = spec.args.model_validate(args)
    except ValueError:
        return None
    return CallKey(tool, json.dumps(valid.model_dump(mode="json", exclude_none=True), sort_keys=True, ensure_ascii=False))


@dataclass
class SpeculativeCall:
    """One tool call run early, on a partial transcript."""

    key: CallKey
    plan: ToolPlan
    heard: str
    """The partial transcript it was decided on."""
    started_at: float
    task: asyncio.Task[ToolResult]
    finished_at: float | None = None

    @property
    def result(self) -> ToolResult | None:
        if not self.task.done() or self.task.cancelled():
            return None
        return self.task.result()


@dataclass(frozen=True)
class Decision:
    """One decision the Thinker made on a partial transcript."""

    heard: str
    plan: ToolPlan
    at: float
    examples: Sequence[Any] = ()
    """The examples it was shown (kept so the answer's prompt can share what was evaluated)."""


@dataclass
class SpeculativeRecord:
    """The Thinker's decisions and early calls in one turn."""

    registry: ToolRegistry
    clock: Callable[[], float] = time.monotonic
    decisions: list[Decision] = field(default_factory=list)
    calls: dict[CallKey, SpeculativeCall] = field(default_factory=dict)
    cancelled: int = 0
    """Thinker decisions cut short (by the handoff)."""
    last_prompt: tuple[str, Sequence[Any], tuple[str, ...] | None] | None = None
    """(words, examples, the nearest example's tool) of the newest decision started, finished or
    not: what the model's cache holds, for the answer's prompt to share."""

    def add_decision(self, decision: Decision) -> None:
        self.decisions.append(decision)

    def latest_decision(self) -> Decision | None:
        return self.decisions[-1] if self.decisions else None

    def has(self, key: CallKey) -> bool:
        return key in self.calls

    def add_call(self, call: SpeculativeCall) -> None:
        self.calls[call.key] = call
        call.task.add_done_callback(lambda _t, call=call: setattr(call, "finished_at", self.clock()))

    def usable(self, key: CallKey) -> SpeculativeCall | None:
        """The early call matching ``key`` if its answer is (or will be) usable: finished well and
        still fresh, or still running (a late result the Responder waits for instead of asking again)."""
        call = self.calls.get(key)
        if call is None or call.task.cancelled():
            return None
        if not call.task.done():
            return call
        result = call.result
        if result is None or not result.ok:
            return None
        spec = self.registry.get(key.tool)
        stale = spec.stale_after_s if spec is not None else 0.0
        if stale is not None and call.finished_at is not None and self.clock() - call.finished_at > stale:
            return None
        return call
