"""Home Assistant's WebSocket API: the entities exposed to voice assistants, and service calls.

One connection, opened when first needed and kept; a command that fails on it closes it, and the
next command opens a new one, so Home Assistant restarting costs one failed request at most.  Only
the configured address is ever reached.  The token is sent once per connection and never logged.

Exposure is Home Assistant's own setting (Settings → Voice assistants → Expose): an entity not
exposed to Assist is never listed here, so hearth can neither read nor change it.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import urlsplit, urlunsplit

log = logging.getLogger(__name__)


class HomeAssistantUnavailable(Exception):
    """Home Assistant could not be reached, refused the token, or did not answer in time."""


class HomeAssistantRefused(Exception):
    """Home Assistant answered, but refused the command (an unknown service, a bad value)."""


@dataclass(frozen=True)
class HomeEntity:
    """One entity exposed to voice assistants, as Home Assistant names and places it."""

    entity_id: str
    """"light.kitchen_lights"."""
    name: str
    """The name the household gave it, else its own."""
    aliases: tuple[str, ...] = ()
    """Other names set in Home Assistant ("주방 불")."""
    area: str | None = None
    """The area's name, the entity's own or its device's."""
    area_aliases: tuple[str, ...] = ()
    state: str = "unknown"
    """Its state when the list was read ("on", "off", "21.5", "unavailable")."""
    attributes: Mapping[str, Any] = field(default_factory=dict)

    @property
    def domain(self) -> str:
        return self.entity_id.split(".", 1)[0]

    @property
    def device_class(self) -> str | None:
        value = self.attributes.get("device_class")
        return str(value) if value else None


class HomeApi(Protocol):
    """What hearth needs of a Home Assistant (the WebSocket client here, or a fake in tests)."""

    async def entities(self) -> list[HomeEntity]:
        """The exposed entities with their current states."""
        ...

    async def call_service(
        self, domain: str, service: str, entity_ids: Sequence[str], data: Mapping[str, Any] | None = None,
        response: bool = False,
    ) -> Any:
        """Calls a service on entities; with ``response``, the service's response data."""
        ...

    async def close(self) -> None: ...


