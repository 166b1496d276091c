"""The contracts every audio component keeps, real or fake.

Audio travels as :class:`AudioChunk`: float32 mono samples in [-1, 1] with
their sample rate.  Time is always ``time.monotonic()`` seconds, so that a
timestamp taken in a PortAudio callback thread and one taken on the event
loop can be compared.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np


class AudioDeviceError(RuntimeError):
    """A sound device could not be opened, or was lost while in use; the message names it in one line."""


@dataclass(frozen=True)
class AudioChunk:
    """A piece of mono audio."""

    samples: np.ndarray
    """float32, one dimension, values in [-1, 1]."""
    sample_rate: int
    """Samples per second."""

    @property
    def duration(self) -> float:
        return len(self.samples) / self.sample_rate


@dataclass(frozen=True)
class CapturedChunk(AudioChunk):
    """A microphone chunk that knows when it was recorded (echo cancellation lines it up with
    what the speaker played then).  Anything taking an :class:`AudioChunk` takes it."""

    captured_at: float
    """Monotonic time at which the chunk's first sample reached the microphone's converter."""


def captured_at(chunk: AudioChunk, arrived_at: float) -> float:
    """When ``chunk``'s first sample was recorded: its own stamp, else (a source that does not
    stamp) its arrival at ``arrived_at`` minus its length, as a live microphone delivers a chunk
    once its last sample is in."""
    if isinstance(chunk, CapturedChunk):
        return chunk.captured_at
    return arrived_at - chunk.duration


@dataclass(frozen=True)
class Transcript:
    """What the recognizer believes was said so far."""

    text: str
    is_final: bool
    """False for a partial that may still change, True once the utterance has ended."""
    stable_chars: int = 0
    """How many leading characters of ``text`` later partials keep (the final may still revise them)."""
    audio_s: float = 0.0
    """Seconds of utterance audio this hypothesis covers."""
    hypothesis: str | None = None
    """The recognizer's own whole hypothesis of those ``audio_s`` seconds, when it is what the
    final decode of the same audio would say (decoded the same way and checked); None for a
    partial that is only good for showing.  ``text`` of a partial may differ: it keeps the
    words earlier partials agreed on."""
    alternatives: tuple[tuple[str, float], ...] = ()
    """On a final decoded with more than one hypothesis: each hypothesis's text and its mean token
    log-probability, the decoder's best first (``text`` may be another, chosen by the household's
    words); empty otherwise."""
    avg_logprob: float | None = None
    """The mean token log-probability of ``hypothesis`` (of ``text`` on a final), when the
    recognizer scores its words: near 0 for a sure decode, below about -0.6 for a doubtful one."""
    no_speech_prob: float | None = None
    """The recognizer's probability that the audio held no speech at all, when it gives one."""
    word_probs: tuple[tuple[str, float], ...] = ()
    """On a final, when the recognizer can say: each word of ``text`` (as written there, with its
    punctuation) and how sure the recognizer is of it, 0 to 1."""
    second_hearing: str | None = None
    """On a final heard by two recognizers (:class:`audio.two_ears.TwoEars`): what the second one
    heard of the same audio; None with one ear."""


@dataclass(frozen=True)
class VadEvent:
    """A change in voice activity, at a sample offset from the start of the stream."""

    speech: bool
    """True when speech started, False when it stopped."""
    sample: int
    """Offset in samples (at the detector's sample rate) where the change happened."""


@runtime_checkable
class Microphone(Protocol):
    """A source of audio chunks (a sound card, or a WAV file played in real time)."""

    sample_rate: int

    def chunks(self) -> AsyncIterator[AudioChunk]:
        """Yield audio as it arrives; ends when the source ends or is closed.

        A sound card that is lost raises :class:`AudioDeviceError` here rather than going quiet.
        """
        ...

    async def close(self) -> None: ...


