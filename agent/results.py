"""What one turn did: its outcome, the tools it called, and what was heard of its reply."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from agent.deciding.confirm import PendingAct
from agent.speaking.speech_out import SpokenUnit
from agent.timeline import Timeline


class Outcome(str, Enum):
    ANSWERED = "answered"
    NO_SPEECH = "no_speech"
    NOT_UNDERSTOOD = "not_understood"
    NO_ANSWER = "no_answer"
    INTERRUPTED = "interrupted"
    BACKCHANNEL = "backchannel"
    """Only "mm", "okay", "응": the user is listening; nothing is said and no exchange is added."""
    FAILED = "failed"


@dataclass(frozen=True)
class ToolCallRecord:
    """A tool the turn called, as the model asked for it."""

    name: str
    args: dict[str, object]
    ran: bool = False
    """It was made (not asked back first)."""
    acts: bool = False
    """The tool acts (a timer, the list, a note) rather than looks something up."""

    data: dict[str, object] = field(default_factory=dict)
    """What the tool reported (the timer it started, the item it added): what an undo works from."""
    ok: bool = False
    """The tool ran and reported no error: what it was asked to change, it changed."""
    origin: str = "user"
    """Where its arguments came from (:data:`tools.executor.Origin`); only some origins may act."""

    @property
    def acted(self) -> bool:
        """It changed something. An acting call the tool refused (pausing a timer that is already
        paused, arguments that did not validate) changed nothing, and nothing is there to undo; nor
        did one the tool only offered ("Shall I open the Garage Door?": ``asked``), which a yes makes."""
        return self.ran and self.acts and self.ok and not self.data.get("asked")


@dataclass
class TurnResult:
    outcome: Outcome
    timeline: Timeline
    transcript: str = ""
    reply: str = ""
    spoken: list[str] = field(default_factory=list)
    unspoken: list[str] = field(default_factory=list)
    reply_audio_s: float = 0.0
    tool_calls: list[ToolCallRecord] = field(default_factory=list)
    units: list[SpokenUnit] = field(default_factory=list)
    """Every unit in order, with its kind and whether it was heard."""
    pending: PendingAct | None = None
    """An act hearth asked about instead of making ("Cancel the pasta timer?", "How long should the
    pizza timer be?"), or offered ("Shall I set a 25-minute timer?"): the next utterance may complete it."""
    route: str | None = None
    """Why the reasoner answered ("knowledge", "several_acts", "talker_unsure"); None: the talker did."""
    reply_sources: list[tuple[str, str]] = field(default_factory=list)
    """Who wrote each piece of the reply, in order (:data:`agent.speaking.reply.SOURCES`)."""
    repeated: bool = False
    """The answer was the last reply again ("what did you say?"): what came before still stands."""
    record_turn: int = 0
    """The turn's number in the conversation record (what ``hearth history`` shows as #13, and the
    page's timeline card is titled with); 0 when it was not recorded."""
