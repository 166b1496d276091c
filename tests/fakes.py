"""Fakes behind the same protocols as the real components, with scripted timing.

They let a test say "the user speaks from 0.2 s to 1.0 s, the model answers
after 50 ms, each unit takes 0.3 s to say" and check what the listener gets.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence

import numpy as np

from agent.model.llm import ChatMessage
from audio.protocols import AudioChunk, Transcript, VadEvent


def speech_like(duration_s: float, rate: int = 16000, silence_before_s: float = 0.3, silence_after_s: float = 0.8) -> AudioChunk:
    """A loud tone standing in for speech, between stretches of silence."""
    t = np.arange(int(duration_s * rate)) / rate
    tone = 0.3 * np.sin(2 * np.pi * 220 * t).astype(np.float32)
    pad = lambda s: np.zeros(int(s * rate), np.float32)  # noqa: E731
    return AudioChunk(np.concatenate([pad(silence_before_s), tone, pad(silence_after_s)]), rate)


class EnergyVad:
    """Speech is any 32 ms window louder than a threshold; ends after ``min_silence_s``."""

    def __init__(self, sample_rate: int = 16000, threshold: float = 0.02, min_silence_s: float = 0.3) -> None:
        self.sample_rate = sample_rate
        self.threshold = threshold
        self.min_silence = int(min_silence_s * sample_rate)
        self.window = 512
        self.reset()

    def reset(self) -> None:
        self._pending = np.zeros(0, np.float32)
        self._pos = 0
        self._speaking = False
        self._last_voice = 0

    def accept(self, samples: np.ndarray) -> list[VadEvent]:
        events: list[VadEvent] = []
        self._pending = np.concatenate([self._pending, samples])
        while len(self._pending) >= self.window:
            frame, self._pending = self._pending[: self.window], self._pending[self.window :]
            loud = float(np.sqrt(np.mean(frame**2))) > self.threshold
            if loud:
                if not self._speaking:
                    events.append(VadEvent(True, self._pos))
                    self._speaking = True
                self._last_voice = self._pos + self.window
            elif self._speaking and self._pos + self.window - self._last_voice >= self.min_silence:
                events.append(VadEvent(False, self._last_voice))
                self._speaking = False
            self._pos += self.window
        return events


class ScriptedRecognizer:
    """Yields a partial every ``partial_every_s`` of audio, then ``text`` as the final."""

    def __init__(self, text: str, language: str = "en", partial_every_s: float = 0.5, decode_s: float = 0.01) -> None:
        self.text = text
        self.language = language
        self.sample_rate = 16000
        self.partial_every_s = partial_every_s
        self.decode_s = decode_s
        self.audio_seen: list[float] = []
        self.contexts: list[str] = []

    async def transcribe(self, audio: AsyncIterator[AudioChunk], context: str = "", *, hypotheses: int = 1) -> AsyncIterator[Transcript]:
        self.contexts.append(context)
        seconds = 0.0
        next_partial = self.partial_every_s
        words = self.text.split()
        async for chunk in audio:
            seconds += chunk.duration
            if seconds >= next_partial:
                next_partial += self.partial_every_s
                shown = " ".join(words[: max(1, int(len(words) * min(1.0, seconds / 2)))])
                yield Transcript(shown, False, 0, seconds)
        self.audio_seen.append(seconds)
        await asyncio.sleep(self.decode_s)
        yield Transcript(self.text, True, len(self.text), seconds, self.text)


class ScriptedTurnModel:
    """An end-of-turn model that says finished with a fixed probability, and counts its calls."""

    sample_rate = 16000

    def __init__(self, p: float = 0.9) -> None:
        self.p = p
        self.calls: list[float] = []

    def probability(self, samples: np.ndarray) -> float:
        self.calls.append(len(samples) / self.sample_rate)
        return self.p


class ScriptedChatModel:
    """Streams ``reply`` in pieces after ``ttft_s``, one piece every ``token_s``."""

    def __init__(self, reply: str | Sequence[str], ttft_s: float = 0.05, token_s: float = 0.01, fail_after: int | None = None) -> None:
        self.pieces = list(reply) if not isinstance(reply, str) else [w + " " for w in reply.split(" ")]
        if isinstance(reply, str) and self.pieces:
            self.pieces[-1] = self.pieces[-1].rstrip(" ")
        self.ttft_s = ttft_s
        self.token_s = token_s
        self.fail_after = fail_after
        self.calls: list[list[ChatMessage]] = []
        self.warmed_with: list[str] = []
        self.closed_early = 0

    async def warm(self, system_prompt: str) -> None:
        self.warmed_with.append(system_prompt)

    async def stream(self, messages: Sequence[ChatMessage], max_tokens: int | None = None) -> AsyncIterator[str]:
        self.calls.append(list(messages))
        await asyncio.sleep(self.ttft_s)
        done = False
        try:
            for i, piece in enumerate(self.pieces):
                if self.fail_after is not None and i >= self.fail_after:
                    raise RuntimeError("model crashed")
                yield piece
                await asyncio.sleep(self.token_s)
            done = True
        finally:
            if not done:
                self.closed_early += 1


class ToneSynthesizer:
    """Speaks any text as a tone lasting ``seconds_per_char`` per character."""

    def __init__(self, seconds_per_char: float = 0.02, sample_rate: int = 16000, delay_s: float = 0.01) -> None:
        self.language = "en"
        self.sample_rate = sample_rate
        self.seconds_per_char = seconds_per_char
        self.delay_s = delay_s
        self.texts: list[str] = []

    async def synthesize(self, text: str) -> AsyncIterator[AudioChunk]:
        self.texts.append(text)
        await asyncio.sleep(self.delay_s)
        n = int(len(text) * self.seconds_per_char * self.sample_rate)
        t = np.arange(n) / self.sample_rate
        yield AudioChunk((0.2 * np.sin(2 * np.pi * 330 * t)).astype(np.float32), self.sample_rate)


async def say(assistant, text: str, speech_s: float = 0.4):
    """One tapped utterance that the scripted recognizer hears as ``text``; the turn's result."""
    from agent.listening.listen import Press
    from audio.wav import WavFileMicrophone

    assistant.deps.recognizer = ScriptedRecognizer(text)
    press = Press()
    asyncio.get_running_loop().call_later(0.0, press.release)
    audio = WavFileMicrophone(speech_like(speech_s, silence_before_s=0.1, silence_after_s=0.0)).chunks()
    return await assistant.handle(audio, press)