@dataclass(frozen=True)
class ArrayChunk:
    """A block of every captured channel."""

    samples: np.ndarray
    """float32, ``(samples, channels)``, values in [-1, 1]."""
    sample_rate: int
    captured_at: float
    """Monotonic time at which the block's first sample reached the converters."""

    @property
    def duration(self) -> float:
        return len(self.samples) / self.sample_rate


@runtime_checkable
class ArraySource(Protocol):
    """Blocks of all of an array's captured channels, as they arrive."""

    sample_rate: int
    channels: int

    def chunks(self) -> AsyncIterator[ArrayChunk]: ...

    async def close(self) -> None: ...


@runtime_checkable
class TurnAware(Protocol):
    """A microphone that wants to know when a turn listens (an array's front end does)."""

    def turn_began(self) -> None: ...

    def turn_ended(self) -> None: ...


HeardCallback = Callable[[float], None]
"""Called with the monotonic time at which a chunk's first sample reached the output."""


class PlaybackListener(Protocol):
    """Told what a speaker played and when (the far-end reference of echo cancellation)."""

    def played(self, samples: np.ndarray, rate: int, at: float) -> None:
        """``samples`` (float32 mono at ``rate``) were played, the first reaching the output at
        monotonic ``at``.  Called from the speaker's audio thread: it must be quick and thread-safe."""
        ...


@runtime_checkable
class Speaker(Protocol):
    """An audio sink with a clock: it knows when each sample is actually heard."""

    sample_rate: int

    async def write(self, chunk: AudioChunk, on_heard: HeardCallback | None = None) -> None:
        """Queue a chunk for playback; waits while the output buffer is full.

        ``on_heard`` is called (on the event loop) when the chunk's first
        sample reaches the output: the listener's side, not the writer's.
        A sound card that is lost raises :class:`AudioDeviceError` here and in
        ``drain()`` rather than blocking.
        """
        ...

    async def drain(self) -> float:
        """Wait until everything written has been played; return when the last sample was heard."""
        ...

    def interrupt(self) -> None:
        """Drop all audio not yet played, at once (barge-in)."""
        ...

    async def close(self) -> None: ...


@runtime_checkable
class VoiceActivityDetector(Protocol):
    """Frame-level speech detection on 16 kHz audio."""

    sample_rate: int

    def accept(self, samples: np.ndarray) -> list[VadEvent]:
        """Feed samples; return the speech start/stop changes they completed."""
        ...

    def reset(self) -> None: ...


@runtime_checkable
class TurnEndModel(Protocol):
    """Whether a speaker who has gone quiet has finished their turn, from the sound of it."""

    sample_rate: int

    def probability(self, samples: np.ndarray) -> float:
        """P(finished) for the utterance so far, which ends with the pause (blocking)."""
        ...


@runtime_checkable
class Recognizer(Protocol):
    """Speech to text that can report partial hypotheses while audio still arrives."""

    language: str
    sample_rate: int

    def transcribe(self, audio: AsyncIterator[AudioChunk], context: str = "", *, hypotheses: int = 1) -> AsyncIterator[Transcript]:
        """Consume one utterance; yield partials while it grows and exactly one final at its end.

        ``context`` is text likely to be said in this household (units, list items, recipe
        titles, place names); a recognizer may bias what it hears toward it, or ignore it.
        The final is a whole hypothesis of all the audio.  ``hypotheses`` above 1 asks for the
        final's n best (``Transcript.alternatives``) where the recognizer can search for them;
        one that cannot leaves them empty.  Cancelling the consumer stops all work (including
        work in threads).
        """
        ...


@runtime_checkable
class Synthesizer(Protocol):
    """Text to speech, one spoken unit (a sentence or so) at a time."""

    language: str
    sample_rate: int

    def synthesize(self, text: str) -> AsyncIterator[AudioChunk]:
        """Yield the audio of ``text``; cancelling the consumer stops synthesis."""
        ...
