"""What hearth offers over Wyoming: its recognizers, voices, Cadence rules and answers, per language."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent.speaking.cadence import CadenceRules
from audio.protocols import Recognizer, Synthesizer
from firmware_py.wyoming.protocols import TextAnswers

PROGRAMS = ("asr", "tts", "handle")


@dataclass(frozen=True)
class Voice:
    """One synthesizer, as Wyoming clients see it."""

    name: str
    """The voice's name in ``info`` and in a ``synthesize`` request ("piper-en-joe", "kokoro-jf_nezumi", "espeak-ko")."""
    language: str
    """The language it speaks ("en", "ko")."""
    synthesizer: Synthesizer
    """Speaks the text, one unit at a time."""
    description: str = ""
    """A line for people choosing a voice in Home Assistant."""


@dataclass(frozen=True)
class WyomingLimits:
    """What the server refuses as nonsense, with an ``error`` event; the connection is kept."""

    min_rate: int = 4000
    """Lowest input sample rate accepted, in Hz."""
    max_rate: int = 192000
    """Highest input sample rate accepted, in Hz."""
    widths: tuple[int, ...] = (2, 4)
    """Sample widths accepted, in bytes (signed little-endian PCM)."""
    max_channels: int = 8
    """Most interleaved channels accepted; they are mixed down to mono."""
    max_audio_s: float = 600.0
    """Longest utterance accepted; one request's audio beyond it is refused."""
    max_payload_bytes: int = 4 * 1024 * 1024
    """Largest binary payload of one event; a larger one is read past and refused."""
    max_data_bytes: int = 256 * 1024
    """Largest JSON data of one event."""
    max_text_chars: int = 20000
    """Longest text to synthesize or to answer, over one request."""
    stream_idle_s: float = 0.2
    """How long a streamed ``synthesize`` waits for the next chunk before speaking text that ends a
    sentence.  Cadence holds a sentence until it sees the word after it (an abbreviation, a number
    or laughter that belongs to it may follow), so a client that sends "Okay, one at a time." and
    then thinks would otherwise hear nothing until it sends more.  Text that does not end a
    sentence always waits for its continuation."""
    utterances_per_recognizer: int = 2
    """Utterances one recognizer works on at once for Wyoming clients; later ones queue their audio
    and start when one ends.  Each keeps a decode in a worker thread, and the kitchen's own turns
    share those threads and the recognizer, so a crowd of clients must not take them all."""
    client_idle_s: float | None = 30.0
    """A client that sends nothing for this long is disconnected: stopped partway through an event
    (half a header), or between requests.  While hearth still owes it an answer it may stay silent
    for as long as the answer takes; a client that reads nothing of what is written to it for this
    long is disconnected too.  None: never."""
    max_connections: int = 32
    """Connections served at once; one more is told it is busy (an ``error`` event) and closed, so
    clients that connect and stall cannot take every socket and task the kitchen's server has."""


@dataclass(frozen=True)
class WyomingOffer:
    """Everything the Wyoming server offers, per language, and what it refuses."""

    recognizers: Mapping[str, Recognizer] = field(default_factory=dict)
    """Language -> recognizer with streaming partials (asr); the first is the default."""
    voices: Sequence[Voice] = ()
    """The voices offered (tts); the first of a language is that language's default."""
    cadence: Mapping[str, CadenceRules] = field(default_factory=dict)
    """Language -> how text to synthesize is cut into units; missing: the default rules for that language."""
    answers: TextAnswers | None = None
    """The assistant answering transcripts (handle); None offers no handle program."""
    answer_languages: tuple[str, ...] = ()
    """The languages the assistant answers in."""
    speech_context: Mapping[str, Callable[[], str]] = field(default_factory=dict)
    """Language -> the words the recognizer should expect (the household's names), rebuilt per request."""
    programs: tuple[str, ...] = PROGRAMS
    """Which of "asr", "tts" and "handle" are offered at all."""
    limits: WyomingLimits = WyomingLimits()
    """What counts as nonsense input."""
    version: str = ""
    """hearth's version, shown in ``info``; empty: read from the installed package."""

    def offers(self, program: str) -> bool:
        if program not in self.programs:
            return False
        if program == "asr":
            return bool(self.recognizers)
        if program == "tts":
            return bool(self.voices)
        return self.answers is not None and bool(self.answer_languages)

    def rules_for(self, language: str) -> CadenceRules:
        return self.cadence.get(language) or CadenceRules(language=language)


def voice_name(synthesizer: Any, language: str) -> str:
    """The name a synthesizer is offered under: "piper-<model directory>", "kokoro-<voice>" or "espeak-<voice>"."""
    settings = getattr(synthesizer, "settings", None)
    if type(synthesizer).__name__.startswith("Kokoro"):
        return f"kokoro-{settings.voice}"
    voice_dir = getattr(settings, "voice_dir", None)
    if voice_dir is not None:
        name = Path(voice_dir).name
        return name if name.startswith("piper") else f"piper-{name}"
    espeak_voice = getattr(settings, "voice", None)
    if isinstance(espeak_voice, str):
        return f"espeak-{espeak_voice}"
    return f"{type(synthesizer).__name__.lower()}-{language}"


def offer_from(
    recognizers: Mapping[str, Recognizer] | None = None,
    synthesizers: Mapping[str, Synthesizer] | None = None,
    cadence: Mapping[str, CadenceRules] | None = None,
    answers: TextAnswers | None = None,
    answer_languages: Sequence[str] = (),
    speech_context: Mapping[str, Callable[[], str]] | None = None,
    programs: Sequence[str] = PROGRAMS,
    limits: WyomingLimits = WyomingLimits(),
) -> WyomingOffer:
    """The offer for hearth's own pieces, in one call: recognizers and synthesizers keyed by language.

    ``answer_languages`` defaults to the languages the synthesizers or recognizers cover when
    ``answers`` is given.
    """
    unknown = set(programs) - set(PROGRAMS)
    if unknown:
        raise ValueError(f"unknown Wyoming programs {sorted(unknown)}; known: {', '.join(PROGRAMS)}")
    synthesizers = synthesizers or {}
    voices = tuple(
        Voice(voice_name(s, language), language, s, _describe_voice(s, language)) for language, s in synthesizers.items()
    )
    languages = tuple(answer_languages) or (tuple((recognizers or {}).keys()) or tuple(synthesizers.keys()) if answers else ())
    return WyomingOffer(
        recognizers=dict(recognizers or {}),
        voices=voices,
        cadence=dict(cadence or {}),
        answers=answers,
        answer_languages=languages if answers is not None else (),
        speech_context=dict(speech_context or {}),
        programs=tuple(programs),
        limits=limits,
    )


def _describe_voice(synthesizer: Any, language: str) -> str:
    kind = type(synthesizer).__name__
    if kind.startswith("Piper"):
        return f"Piper neural voice ({language})"
    if kind.startswith("Espeak"):
        return f"eSpeak NG formant voice ({language})"
    if kind.startswith("Kokoro"):
        return f"Kokoro-82M neural voice, read from {language} phonemes"
    return f"{kind} ({language})"
