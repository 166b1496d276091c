"""Events the assistant emits, as small frozen dataclasses.

Facts are named in the past tense (``TranscriptFinal``); commands in the
imperative (``Speak``).  The device loop listens to these to drive the status
LED; tests record them to check what happened and in which order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum


class State(str, Enum):
    """What the assistant is doing, as the status LED shows it."""

    IDLE = "idle"
    LISTENING = "listening"
    THINKING = "thinking"
    SPEAKING = "speaking"
    PAUSING = "pausing"
    """Between two units of one reply: still talking, drawing breath."""
    FAULT = "fault"
    """A sound device is lost and hearth is trying to open it again."""


@dataclass(frozen=True)
class StateChanged:
    state: State


@dataclass(frozen=True)
class SpeechStarted:
    """The voice detector heard the user start speaking (once per utterance)."""


@dataclass(frozen=True)
class TranscriptPartial:
    text: str


@dataclass(frozen=True)
class UtteranceEnded:
    """The listener has decided the user finished (the final transcript is being decoded)."""


@dataclass(frozen=True)
class TranscriptFinal:
    text: str
    typed: bool = False
    """The words came as text (a text turn: Home Assistant's ``handle``), not heard by hearth's
    microphone."""
    confidence: float | None = None
    """How sure the hearing was, 0–1 (:mod:`agent.listening.hearing`); None for typed words."""


@dataclass(frozen=True)
class ReplyTextAppended:
    """A piece of the reply as the model wrote it (after filtering)."""

    text: str


@dataclass(frozen=True)
class UnitSpoken:
    """A spoken unit reached the speaker and was played to its end (told the moment it is)."""

    text: str
    kind: str = "answer"
    """"answer", "pretool" (the line before a tool), "holding" (the talker's line while the reasoner
    works) or "phrase" (a fixed line)."""


@dataclass(frozen=True)
class ToolStarted:
    """An acting tool call is about to run: told before the store can change, so that whatever
    the call changes has its turn in the record even if hearth dies before the call settles."""

    name: str
    args: dict[str, object]
    origin: str = "user"
    """Where the call came from (:data:`tools.executor.MAY_ACT` lists the origins that may act)."""


@dataclass(frozen=True)
class ToolCalled:
    """A tool call has settled: made (``"ok"`` or ``"error"``) or ``"refused"`` (asked back first,
    or refused by the tool's guard; never made)."""

    name: str
    args: dict[str, object]
    status: str
    data: dict[str, object] = field(default_factory=dict)
    origin: str = "user"
    """Where its arguments came from (:data:`tools.executor.Origin`): the user's words, a yes, a
    tool's offer, a model's guess, or text a tool returned."""


@dataclass(frozen=True)
class Thought:
    """The Heartbeat decided on a partial transcript (speculative: the final words may differ)."""

    heard: str
    tool: str | None
    args: dict[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class EarlyCall:
    """A look-up the Heartbeat started (``"running"``) or that came back (``"ok"`` / ``"error"``)."""

    tool: str
    args: dict[str, object]
    status: str


@dataclass(frozen=True)
class Delegated:
    """The reasoner answers this request; ``reason`` is the routing rule that sent it."""

    reason: str
    where: str


@dataclass(frozen=True)
class TurnInterrupted:
    """The turn was cancelled (barge-in or shutdown); ``unspoken`` never reached the listener."""

    unspoken: tuple[str, ...]


@dataclass(frozen=True)
class TurnFailed:
    """Something went wrong; ``reason`` is what the log says, the listener heard an apology."""

    reason: str
    stage: str = ""
    """Where: ``"hearing"`` (the microphone, voice detector, recognizer), ``"answer"`` (the language
    model) or ``"voice"`` (synthesis, the speaker); empty when it is not known."""


@dataclass(frozen=True)
class Speak:
    """Say this text (a fixed phrase, not a model reply)."""

    text: str


Event = (
    StateChanged
    | SpeechStarted
    | TranscriptPartial
    | UtteranceEnded
    | TranscriptFinal
    | ReplyTextAppended
    | UnitSpoken
    | ToolStarted
    | ToolCalled
    | Thought
    | EarlyCall
    | Delegated
    | TurnInterrupted
    | TurnFailed
    | Speak
)
