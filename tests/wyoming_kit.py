"""What the Wyoming tests share: fakes behind hearth's protocols, a server on loopback, PCM helpers.

Every exchange goes through the wyoming library's own ``AsyncTcpClient`` and event classes.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Sequence

import numpy as np
from wyoming.audio import AudioChunk as WyAudioChunk
from wyoming.audio import AudioStart, AudioStop
from wyoming.client import AsyncTcpClient
from wyoming.event import Event

from audio.protocols import AudioChunk, Transcript
from firmware_py.wyoming import WyomingServer
from firmware_py.wyoming.offer import WyomingOffer

READ_TIMEOUT_S = 10.0


class GrowingRecognizer:
    """Shows one more word of ``text`` per ``step_s`` of audio heard, the words before the newest as stable.

    With ``report_length`` the final is "<milliseconds of audio heard> ms" instead, so concurrent
    clients can each check they got the answer to their own audio.
    """

    def __init__(self, text: str = "set a timer for five minutes", language: str = "en", step_s: float = 0.2, report_length: bool = False) -> None:
        self.text = text
        self.language = language
        self.sample_rate = 16000
        self.step_s = step_s
        self.report_length = report_length
        self.heard: list[np.ndarray] = []
        self.rates: set[int] = set()
        self.contexts: list[str] = []
        self.started = 0
        self.active = 0
        self.most_active = 0
        self.closed = 0
        self.finished = 0

    async def transcribe(self, audio: AsyncIterator[AudioChunk], context: str = "", *, hypotheses: int = 1) -> AsyncIterator[Transcript]:
        self.started += 1
        self.active += 1
        self.most_active = max(self.most_active, self.active)
        self.contexts.append(context)
        words = self.text.split()
        parts: list[np.ndarray] = []
        shown = 0
        try:
            async for chunk in audio:
                self.rates.add(chunk.sample_rate)
                parts.append(chunk.samples)
                seconds = sum(len(p) for p in parts) / self.sample_rate
                n = min(len(words), int(seconds / self.step_s))
                if n > shown:
                    shown = n
                    text = " ".join(words[:n])
                    stable = len(" ".join(words[: n - 1]))
                    yield Transcript(text, False, stable, seconds)
            samples = np.concatenate(parts) if parts else np.zeros(0, np.float32)
            self.heard.append(samples)
            await asyncio.sleep(0.01)
            final = f"{round(len(samples) / self.sample_rate * 1000)} ms" if self.report_length else self.text
            self.finished += 1
            yield Transcript(final, True, len(final), len(samples) / self.sample_rate, final)
        finally:
            self.active -= 1
            self.closed += 1


class ScriptedAnswers:
    """A :class:`~firmware_py.wyoming.protocols.TextAnswers` that says ``units`` one by one."""

    def __init__(self, units: Sequence[str] = ("Sure. ", "A five minute timer is running."), unit_s: float = 0.01, fail: bool = False) -> None:
        self.units = list(units)
        self.unit_s = unit_s
        self.fail = fail
        self.asked: list[str] = []

    async def answer_text(self, text: str) -> AsyncIterator[str]:
        self.asked.append(text)
        for unit in self.units:
            await asyncio.sleep(self.unit_s)
            yield unit
        if self.fail:
            raise RuntimeError("the model crashed")


def tone(seconds: float, rate: int = 16000, hz: float = 220.0, channels: int = 1) -> np.ndarray:
    """A tone as float32, shaped (samples, channels)."""
    t = np.arange(int(seconds * rate)) / rate
    mono = (0.3 * np.sin(2 * np.pi * hz * t)).astype(np.float32)
    return np.repeat(mono[:, None], channels, axis=1)


def pcm(samples: np.ndarray, width: int = 2) -> bytes:
    """Interleaved signed little-endian PCM of float samples shaped (samples, channels)."""
    if width == 2:
        return (samples * 32767).astype("<i2").tobytes()
    return (samples.astype(np.float64) * 2147483647).astype("<i4").tobytes()


def audio_events(samples: np.ndarray, rate: int = 16000, width: int = 2, chunk_s: float = 0.1) -> list[Event]:
    """audio-start, audio-chunks of ``chunk_s``, audio-stop for ``samples`` shaped (samples, channels)."""
    channels = samples.shape[1]
    events = [AudioStart(rate=rate, width=width, channels=channels).event()]
    step = max(1, int(rate * chunk_s))
    for start in range(0, len(samples), step):
        events.append(WyAudioChunk(rate=rate, width=width, channels=channels, audio=pcm(samples[start : start + step], width)).event())
    events.append(AudioStop().event())
    return events


@contextlib.asynccontextmanager
async def serving(offer: WyomingOffer) -> AsyncIterator[tuple[WyomingServer, str, int]]:
    """A started server on 127.0.0.1 port 0: (server, host, port)."""
    server = WyomingServer(offer)
    uri = await server.start("tcp://127.0.0.1:0")
    host, port = uri.removeprefix("tcp://").rsplit(":", 1)
    try:
        yield server, host, int(port)
    finally:
        await server.stop()


def client(host: str, port: int) -> AsyncTcpClient:
    return AsyncTcpClient(host, port, connect_timeout=5.0, read_timeout=READ_TIMEOUT_S)


async def read_until(c: AsyncTcpClient, *last: str) -> list[Event]:
    """Events until one whose type is in ``last`` (included)."""
    events: list[Event] = []
    while True:
        event = await c.read_event()
        assert event is not None, f"connection closed; got {[e.type for e in events]}"
        events.append(event)
        if event.type in last:
            return events


async def no_wyoming_tasks_left() -> None:
    """Wait (bounded) until no task the server started is still running."""
    for _ in range(200):
        names = [t.get_name() for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        if not any(n.startswith("wyoming") for n in names):
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"tasks still running: {names}")
