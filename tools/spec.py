"""What a tool is: a typed spec the model can call, and what it gives back.

A tool declares its arguments as a pydantic model (the grammar and the
validator come from it), whether it acts on the world or only reads, how long
it usually takes (a slow tool gets a line spoken before it runs) and how long
it may take at most.  Tools are created by functions that bind them to their
stores (``timer_tools(store)``), never registered at import time.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict

A = TypeVar("A", bound=BaseModel)


def text_argument(max_chars: int) -> AfterValidator:
    """A validator for a text argument that is stored and said back ("oat milk", a note).

    Spaces at the ends are dropped, text that is only spaces is refused (it would be stored as an
    empty entry and spoken as nothing), and so is text longer than ``max_chars``, so that no
    answer reads out a page.  The bound lives in the validator, not the JSON schema: the
    decision grammar keeps its own, tighter cap on strings.
    """

    def check(value: str) -> str:
        text = value.strip()
        if not text:
            raise ValueError("must not be blank")
        if len(text) > max_chars:
            raise ValueError(f"is longer than {max_chars} characters")
        return text

    return AfterValidator(check)


def optional_text_argument(max_chars: int) -> AfterValidator:
    """As :func:`text_argument`, for an argument that may be left out: blank text means "not given"."""

    def check(value: str | None) -> str | None:
        if value is None:
            return None
        text = value.strip()
        if len(text) > max_chars:
            raise ValueError(f"is longer than {max_chars} characters")
        return text or None

    return AfterValidator(check)


class NoArgs(BaseModel):
    """For tools that take no arguments."""

    model_config = ConfigDict(extra="forbid")


@dataclass(frozen=True)
class ToolOutput:
    """A tool's answer."""

    text: str
    """What the model reads (short: it is spoken about, not read out)."""
    data: dict[str, Any] = field(default_factory=dict)
    """The same as structured data, for tests, the record and the screen."""


@dataclass(frozen=True)
class ToolSpec(Generic[A]):
    """One callable tool."""

    name: str
    """The name the model calls it by (``timer_start``)."""
    description: str
    """One sentence for the model: what it does and when to use it."""
    args: type[A]
    """The arguments, validated before the tool runs."""
    run: Callable[[A], Awaitable[ToolOutput]]
    """The tool itself."""
    side_effects: Literal["read", "act"] = "read"
    """"act" tools change the world (start a timer, add to a list) and fire only on what the user said."""
    expected_s: float = 0.05
    """Typical duration; tools expected to take longer than the pre-tool threshold get a spoken line first."""
    timeout_s: float = 5.0
    """Longest it may run before it is cancelled and reported as timed out."""
    speculable: bool = False
    """May run on a partial transcript, before the user has finished (Heartbeat). Only tools that
    change nothing and cost little are: an answer fetched early is thrown away when the request
    turns out to be another."""
    stale_after_s: float | None = None
    """How long a result fetched early stays good ("the time" goes stale in seconds, a timer's
    remaining time at once); None: as long as the turn."""
    foretell: Callable[[A], str] | None = None
    """What the tool would say, worked out from its arguments (and what it may read) without
    changing anything: the words the voice can make ahead while the turn waits to act. A wrong
    foretelling costs the synthesis it took, never a wrong word: what is said is always what the
    tool returned."""
    model_calls: bool = True
    """Offered to the model. False for tools that only hearth's own command words call ("louder",
    "next step"): a command that plain is matched exactly, never left to a guess."""

    def schema(self) -> dict[str, Any]:
        """The JSON schema of the arguments."""
        return self.args.model_json_schema()
