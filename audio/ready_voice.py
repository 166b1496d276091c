"""A voice that can say a line before it is asked to: the audio of a unit made ahead of time.

Synthesis is the last step before the first word is heard: a short sentence costs Piper about
0.2 s on two cores, paid after the decision and the tool.  Often the words are known before the
turn may speak them: an act's confirmation follows from its arguments, an early look-up's answer
is back before the user finished, and a tapped turn waits out a silence after its decision.
:class:`ReadyVoice` wraps any :class:`~audio.protocols.Synthesizer`: :meth:`prepare` renders a text
in the background, and :meth:`synthesize` gives that audio when the same text is asked for (or
waits for it while it is still being made), else synthesizes as before.  A wrong guess costs the
CPU it took and nothing else: what is said is always what was asked for.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import AsyncIterator, Iterable

from audio.protocols import AudioChunk, Synthesizer

logger = logging.getLogger(__name__)


class ReadyVoice:
    """A :class:`~audio.protocols.Synthesizer` that keeps the audio of lines made ahead.

    ``keep``: how many prepared lines are kept, the least recently prepared or used dropped first.
    Lines given to :meth:`keep_always` (fixed phrases) are never dropped.
    """

    def __init__(self, voice: Synthesizer, keep: int = 16) -> None:
        self.voice = voice
        self.keep = keep
        self.hits = 0
        """Units said from audio made ahead."""
        self.misses = 0
        """Units synthesized when asked for."""
        self._ready: OrderedDict[str, tuple[AudioChunk, ...]] = OrderedDict()
        self._making: dict[str, asyncio.Task[tuple[AudioChunk, ...]]] = {}
        self._always: dict[str, tuple[AudioChunk, ...]] = {}

    @property
    def language(self) -> str:  # type: ignore[override]
        return self.voice.language

    @property
    def sample_rate(self) -> int:  # type: ignore[override]
        return self.voice.sample_rate

    def has(self, text: str) -> bool:
        """Whether ``text`` is made or being made."""
        key = text.strip()
        return key in self._ready or key in self._always or key in self._making

    def prepare(self, text: str) -> None:
        """Start making ``text`` in the background (nothing if it is made or being made)."""
        key = text.strip()
        if not key or self.has(key):
            return
        task = asyncio.create_task(self._make(key), name="ready-voice")
        self._making[key] = task
        task.add_done_callback(lambda t, key=key: self._made(key, t))

    async def keep_always(self, texts: Iterable[str]) -> None:
        """Make ``texts`` now and keep them for good (the fixed lines said on many turns)."""
        for text in texts:
            key = text.strip()
            if key and key not in self._always:
                self._always[key] = await self._make(key)

    async def synthesize(self, text: str) -> AsyncIterator[AudioChunk]:
        key = text.strip()
        chunks = self._always.get(key) or self._ready.get(key)
        making = self._making.get(key)
        if chunks is None and making is not None:
            try:
                chunks = await asyncio.shield(making)
            except asyncio.CancelledError:
                if asyncio.current_task() is not None and asyncio.current_task().cancelling():  # type: ignore[union-attr]
                    raise
                chunks = None  # the making was stopped, not the one asking: make it now
            except Exception:  # noqa: BLE001 - made ahead or not, the line is said: synthesize it now
                chunks = None
        if chunks is None:
            self.misses += 1
            async for chunk in self.voice.synthesize(text):
                yield chunk
            return
        self.hits += 1
        if key in self._ready:
            self._ready.move_to_end(key)
        for chunk in chunks:
            yield chunk

    async def _make(self, key: str) -> tuple[AudioChunk, ...]:
        return tuple([chunk async for chunk in self.voice.synthesize(key)])

    def _made(self, key: str, task: asyncio.Task[tuple[AudioChunk, ...]]) -> None:
        self._making.pop(key, None)
        if task.cancelled():
            return
        if task.exception() is not None:
            logger.warning("a line made ahead failed: %s", task.exception())
            return
        self._ready[key] = task.result()
        self._ready.move_to_end(key)
        while len(self._ready) > self.keep:
            self._ready.popitem(last=False)


def own_voice(synthesizer: Synthesizer) -> Synthesizer:
    """The voice itself, without a :class:`ReadyVoice` around it (what Wyoming clients are offered)."""
    return synthesizer.voice if isinstance(synthesizer, ReadyVoice) else synthesizer
