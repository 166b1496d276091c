"""What a reply under a JSON schema must say next, whatever the model would choose.

Most of a tool decision is fixed by its schema: braces, keys, quotes, the rest of a tool's name
once its first letters are written, the key of the first required argument.  Sampling those
tokens one at a time costs a model step each.  :class:`Skeleton` follows the reply as it is
written and tells, after each piece, the text every way of going on shares up to the next
choice (:meth:`Skeleton.forced`).  The decoder evaluates that text as one batch, at prompt speed,
and samples again only where the model has a real choice (SGLang's jump-forward decoding, done
on the schema rather than on the grammar's automaton).

The skeleton is the reply as ``json.dumps`` writes it (``", "`` and ``": "`` between items), the
way the examples show it.  The grammar also allows other spacing; when the model writes some,
the reply leaves the skeleton, nothing more is forced, and the grammar alone goes on.

Only the schema shapes a tool decision uses are followed (objects with fixed properties, any-of,
const, enum, strings, integers, numbers, booleans, null); :func:`compile_skeleton` gives None for
any other, and the decoder samples every token as before.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

_NUMBER_END = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_INTEGER_END = re.compile(r"-?(0|[1-9][0-9]*)")
_MAX_PATHS = 4096
_BOUNDARY = set('{}[],:" ')


@dataclass(frozen=True)
class Hole:
    """A value the model chooses: a string's characters up to and with its closing quote, or a number."""

    kind: str
    """"string", "integer" or "number"."""
    max_chars: int | None = None
    """A string's ``maxLength``."""


Segment = str | Hole
Path = tuple[Segment, ...]


class Unsupported(ValueError):
    """The schema uses something the skeleton does not follow."""


def _join(parts: Iterable[Sequence[Segment]]) -> Path:
    out: list[Segment] = []
    for part in parts:
        for seg in part:
            if isinstance(seg, str) and out and isinstance(out[-1], str):
                out[-1] += seg
            elif seg != "":
                out.append(seg)
    return tuple(out)


def _paths(node: Any) -> list[Path]:
    if not isinstance(node, dict):
        raise Unsupported(f"schema node {node!r}")
    for key in ("anyOf", "oneOf"):
        if key in node:
            return [p for branch in node[key] for p in _paths(branch)]
    if "const" in node:
        return [(json.dumps(node["const"], ensure_ascii=False),)]
    if "enum" in node:
        return [(json.dumps(v, ensure_ascii=False),) for v in node["enum"]]
    kind = node.get("type")
    if isinstance(kind, list):
        return [p for k in kind for p in _paths({**node, "type": k})]
    if kind == "string":
        # Whatever else constrains it (a pattern, a least length), the grammar sees to; a JSON
        # string ends at its first unescaped quote all the same.
        return [('"', Hole("string", node.get("maxLength")))]
    if kind in ("integer", "number"):
        return [(Hole(kind),)]
    if kind == "boolean":
        return [("true",), ("false",)]
    if kind == "null":
        return [("null",)]
    if kind == "object" or "properties" in node:
        return _object_paths(node)
    raise Unsupported(f"schema type {kind!r}")


def _object_paths(node: dict[str, Any]) -> list[Path]:
    if node.get("additionalProperties", False) not in (False, None):
        raise Unsupported("additional properties")
    properties: dict[str, Any] = node.get("properties", {})
    required = [k for k in properties if k in set(node.get("required", ()))]
    optional = [k for k in properties if k not in set(node.get("required", ()))]
    values = {k: _paths(v) for k, v in properties.items()}
    paths: list[Path] = []
    # Like llama.cpp's grammar: the required properties in order, then any of the optional ones, in order.
    for n in range(len(optional) + 1):
        for chosen in itertools.combinations(optional, n):
            keys = [*required, *chosen]
            for picked in itertools.product(*(values[k] for k in keys)):
                items = [_join([((", " if i else "") + json.dumps(k, ensure_ascii=False) + ": ",), v]) for i, (k, v) in enumerate(zip(keys, picked))]
                paths.append(_join([("{",), *items, ("}",)]))
                if len(paths) > _MAX_PATHS:
                    raise Unsupported("too many ways to write the object")
    return paths


def compile_skeleton(schema: dict[str, Any]) -> tuple[Path, ...] | None:
    """Every way ``schema``'s replies are written in the skeleton's spacing; None when it uses
    something not followed (the decoder then forces nothing)."""
    try:
        paths = _paths(schema)
    except Unsupported:
        return None
    return tuple(dict.fromkeys(paths)) if len(paths) <= _MAX_PATHS else None