def websocket_url(url: str) -> str:
    """The WebSocket address of a Home Assistant at ``url`` ("http://192.168.1.10:8123")."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https", "ws", "wss") or not parts.hostname:
        raise ValueError(f"not an http(s) address: {url!r}")
    scheme = {"http": "ws", "https": "wss"}.get(parts.scheme, parts.scheme)
    path = parts.path.rstrip("/")
    if not path.endswith("/api/websocket"):
        path += "/api/websocket"
    return urlunsplit((scheme, parts.netloc, path, "", ""))


class HomeAssistantClient:
    """The WebSocket client.  Commands run one at a time on the one connection (hearth sends a
    few per request), so an answer is always the one to the command just sent."""

    def __init__(self, url: str, token: str, timeout_s: float = 5.0) -> None:
        self.url = websocket_url(url)
        self._token = token
        self.timeout_s = timeout_s
        self._socket: Any = None
        self._lock = asyncio.Lock()
        self._next_id = 1

    def __repr__(self) -> str:
        return f"HomeAssistantClient({self.url!r})"  # never the token

    async def _connect(self) -> Any:
        from websockets.asyncio.client import connect

        try:
            socket = await asyncio.wait_for(
                connect(self.url, open_timeout=self.timeout_s, max_size=16 << 20, proxy=None), self.timeout_s)
        except Exception as exc:  # OSError, a timeout, and websockets' own kinds
            raise HomeAssistantUnavailable(f"cannot connect to {self.url}: {type(exc).__name__}: {exc}") from None
        try:
            hello = json.loads(await asyncio.wait_for(socket.recv(), self.timeout_s))
            if hello.get("type") == "auth_required":
                await socket.send(json.dumps({"type": "auth", "access_token": self._token}))
                hello = json.loads(await asyncio.wait_for(socket.recv(), self.timeout_s))
            if hello.get("type") != "auth_ok":
                raise HomeAssistantUnavailable(f"Home Assistant at {self.url} refused the access token ({hello.get('type')})")
        except HomeAssistantUnavailable:
            await socket.close()
            raise
        except Exception as exc:
            await socket.close()
            raise HomeAssistantUnavailable(f"no greeting from {self.url}: {type(exc).__name__}") from None
        log.info("connected to Home Assistant %s (%s)", self.url, hello.get("ha_version", "?"))
        self._next_id = 1
        return socket

    async def command(self, message: Mapping[str, Any]) -> Any:
        """Sends one command and returns its result; the connection is opened first if needed."""
        async with self._lock:
            for attempt in range(2):
                fresh = self._socket is None
                if fresh:
                    self._socket = await self._connect()
                ident = self._next_id
                self._next_id += 1
                try:
                    await self._socket.send(json.dumps({**message, "id": ident}))
                    break
                except Exception as exc:
                    # A connection Home Assistant closed (a restart) fails at the send, before
                    # anything was asked: asked again once, on a new connection.
                    await self._drop()
                    if fresh or attempt:
                        raise HomeAssistantUnavailable(f"Home Assistant stopped answering ({type(exc).__name__})") from None
            try:
                while True:
                    answer = json.loads(await asyncio.wait_for(self._socket.recv(), self.timeout_s))
                    if answer.get("id") == ident and answer.get("type") == "result":
                        break
            except Exception as exc:
                await self._drop()
                raise HomeAssistantUnavailable(f"Home Assistant stopped answering ({type(exc).__name__})") from None
        if not answer.get("success"):
            error = answer.get("error") or {}
            raise HomeAssistantRefused(f"{error.get('code', 'error')}: {error.get('message', '')}"[:300])
        return answer.get("result")

    async def _drop(self) -> None:
        socket, self._socket = self._socket, None
        if socket is not None:
            try:
                await socket.close()
            except Exception:  # already gone
                pass

    async def close(self) -> None:
        async with self._lock:
            await self._drop()

    async def entities(self) -> list[HomeEntity]:
        exposure = await self.command({"type": "homeassistant/expose_entity/list"})
        exposed = sorted(e for e, where in (exposure or {}).get("exposed_entities", {}).items() if where.get("conversation"))
        if not exposed:
            return []
        entries = await self.command({"type": "config/entity_registry/get_entries", "entity_ids": exposed}) or {}
        devices = await self.command({"type": "config/device_registry/list"}) or []
        areas = await self.command({"type": "config/area_registry/list"}) or []
        states = await self.command({"type": "get_states"}) or []
        return entities_from(exposed, entries, devices, areas, states)

    async def call_service(
        self, domain: str, service: str, entity_ids: Sequence[str], data: Mapping[str, Any] | None = None,
        response: bool = False,
    ) -> Any:
        message: dict[str, Any] = {
            "type": "call_service", "domain": domain, "service": service,
            "target": {"entity_id": list(entity_ids)}, "service_data": dict(data or {}),
        }
        if response:
            message["return_response"] = True
        result = await self.command(message)
        return (result or {}).get("response") if response else result


def entities_from(
    exposed: Sequence[str], entries: Mapping[str, Any], devices: Sequence[Mapping[str, Any]],
    areas: Sequence[Mapping[str, Any]], states: Sequence[Mapping[str, Any]],
) -> list[HomeEntity]:
    """The exposed entities from the registries' and the state machine's answers."""
    device_area = {d.get("id"): d.get("area_id") for d in devices}
    area_by_id = {a.get("area_id"): a for a in areas}
    state_by_id = {s.get("entity_id"): s for s in states}
    found = []
    for entity_id in exposed:
        state = state_by_id.get(entity_id)
        if state is None:
            continue  # exposed but gone (an integration not loaded)
        entry = entries.get(entity_id) or {}
        attributes = dict(state.get("attributes") or {})
        name = entry.get("name") or attributes.get("friendly_name") or entry.get("original_name") \
            or entity_id.split(".", 1)[1].replace("_", " ")
        area = area_by_id.get(entry.get("area_id") or device_area.get(entry.get("device_id")))
        found.append(HomeEntity(
            entity_id=entity_id,
            name=str(name),
            aliases=tuple(str(a) for a in entry.get("aliases") or () if a),
            area=str(area["name"]) if area else None,
            area_aliases=tuple(str(a) for a in (area or {}).get("aliases") or () if a),
            state=str(state.get("state", "unknown")),
            attributes=attributes,
        ))
    return found
