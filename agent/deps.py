"""What a turn is made of: the components it uses, all behind protocols so fakes can stand in.

:class:`TurnDeps` is built once by the composition root (``firmware_py.wiring``) and handed to the
assistant, which gives it to every turn; the Responder reads the same pieces.  It lives apart from
the turn so that what answers a turn does not import the turn itself.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from agent.deciding.reasoner import Reasoner
from agent.deciding.tool_use import ToolUse
from agent.features import Features
from agent.listening.listen import ListenSettings
from agent.model.llm import ChatModel
from agent.speaking.cadence import CadenceRules, PaceSettings
from agent.speaking.filters import FilterChain, default_chain
from audio.protocols import Recognizer, Speaker, Synthesizer, TurnEndModel, VoiceActivityDetector


@dataclass
class TurnDeps:
    """The components a turn uses; all behind protocols so fakes can stand in."""

    vad: VoiceActivityDetector
    recognizer: Recognizer
    chat: ChatModel
    synthesizer: Synthesizer
    speaker: Speaker
    language: str
    system_prompt: str
    listen: ListenSettings = field(default_factory=ListenSettings)
    max_reply_tokens: int | None = None
    features: Features = field(default_factory=Features)
    tools: ToolUse | None = None
    """Tool calling; None answers with free text only."""
    filters: Callable[[], FilterChain] = default_chain
    """Builds the stream filters for one reply."""
    cadence: CadenceRules = field(default_factory=CadenceRules)
    """How a reply is cut into spoken units."""
    pace: PaceSettings = field(default_factory=PaceSettings)
    """The pauses between a reply's units."""
    turn_model: TurnEndModel | None = None
    """Hears whether a pause is the end of the user's turn; None leaves it to a fixed silence."""
    reasoner: Reasoner | None = None
    """The larger model for what the talker cannot answer; None: the talker answers everything."""
    voice_ahead: Callable[[str], None] | None = None
    """Starts making a line's audio ahead of need (:meth:`audio.ready_voice.ReadyVoice.prepare` of
    the synthesizer above); None: nothing is made ahead."""
    speech_context: Callable[[], str] | None = None
    """Words likely to be said (the household's units, items, labels, titles, places), read at the
    start of each turn and given to the recognizer."""
