"""hearth's loop as the bench drives it for hours: one language, real models, the tools' stores and
the conversation record on disk, requests played from WAV files, replies on a clocked WAV speaker.

Unlike :class:`bench.loop.runner.SuiteRun` it keeps nothing per turn (no timelines, no recording), so
what the process holds after hundreds of turns is what hearth holds.  Used by the soak
(:mod:`bench.drills.soak`) and the fault drills (:mod:`bench.drills.faults`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from pathlib import Path

from agent.assistant import Assistant
from agent.events import Event, State, StateChanged, TurnFailed
from agent.record import ConversationRecord
from agent.listening.listen import Press
from agent.results import TurnResult
from audio.protocols import AudioChunk
from audio.wav import WavFileMicrophone, WavFileSpeaker
from firmware_py.config import HearthConfig
from firmware_py.wiring import build_turn_deps, close_turn_deps

log = logging.getLogger(__name__)

TRAILING_SILENCE_S = 2.0
"""Room silence after each request, as :func:`firmware_py.demo.play_request` plays it."""


class LogTap(logging.Handler):
    """Keeps the warnings and errors logged while it is attached (the one line a fault must leave)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[tuple[float, str, str, str]] = []
        """(monotonic time, level, logger, first line of the message)."""

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage().splitlines()[0] if record.getMessage() else ""
        self.records.append((time.monotonic(), record.levelname, record.name, message))

    def since(self, at: float) -> list[tuple[float, str, str, str]]:
        return [r for r in self.records if r[0] >= at]


class LiveLoop:
    """One language's loop; ``say`` plays one request into it, ``say_over`` presses during a reply."""

    def __init__(self, config: HearthConfig, data_dir: Path) -> None:
        self.config = config.model_copy(update={"tools": config.tools.model_copy(update={"data_dir": data_dir})})
        self.data_dir = data_dir
        self.speaker = WavFileSpeaker(config.audio.output_rate)
        self.assistant: Assistant | None = None
        self.failures: list[TurnFailed] = []
        """Every turn that failed inside (a stage raised), as the turn told it."""
        self._speaking = asyncio.Event()

    async def open(self) -> None:
        """Load the models, open the stores and the record, keep the decision prompt heads."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        deps = await build_turn_deps(self.config, self.speaker)
        record = ConversationRecord.open(self.data_dir / "conversation.sqlite3")
        self.assistant = Assistant(
            deps, self.config.history_turns, on_event=self._on_event, barge_in=self.config.cadence.barge_in, record=record
        )
        await self.assistant.warm()
        await self.assistant.keep_heads()

    async def close(self) -> None:
        if self.assistant is not None:
            self.assistant.interrupt()
            await self.assistant.settle()
            await close_turn_deps(self.assistant.deps)
            self.assistant.record.close()
        await self.speaker.close()

    def _on_event(self, event: Event) -> None:
        if isinstance(event, StateChanged) and event.state == State.SPEAKING:
            self._speaking.set()
        elif isinstance(event, TurnFailed):
            self.failures.append(event)

    def _start(self, audio: AudioChunk):
        assert self.assistant is not None
        self._speaking.clear()
        self.speaker.forget_played()
        press = Press()
        press.release()  # tapped: the voice detector ends the utterance
        mic = WavFileMicrophone(audio, trailing_silence_s=TRAILING_SILENCE_S)
        return self.assistant.start_turn(mic.chunks(), press)

    async def say(self, audio: AudioChunk) -> TurnResult:
        """Play one request and wait for the turn to end."""
        return await self._start(audio).wait()

    async def say_over(self, audio: AudioChunk, then: AudioChunk, after_s: float) -> tuple[TurnResult, TurnResult | None]:
        """Play ``audio``; ``after_s`` into its reply, press and say ``then`` (a barge-in).

        The second result is None when the first turn ended before its reply was heard for that
        long (then nothing was pressed)."""
        first = self._start(audio)
        done = asyncio.ensure_future(first.wait())
        speaking = asyncio.ensure_future(self._speaking.wait())
        await asyncio.wait({done, speaking}, return_when=asyncio.FIRST_COMPLETED)
        if not done.done():
            await asyncio.wait({done}, timeout=after_s)
        speaking.cancel()
        if done.done():
            return done.result(), None
        second = self._start(then)
        return await done, await second.wait()

    def forget(self) -> None:
        """A new conversation (the next scenario)."""
        assert self.assistant is not None
        self.assistant.forget()

    def sqlite_files(self) -> list[Path]:
        return sorted(p for p in self.data_dir.iterdir() if p.suffix in (".db", ".sqlite3"))

