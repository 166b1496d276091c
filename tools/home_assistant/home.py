"""The household's Home Assistant as hearth sees it: the exposed entities, read when needed and kept
a little while, and the room this speaker stands in."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence

from tools.home_assistant.client import HomeApi, HomeAssistantRefused, HomeAssistantUnavailable, HomeEntity
from tools.home_assistant.names import home_words, names_something

log = logging.getLogger(__name__)


class HomeAssistantHome:
    """The entity list of one Home Assistant, cached for ``fresh_s`` (a request reads it once; a
    state question or an act reads it again, so what is said is Home Assistant's state now)."""

    def __init__(self, api: HomeApi, own_area: str | None = None, fresh_s: float = 30.0) -> None:
        self.api = api
        self.own_area = own_area
        self.fresh_s = fresh_s
        self._entities: list[HomeEntity] = []
        self._read_at = -1e9
        self._lock = asyncio.Lock()
        self.reachable: bool | None = None
        """Whether the last attempt reached it (None: not tried yet)."""

    async def entities(self, fresh: bool = False) -> list[HomeEntity]:
        """The exposed entities; read again when older than ``fresh_s`` or when ``fresh``.
        Raises HomeAssistantUnavailable when it cannot be read."""
        async with self._lock:
            if fresh or time.monotonic() - self._read_at > self.fresh_s:
                try:
                    try:
                        self._entities = await self.api.entities()
                    except HomeAssistantRefused as exc:
                        # The registries answer administrators only.
                        raise HomeAssistantUnavailable(f"Home Assistant would not list its entities ({exc}); "
                                                       "the token must be an administrator's") from None
                except HomeAssistantUnavailable as exc:
                    self.unreachable(exc)
                    raise
                if self.reachable is False:
                    log.info("Home Assistant is reachable again")
                self.reachable = True
                self._read_at = time.monotonic()
            return list(self._entities)

    def unreachable(self, exc: HomeAssistantUnavailable) -> None:
        """Note that a read or a call did not reach Home Assistant.  The log says so once an outage,
        however many requests meet it (each gets its spoken apology), and once when it is back."""
        if self.reachable is not False:
            log.warning("%s; home requests get a spoken apology until it answers", exc)
        self.reachable = False

    def known(self) -> Sequence[HomeEntity]:
        """The entities as last read (none before the first read), without waiting."""
        return tuple(self._entities)

    def words(self) -> list[str]:
        """Names, aliases and areas as last read: the recognizer's prompt, and what tells a home
        request from another."""
        return home_words(self._entities)

    def names_something(self, words: str, temperature: bool = False) -> bool:
        """Whether ``words`` name a device, an area or a kind of thing of this home (as last read);
        with ``temperature``, a room or a thing that reports its temperature."""
        return names_something(words, self._entities, temperature)

    async def watch(self, interval_s: float = 60.0, also: Callable[[], Awaitable[object]] | None = None) -> None:
        """Reads the entity list now and every ``interval_s``, so names added in Home Assistant
        are heard, and one that is back after an outage is known before it is asked for; ``also``
        runs after each read (the shared list sending what waited for Home Assistant)."""
        while True:
            try:
                await self.entities(fresh=True)
                if also is not None:
                    await also()
            except HomeAssistantUnavailable:
                pass  # said once by entities(); the next request gets the spoken sentence
            except Exception:
                log.exception("reading Home Assistant's entities failed")
            await asyncio.sleep(interval_s)

    async def close(self) -> None:
        await self.api.close()
