"""Filters on the reply stream that hold text back while they decide what it is.

The thinking filter drops ``<think>…</think>`` / ``<thinking>…</thinking>``
blocks; the role-marker filter removes a leaked role marker (``Assistant:``,
``model``) at the start of a reply.  Each holds back only what could still
turn into its marker and releases the rest at once, so a short reply is not
delayed to its end.  (``fixed_tail`` / ``fixed_head`` reproduce the older fixed
holds, kept to show why the flush at a tool boundary matters.)

At a tool call the chain is flushed exactly as at the end of a reply: the
upstream (thinking) filter first, its output fed through the downstream
(role-marker) filter, then the downstream filter flushed.  Anything else leaves
the end of the line spoken before the tool trapped until the answer after it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol

THINK_OPEN = ("<think>", "<thinking>")
THINK_CLOSE = ("</think>", "</thinking>")
ROLE_NAMES = ("<|im_start|>assistant", "<start_of_turn>model", "assistant", "model", "hearth")
# A leaked marker is a role name followed by a colon or a line break: "Assistant: …", "model\n…".
_MARKER = re.compile(r"\s*(?:" + "|".join(re.escape(n) for n in ROLE_NAMES) + r")[ \t]*[:\n][ \t\n]*", re.IGNORECASE)


class StreamFilter(Protocol):
    def feed(self, text: str) -> str:
        """Take a piece of the stream; return what is certain to pass."""
        ...

    def flush(self) -> str:
        """Release everything held and start afresh (end of reply or a tool boundary)."""
        ...


def _held_prefix(text: str, tags: Sequence[str]) -> int:
    """Length of the longest suffix of ``text`` that is a proper prefix of one of ``tags``."""
    best = 0
    for tag in tags:
        for n in range(min(len(tag) - 1, len(text)), best, -1):
            if text.endswith(tag[:n]):
                best = n
                break
    return best


class ThinkingFilter:
    """Drops thinking blocks; holds back only a tail that might open one."""

    def __init__(self, fixed_tail: int | None = None) -> None:
        self.fixed_tail = fixed_tail
        self._buffer = ""
        self._inside = False

    def feed(self, text: str) -> str:
        self._buffer += text
        out: list[str] = []
        while True:
            if self._inside:
                ends = [(self._buffer.find(t), t) for t in THINK_CLOSE if t in self._buffer]
                if not ends:
                    # Keep only what might be the start of the closing tag.
                    keep = _held_prefix(self._buffer, THINK_CLOSE)
                    self._buffer = self._buffer[len(self._buffer) - keep :]
                    break
                at, tag = min(ends)
                self._buffer = self._buffer[at + len(tag) :]
                self._inside = False
                continue
            starts = [(self._buffer.find(t), t) for t in THINK_OPEN if t in self._buffer]
            if starts:
                at, tag = min(starts)
                out.append(self._buffer[:at])
                self._buffer = self._buffer[at + len(tag) :]
                self._inside = True
                continue
            keep = self.fixed_tail if self.fixed_tail is not None else _held_prefix(self._buffer, THINK_OPEN)
            keep = min(keep, len(self._buffer))
            out.append(self._buffer[: len(self._buffer) - keep])
            self._buffer = self._buffer[len(self._buffer) - keep :]
            break
        return "".join(out)

    def flush(self) -> str:
        # An unterminated thinking block is dropped: it was never meant to be heard.
        out = "" if self._inside else self._buffer
        self._buffer, self._inside = "", False
        return out


class RoleMarkerFilter:
    """Removes a leaked role marker at the start of a reply; holds only while one is still possible."""

    def __init__(self, fixed_head: int | None = None) -> None:
        self.fixed_head = fixed_head
        self._held = ""
        self._decided = False

    def feed(self, text: str) -> str:
        if self._decided:
            return text
        self._held += text
        if self.fixed_head is not None:
            return self._release(self._strip(self._held)) if len(self._held) >= self.fixed_head else ""
        match = _MARKER.match(self._held)
        if match and match.end() < len(self._held):
            return self._release(self._held[match.end() :])
        if match or _could_become_marker(self._held):
            return ""
        return self._release(self._held)

    @staticmethod
    def _strip(text: str) -> str:
        match = _MARKER.match(text)
        return text[match.end() :] if match else text

    def _release(self, text: str) -> str:
        self._held, self._decided = "", True
        return text

    def flush(self) -> str:
        out = self._strip(self._held)
        # A new segment (the answer after a tool) may leak a marker of its own.
        self._held, self._decided = "", False
        return out


def _could_become_marker(text: str) -> bool:
    start = text.lstrip().lower()
    if not start:
        return True
    for name in ROLE_NAMES:
        if name.startswith(start):
            return True
        if start.startswith(name) and not start[len(name) :].strip(" \t"):
            return True  # "assistant " may still be followed by ":"
    return False


class FilterChain:
    """Filters in stream order: upstream first (thinking), then downstream (role marker)."""

    def __init__(self, filters: Sequence[StreamFilter]) -> None:
        self.filters = list(filters)

    def feed(self, text: str) -> str:
        for f in self.filters:
            text = f.feed(text)
        return text

    def flush(self) -> str:
        """At the end of a reply or at a tool boundary: each filter's release goes through the rest."""
        out = ""
        for i, f in enumerate(self.filters):
            released = f.flush()
            for downstream in self.filters[i + 1 :]:
                released = downstream.feed(released)
            out += released
        return out


def default_chain() -> FilterChain:
    return FilterChain([ThinkingFilter(), RoleMarkerFilter()])
