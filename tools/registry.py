"""The set of tools one hearth session can call, and the reply grammar built from it.

A registry is built explicitly from specs (``ToolRegistry([*timer_tools(store), *clock_tools()])``) so
that what the model may call is visible at the call site, never assembled by import side effects.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Iterable, Mapping
from typing import Any

from tools.spec import ToolSpec

log = logging.getLogger(__name__)

NO_TOOL = "none"
"""The ``tool`` value of a reply that only speaks."""


class ToolRegistry:
    """Tools by name, in the order given."""

    def __init__(self, specs: Iterable[ToolSpec[Any]]) -> None:
        by_name: dict[str, ToolSpec[Any]] = {}
        for spec in specs:
            if spec.name == NO_TOOL:
                raise ValueError(f"{NO_TOOL!r} is reserved for replies without a tool call")
            if spec.name in by_name:
                raise ValueError(f"duplicate tool name {spec.name!r}")
            by_name[spec.name] = spec
        self._specs = by_name

    def get(self, name: str) -> ToolSpec[Any] | None:
        return self._specs.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._specs

    def __len__(self) -> int:
        return len(self._specs)

    @property
    def names(self) -> list[str]:
        return list(self._specs)

    @property
    def specs(self) -> list[ToolSpec[Any]]:
        return list(self._specs.values())

    def for_model(self) -> ToolRegistry:
        """The tools the model may call (those only command words call left out)."""
        return ToolRegistry(spec for spec in self._specs.values() if spec.model_calls)

    def slow(self, name: str, threshold_s: float = 0.3) -> bool:
        """Whether the tool usually takes long enough to deserve a spoken line before it runs."""
        spec = self._specs.get(name)
        return spec is not None and spec.expected_s > threshold_s

    def tool_call_schema(
        self,
        names: Iterable[str] | None = None,
        allow_none: bool = True,
        max_chars: int | None = None,
        tool_first: bool = False,
    ) -> dict[str, Any]:
        """JSON schema of one model reply: ``{"say": ..., "tool": ..., "args": {...}}``.

        ``tool_first``: ``{"tool": ..., "args": {...}}``, and ``{"tool": "none", "say": ...}`` when no
        tool answers: a call is decided in a handful of tokens, with no line written before it (the
        line before a slow tool is then the tool's own).

        "say" comes first in every branch because grammar-constrained decoding generates keys in
        schema order, and the spoken line must be ready before the (possibly slow) arguments.
        ``names`` narrows the reply to those tools (in registry order), for when the request has
        already ruled the others out; unknown names are an error.  ``allow_none=False`` leaves out
        the reply without a tool (only with at least one tool named).  ``max_chars`` caps "say" and
        every string argument without a cap of its own: a small model that starts rambling
        otherwise runs out of tokens before the JSON closes, and the whole decision is lost.
        """
        specs = list(self._specs.values())
        if names is not None:
            wanted = set(names)
            unknown = wanted - set(self._specs) - {NO_TOOL}
            if unknown:
                raise ValueError(f"unknown tools {sorted(unknown)}")
            specs = [spec for spec in specs if spec.name in wanted]
        say: dict[str, Any] = {"type": "string"} if max_chars is None else {"type": "string", "maxLength": max_chars}
        branches: list[dict[str, Any]] = []
        for spec in specs:
            args = _inline_refs(spec.schema())
            capped = args if max_chars is None else _cap_strings(args, max_chars)
            properties = {"tool": {"const": spec.name}, "args": capped} if tool_first else {
                "say": dict(say), "tool": {"const": spec.name}, "args": capped,
            }
            branches.append(
                {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}
            )
        if allow_none or not branches:
            properties = {"tool": {"const": NO_TOOL}, "say": dict(say)} if tool_first else {"say": dict(say), "tool": {"const": NO_TOOL}}
            branches.append(
                {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}
            )
        return {"anyOf": branches}


def _cap_strings(node: Any, max_chars: int) -> Any:
    if isinstance(node, dict):
        capped = {key: _cap_strings(value, max_chars) for key, value in node.items()}
        if capped.get("type") == "string" and "maxLength" not in capped:
            capped["maxLength"] = max_chars
        return capped
    if isinstance(node, list):
        return [_cap_strings(value, max_chars) for value in node]
    return node


def _inline_refs(schema: Mapping[str, Any]) -> dict[str, Any]:
    """Resolve local ``#/$defs/...`` references so each tool's branch stands alone.

    Grammar converters handle self-contained schemas far more reliably than cross-branch refs, and
    two tools may each define a model with the same name.  Recursive models cannot be inlined.
    """
    defs: Mapping[str, Any] = schema.get("$defs", {})

    def resolve(node: Any, seen: tuple[str, ...]) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str):
                prefix = "#/$defs/"
                if not ref.startswith(prefix) or ref[len(prefix):] not in defs:
                    raise ValueError(f"cannot resolve schema reference {ref!r}")
                key = ref[len(prefix):]
                if key in seen:
                    raise ValueError(f"recursive argument model {key!r} cannot be inlined")
                target = resolve(defs[key], (*seen, key))
                rest = {k: resolve(v, seen) for k, v in node.items() if k != "$ref"}
                return {**target, **rest}
            return {k: resolve(v, seen) for k, v in node.items() if k != "$defs"}
        if isinstance(node, list):
            return [resolve(v, seen) for v in node]
        return copy.deepcopy(node)

    return resolve(schema, ())
