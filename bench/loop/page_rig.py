"""Scripted turns through a real Assistant, real stores and the real web server, for the page's latency and tests.

The models are fakes with real timing: partial transcripts arrive at set times while the audio
plays in real time, the chat decides a tool call after a short wait, each unit takes real time to
say. Everything else is hearth's own: the household's stores (``open_home_tools`` over a
temporary folder, SQLite), the tool executor, the conversation record, the live view fed the
assistant's events, and the page served by uvicorn on 127.0.0.1, port 0.

It all runs on an event loop in a thread of its own, so the benchmark (or a test) can drive a
blocking browser from its own thread while a turn is under way.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import AsyncIterator, Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from agent.assistant import Assistant
from agent.deciding.tool_calls import ToolCallPlanner
from agent.deciding.tool_use import ToolUse
from agent.events import Event
from agent.features import Features
from agent.listening.listen import Press
from agent.live_view import LiveView
from agent.record import ConversationRecord
from agent.deps import TurnDeps
from agent.results import TurnResult
from audio.protocols import AudioChunk, Transcript
from audio.wav import WavFileMicrophone, WavFileSpeaker
from bench.loop.scripted import EnergyVad, ToneSynthesizer, speech_like
from firmware_py.config import HearthConfig, ToolsConfig
from firmware_py.home_tools import HomeTools, open_home_tools

T = TypeVar("T")


@dataclass(frozen=True)
class Utterance:
    """What the user says in one scripted turn."""

    final: str
    """The words the recognizer settles on when the audio ends."""
    partials: tuple[tuple[float, str], ...] = ()
    """(seconds after the audio starts, partial transcript): each arrives no earlier than its time."""
    speech_s: float = 1.6
    """How long the user speaks; the audio plays in real time, so the turn takes at least this."""


def growing(words: str, speech_s: float = 1.6, every_s: float = 0.3) -> Utterance:
    """An utterance whose partials grow a word at a time, one every ``every_s``, within the speech."""
    split = words.rstrip("?.!").split()
    steps = max(1, int(speech_s / every_s) - 1)
    partials = []
    for i in range(1, steps + 1):
        shown = " ".join(split[: max(1, round(len(split) * i / (steps + 1)))])
        if not partials or partials[-1][1] != shown:
            partials.append((round(i * every_s, 3), shown))
    return Utterance(words, tuple(partials), speech_s)


class TimedRecognizer:
    """Partials at set wall-clock times after the audio starts; the final once the audio ends."""

    sample_rate = 16000

    def __init__(self, utterance: Utterance, language: str = "en") -> None:
        self.utterance = utterance
        self.language = language

    async def transcribe(self, audio: AsyncIterator[AudioChunk], context: str = "", *, hypotheses: int = 1) -> AsyncIterator[Transcript]:
        began = time.monotonic()
        pending = list(self.utterance.partials)
        async for _chunk in audio:
            while pending and time.monotonic() - began >= pending[0][0]:
                yield Transcript(pending.pop(0)[1], False, 0, time.monotonic() - began)
        final = self.utterance.final
        yield Transcript(final, True, len(final), time.monotonic() - began, final)


@dataclass(frozen=True)
class Decision:
    """The chat's decision when the user's words contain ``when`` (case-folded)."""

    when: str
    say: str
    tool: str | None = None
    args: dict[str, Any] = field(default_factory=dict)

    def json(self) -> str:
        body: dict[str, Any] = {"say": self.say, "tool": self.tool or "none"}
        if self.tool is not None:
            body["args"] = self.args
        return json.dumps(body, ensure_ascii=False)


class DecidingChat:
    """A chat model that writes a scripted tool decision, in pieces, after ``ttft_s``.

    The first :class:`Decision` whose ``when`` is in the user's last words wins; none: a plain
    answer with no tool. A phrasing call (no schema) gets ``phrasing``.
    """

    def __init__(self, decisions: Sequence[Decision], ttft_s: float = 0.15, piece_s: float = 0.01,
                 fallback: str = "I'm not sure.", phrasing: str = "Done.") -> None:
        self.decisions = list(decisions)
        self.ttft_s = ttft_s
        self.piece_s = piece_s
        self.fallback = fallback
        self.phrasing = phrasing
        self.asked: list[str] = []

    async def warm(self, system_prompt: str) -> None:
        return None

    async def stream(self, messages, max_tokens=None, json_schema=None) -> AsyncIterator[str]:
        if json_schema is None:
            yield self.phrasing
            return
        words = messages[-1].content
        self.asked.append(words)
        folded = words.casefold()
        chosen = next((d for d in self.decisions if d.when.casefold() in folded), Decision("", self.fallback))
        await asyncio.sleep(self.ttft_s)
        text = chosen.json()
        for i in range(0, len(text), 12):
            yield text[i : i + 12]
            await asyncio.sleep(self.piece_s)


ENGLISH_DECISIONS = (
    Decision("timer", "", "timer_start", {"duration_s": 300, "label": "pasta"}),
    Decision("shopping list", "", "shopping_list"),
    Decision("add", "", "shopping_add", {"item": "flour"}),
)
KOREAN_DECISIONS = (
    Decision("타이머", "", "timer_start", {"duration_s": 300, "label": "파스타"}),
    Decision("장보기", "", "shopping_list"),
)


@dataclass
class Stamped:
    """An event as the live view applied it: wall-clock time (``time.time()``, as the page's
    ``Date.now()``) just before the live view folded it in."""

    t: float
    event: Event
    changed: bool


class PageRig:
    """A household behind the page: stores, assistant, live view and web server on a loop thread.

    ``start()`` opens it all and returns the page's URL; ``say(utterance)`` runs one scripted turn
    (a Future of its :class:`TurnResult`); ``on_loop(fn)`` runs ``fn(home)`` on the loop (the
    SQLite stores belong to its thread); ``stop()`` closes everything.
    """

    def __init__(self, folder: Path, language: str = "en", decisions: Sequence[Decision] | None = None,
                 seconds_per_char: float = 0.03, web_settings: dict[str, Any] | None = None) -> None:
        self.folder = folder
        self.language = language
        self.chat = DecidingChat(decisions if decisions is not None else (ENGLISH_DECISIONS if language == "en" else KOREAN_DECISIONS))
        self.seconds_per_char = seconds_per_char
        self.web_settings = web_settings or {}
        self.events: list[Stamped] = []
        self.url = ""
        self.home: HomeTools | None = None
        self.assistant: Assistant | None = None
        self.view: LiveView | None = None
        self.record: ConversationRecord | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: Any = None
        self.app: Any = None

    # -- life ---------------------------------------------------------------------------

    def start(self, timeout_s: float = 30.0) -> str:
        ready = threading.Event()

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            asyncio.set_event_loop(loop)
            ready.set()
            loop.run_forever()
            loop.close()

        self._thread = threading.Thread(target=run, name="page-rig", daemon=True)
        self._thread.start()
        ready.wait(timeout_s)
        try:
            self.url = self.run(self._open(), timeout_s)
        except BaseException:
            self.stop()  # what opened is closed, and the loop's thread ends
            raise
        return self.url

    def stop(self, timeout_s: float = 30.0) -> None:
        if self._loop is None:
            return
        try:
            self.run(self._close(), timeout_s)
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            if self._thread is not None:
                self._thread.join(timeout_s)
            self._loop = None

    def __enter__(self) -> "PageRig":
        self.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop()

    async def _open(self) -> str:
        config = HearthConfig(language=self.language, tools=ToolsConfig(data_dir=self.folder / "data"))  # type: ignore[arg-type]
        self.home = home = await open_home_tools(config)
        registry = home.registry.for_model()
        planner = ToolCallPlanner(self.chat, registry.specs, registry.tool_call_schema(), "be brief")
        deps = TurnDeps(
            vad=EnergyVad(), recognizer=TimedRecognizer(Utterance(""), self.language), chat=self.chat,
            synthesizer=ToneSynthesizer(seconds_per_char=self.seconds_per_char), speaker=WavFileSpeaker(16000),
            language=self.language, system_prompt="be brief",
            features=Features(heartbeat=False, read_ahead=False, prewarm=False),
            tools=ToolUse(planner, home.executor, home.registry, home=home),
        )
        self.view = LiveView()
        self.record = ConversationRecord.open(self.folder / "record.db")
        self.assistant = Assistant(deps, on_event=self._on_event, record=self.record)
        return await self._serve()

    async def _serve(self) -> str:
        """The page over this household, served on 127.0.0.1 at a free port; its URL."""
        from firmware_py.web import PageSources, WebServer, WebSettings, create_app

        assert self.home is not None and self.view is not None
        settings = WebSettings(host="127.0.0.1", port=0, language=self.language, **self.web_settings)
        sources = PageSources(live=self.view, home=self.home, record=self.record, assistant=self.assistant)
        self.app = create_app(sources, settings)
        self._server = WebServer(self.app, settings.host, settings.port, settings.token)
        host, port = await self._server.start()
        return f"http://{host}:{port}/"

    async def _close(self) -> None:
        if self._server is not None:
            await self._server.stop()
        if self.assistant is not None:
            await self.assistant.settle()
            await self.assistant.deps.tools.close()  # type: ignore[union-attr]
            self.assistant.close()
        elif self.home is not None:
            await self.home.close()

    def _on_event(self, event: Event) -> None:
        t = time.time()
        assert self.view is not None
        changed = self.view.apply(event)
        self.events.append(Stamped(t, event, changed))

    # -- driving --------------------------------------------------------------------------

    def run(self, coro: Any, timeout_s: float | None = None) -> Any:
        """Run ``coro`` on the rig's loop and wait for its value."""
        assert self._loop is not None, "start() the rig first"
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout_s)

    def run_later(self, coro: Any) -> Future[Any]:
        """Start ``coro`` on the rig's loop; its Future."""
        assert self._loop is not None, "start() the rig first"
        return asyncio.run_coroutine_threadsafe(coro, self._loop)

    def on_loop(self, fn: Callable[[HomeTools], T], timeout_s: float = 10.0) -> T:
        """``fn(home)`` on the loop's thread (where the stores' connections live)."""

        async def call() -> T:
            assert self.home is not None
            return fn(self.home)

        return self.run(call(), timeout_s)

    def say(self, utterance: Utterance) -> Future[TurnResult]:
        """Start one tapped turn in which the user says ``utterance``; its result, later."""
        assert self._loop is not None, "start() the rig first"
        return asyncio.run_coroutine_threadsafe(self._turn(utterance), self._loop)

    async def _turn(self, utterance: Utterance) -> TurnResult:
        assert self.assistant is not None
        self.assistant.deps.recognizer = TimedRecognizer(utterance, self.language)
        press = Press()
        asyncio.get_running_loop().call_later(0.0, press.release)
        audio = speech_like(utterance.speech_s, silence_before_s=0.1, silence_after_s=0.6)
        return await self.assistant.handle(WavFileMicrophone(audio, realtime=True).chunks(), press)

    def spoken_since(self, index: int) -> list[str]:
        """The units said after ``events[index]``, in order."""
        from agent.events import UnitSpoken

        return [s.event.text for s in self.events[index:] if isinstance(s.event, UnitSpoken)]
