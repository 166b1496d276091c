"""Deciding on a tool call with a small model: one JSON reply under a grammar, the line to say first.

The model writes ``{"say": …, "tool": …, "args": {…}}`` constrained by the
registry's schema.  ``say`` comes first, so the line to speak before a slow tool
is known as soon as its closing quote is generated, while the arguments are
still being written: :class:`SayWatcher` hands it over at that moment.
Examples are given as chat turns (user request → assistant JSON), which small
models follow far better than a description of the format.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from agent.llm import ChatMessage

log = logging.getLogger(__name__)

NO_TOOL = "none"


@dataclass(frozen=True)
class ToolPlan:
    """What the model decided."""

    say: str
    """The line to speak (before the tool runs, or the whole answer when no tool is needed)."""
    tool: str | None
    """The tool to call, or None."""
    args: dict[str, Any] = field(default_factory=dict)
    """Its arguments, as the model wrote them (validated by the executor)."""
    raw: str = ""
    """The model's JSON, for the record."""


class JsonChatModel(Protocol):
    def stream(self, messages: Sequence[ChatMessage], max_tokens: int | None = None, json_schema: dict[str, Any] | None = None) -> Any: ...


class SayWatcher:
    """Watches streamed JSON text and reports the ``say`` string the moment it is complete."""

    def __init__(self, on_say: Callable[[str], None]) -> None:
        self.on_say = on_say
        self._text = ""
        self._done = False

    def feed(self, piece: str) -> None:
        if self._done:
            return
        self._text += piece
        key = self._text.find('"say"')
        if key < 0:
            return
        colon = self._text.find(":", key + 5)
        quote = self._text.find('"', colon + 1) if colon >= 0 else -1
        if quote < 0:
            return
        i = quote + 1
        while i < len(self._text):
            ch = self._text[i]
            if ch == "\\":
                i += 2
                continue
            if ch == '"':
                self._done = True
                self.on_say(json.loads(self._text[quote : i + 1]))
                return
            i += 1


def describe_tools(specs: Sequence[Any]) -> str:
    lines = []
    for spec in specs:
        props = spec.schema().get("properties", {})
        args = ", ".join(props) or "no arguments"
        lines.append(f"- {spec.name}({args}): {spec.description}")
    return "\n".join(lines)


def planner_messages(
    system_prompt: str,
    specs: Sequence[Any],
    examples: Sequence[tuple[str, dict[str, Any]]],
    history: Sequence[ChatMessage],
    user_text: str,
) -> list[ChatMessage]:
    system = (
        f"{system_prompt}\n\nYou can use these tools:\n{describe_tools(specs)}\n"
        'Reply with JSON only: {"say": a short line to speak, "tool": a tool name or "none", "args": its arguments}.'
    )
    messages = [ChatMessage("system", system)]
    for request, reply in examples:
        messages += [ChatMessage("user", request), ChatMessage("assistant", json.dumps(reply, ensure_ascii=False))]
    return [*messages, *history, ChatMessage("user", user_text)]


class ToolCallPlanner:
    """Asks the model for one tool decision under the registry's grammar."""

    def __init__(
        self,
        chat: JsonChatModel,
        specs: Sequence[Any],
        schema: dict[str, Any],
        system_prompt: str,
        examples: Sequence[tuple[str, dict[str, Any]]] = (),
        max_tokens: int = 96,
    ) -> None:
        self.chat = chat
        self.specs = list(specs)
        self.schema = schema
        self.system_prompt = system_prompt
        self.examples = list(examples)
        self.max_tokens = max_tokens

    async def plan(
        self,
        user_text: str,
        history: Sequence[ChatMessage] = (),
        on_say: Callable[[str], None] | None = None,
    ) -> ToolPlan:
        messages = planner_messages(self.system_prompt, self.specs, self.examples, history, user_text)
        watcher = SayWatcher(on_say) if on_say is not None else None
        pieces: list[str] = []
        async for piece in self.chat.stream(messages, self.max_tokens, json_schema=self.schema):
            pieces.append(piece)
            if watcher is not None:
                watcher.feed(piece)
        raw = "".join(pieces)
        try:
            data = json.loads(raw)
        except json.JSONDecodeError:
            # The grammar makes this rare; running out of tokens mid-object is the usual cause.
            log.warning("tool decision is not valid JSON: %r", raw[:200])
            return ToolPlan(say="", tool=None, raw=raw)
        tool = data.get("tool")
        return ToolPlan(
            say=str(data.get("say", "")),
            tool=None if tool in (None, NO_TOOL) else str(tool),
            args=dict(data.get("args") or {}),
            raw=raw,
        )