@dataclass(frozen=True)
class _State:
    path: int
    seg: int
    offset: int = 0
    """Characters of a literal matched, or of a string hole's value written (an escape counted once)."""
    text: str = ""
    """A number hole's characters so far."""
    escape: bool = False
    """A string hole just read a backslash."""


class Skeleton:
    """Follows one reply as it is written and says what text must come next (``forced``)."""

    def __init__(self, paths: Sequence[Path]) -> None:
        self.paths = paths
        self.states: list[_State] = [_State(i, 0) for i in range(len(paths))]
        self.left = False
        """The reply left every path (other spacing, or a shape not followed): nothing more is forced."""

    def feed(self, text: str) -> None:
        for ch in text:
            if not self.states:
                break
            nxt: list[_State] = []
            for state in self.states:
                nxt.extend(self._step(state, ch))
            self.states = list(dict.fromkeys(nxt))
        if not self.states:
            self.left = True

    def _settle(self, state: _State) -> list[_State]:
        """``state`` and, where its number may end here, the state after that number."""
        path = self.paths[state.path]
        if state.seg < len(path):
            seg = path[state.seg]
            if isinstance(seg, Hole) and seg.kind != "string":
                pattern = _INTEGER_END if seg.kind == "integer" else _NUMBER_END
                if state.text and pattern.fullmatch(state.text):
                    return [state, _State(state.path, state.seg + 1)]
        return [state]

    def _step(self, state: _State, ch: str) -> list[_State]:
        out: list[_State] = []
        for s in self._settle(state):
            path = self.paths[s.path]
            if s.seg >= len(path):
                continue  # a finished reply takes nothing more
            seg = path[s.seg]
            if isinstance(seg, str):
                if seg[s.offset] == ch:
                    out.append(_State(s.path, s.seg + 1) if s.offset + 1 == len(seg) else _State(s.path, s.seg, s.offset + 1))
            elif seg.kind == "string":
                if s.escape:
                    out.append(_State(s.path, s.seg, s.offset, escape=False))
                elif ch == "\\":
                    out.append(_State(s.path, s.seg, s.offset + 1, escape=True))
                elif ch == '"':
                    out.append(_State(s.path, s.seg + 1))
                elif seg.max_chars is None or s.offset < seg.max_chars:
                    out.append(_State(s.path, s.seg, s.offset + 1))
            elif _could_grow(s.text + ch, seg.kind):
                out.append(_State(s.path, s.seg, text=s.text + ch))
        return out

    def forced(self) -> str:
        """The text that must come next, the same on every way the reply may go on from here, up to
        where the model chooses again; "" when it chooses now (or the reply left the skeleton).

        Where the ways part inside a literal (``", "tool": "`` before the tools' names), the shared
        text is forced up to its last quote, bracket, comma, colon or space, never into part of a
        word: a name is the model's to begin.  A space at the end is never forced."""
        aheads: list[str] = []
        for state in self.states:
            for s in self._settle(state):
                path = self.paths[s.path]
                if s.seg >= len(path) or not isinstance(path[s.seg], str):
                    return ""  # it may end here, or it is inside a value the model writes
                aheads.append(path[s.seg][s.offset :])  # type: ignore[index]
        if not aheads:
            return ""
        first = aheads[0]
        if all(a == first for a in aheads):
            shared = first
        else:
            shared = first[: next((i for i, chars in enumerate(zip(*aheads)) if len(set(chars)) > 1), min(map(len, aheads)))]
            shared = shared[: max((i + 1 for i, ch in enumerate(shared) if ch in _BOUNDARY), default=0)]
        # A space before what the model writes is left to it: its tokens carry the space in front
        # (' 600', ' "pasta'), and a lone space token is one it has seldom read there.
        return shared.rstrip(" ")

    @property
    def done(self) -> bool:
        """The reply is complete on every way it was written: nothing may follow."""
        return bool(self.states) and all(s.seg >= len(self.paths[s.path]) for s in self.states)


def _could_grow(text: str, kind: str) -> bool:
    """Whether ``text`` is the start of a JSON number (an integer for ``kind`` "integer")."""
    pattern = r"-?(0|[1-9][0-9]*)?" if kind == "integer" else r"-?((0|[1-9][0-9]*)(\.[0-9]*)?([eE][-+]?[0-9]*)?)?"
    return re.fullmatch(pattern, text) is not None
