"""Fakes behind the same protocols as the real components, with scripted timing.

They let a test say "the user speaks from 0.2 s to 1.0 s, the model answers
after 50 ms, each unit takes 0.3 s to say" and check what the listener gets.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence

import numpy as np

from agent.model.llm import ChatMessage
from audio.protocols import AudioChunk, Transcript
from bench.loop.scripted import EnergyVad, ToneSynthesizer, speech_like  # noqa: F401 - re-exported: the tests take their fakes from here


class ScriptedRecognizer:
    """Yields a partial every ``partial_every_s`` of audio, then ``text`` as the final."""

    def __init__(
        self, text: str, language: str = "en", partial_every_s: float = 0.5, decode_s: float = 0.01,
        avg_logprob: float | None = None, no_speech_prob: float | None = None,
        alternatives: tuple[tuple[str, float], ...] = (), word_probs: tuple[tuple[str, float], ...] = (),
    ) -> None:
        self.text = text
        self.alternatives = alternatives
        self.word_probs = word_probs
        self.avg_logprob = avg_logprob
        self.no_speech_prob = no_speech_prob
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
        yield Transcript(
            self.text, True, len(self.text), seconds, self.text, self.alternatives,
            avg_logprob=self.avg_logprob, no_speech_prob=self.no_speech_prob, word_probs=self.word_probs,
        )


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


async def say(assistant, text: str, speech_s: float = 0.4, avg_logprob: float | None = None, alternatives=(), word_probs=()):
    """One tapped utterance that the scripted recognizer hears as ``text`` (its words scored
    ``avg_logprob``, each word ``word_probs``); the turn's result."""
    from agent.listening.listen import Press
    from audio.wav import WavFileMicrophone

    assistant.deps.recognizer = ScriptedRecognizer(
        text, avg_logprob=avg_logprob, alternatives=tuple(alternatives), word_probs=tuple(word_probs),
    )
    press = Press()
    asyncio.get_running_loop().call_later(0.0, press.release)
    audio = WavFileMicrophone(speech_like(speech_s, silence_before_s=0.1, silence_after_s=0.0)).chunks()
    return await assistant.handle(audio, press)


class FakeHomeAssistant:
    """A Home Assistant behind :class:`tools.home_assistant.client.HomeApi`: entities in memory,
    services that change their states as Home Assistant's would, and an outage switch."""

    def __init__(self, entities: Sequence[object]) -> None:
        from dataclasses import replace

        self._replace = replace
        self.entities_now = {e.entity_id: e for e in entities}  # type: ignore[attr-defined]
        self.calls: list[tuple[str, str, tuple[str, ...], dict]] = []
        self.down = False
        self.todo: dict[str, list[dict]] = {"todo.shopping_list": []}

    def _check(self) -> None:
        from tools.home_assistant.client import HomeAssistantUnavailable

        if self.down:
            raise HomeAssistantUnavailable("cannot connect to ws://127.0.0.1:1/api/websocket: ConnectionRefusedError")

    async def entities(self) -> list:
        self._check()
        return list(self.entities_now.values())

    async def call_service(self, domain: str, service: str, entity_ids: Sequence[str], data: dict | None = None, response: bool = False):
        self._check()
        data = dict(data or {})
        self.calls.append((domain, service, tuple(entity_ids), data))
        if domain == "todo":
            return self._todo(service, entity_ids[0], data)
        states = {"turn_on": "on", "turn_off": "off", "open_cover": "open", "close_cover": "closed", "lock": "locked", "unlock": "unlocked"}
        for entity_id in entity_ids:
            entity = self.entities_now[entity_id]
            attributes = dict(entity.attributes)
            state = states.get(service, entity.state)
            if domain == "climate" and service == "turn_on":
                state = "heat"
            if service == "set_hvac_mode":
                state = data["hvac_mode"]
            if service == "set_temperature":
                attributes["temperature"] = data["temperature"]
            self.entities_now[entity_id] = self._replace(entity, state=state, attributes=attributes)
        return None

    def _todo(self, service: str, entity_id: str, data: dict):
        from tools.home_assistant.client import HomeAssistantRefused

        items = self.todo[entity_id]
        if service == "get_items":
            wanted = data.get("status") or ["needs_action", "completed"]
            return {entity_id: {"items": [dict(i) for i in items if i["status"] in wanted]}}
        if service == "add_item":
            items.append({"summary": data["item"], "status": "needs_action", "description": data.get("description")})
            return None
        found = [i for i in items if i["summary"] == data["item"]]
        if not found:
            raise HomeAssistantRefused(f"home_assistant_error: Unable to find To-do item: {data['item']}")
        found[0].update({k: v for k, v in data.items() if k in ("status", "description")})
        return None

    async def close(self) -> None:
        pass
