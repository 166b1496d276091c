"""hearth's Wyoming server: one listening socket, a :class:`Connection` per client."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from urllib.parse import urlparse

from wyoming.server import AsyncEventHandler, AsyncServer, AsyncTcpServer, AsyncUnixServer

from firmware_py.wyoming.connection import Busy, Connection
from firmware_py.wyoming.info import build_info
from firmware_py.wyoming.offer import WyomingOffer

logger = logging.getLogger(__name__)

STOP_GRACE_S = 5.0
"""How long ``stop()`` waits for connections to wind down before cancelling them."""


class WyomingServer:
    """Serves a :class:`WyomingOffer` on ``tcp://host:port`` (port 0: any free port) or ``unix://path``.

    The recognizers and synthesizers in the offer are shared by every connection; a voice is
    used by one request at a time (one unit at a time, so requests take turns unit by unit),
    since piper's engine runs one generation at a time and espeak-ng is one process per call.
    A recognizer works on a few utterances at once (each keeps its own state and decodes one
    at a time inside), so one client streaming live audio does not hold another one up, and a
    crowd of clients queues rather than taking every worker thread the kitchen's own turns need.
    At most ``limits.max_connections`` clients are served at once; one more is told it is busy.
    """

    def __init__(self, offer: WyomingOffer) -> None:
        self.offer = offer
        self._server: AsyncServer | None = None
        self._connections: set[asyncio.Task[None]] = set()
        self._admitted: set[Connection] = set()
        """Connections let in and not yet ended, counted from the moment they are accepted (their
        tasks start later, so a burst of clients would otherwise all be let in)."""

    @property
    def connections(self) -> int:
        """Connections being served now (with anything they started still running)."""
        return len(self._connections)

    async def start(self, uri: str) -> str:
        """Start listening; return the bound address as a URI (the real port when 0 was asked)."""
        if self._server is not None:
            raise RuntimeError("Wyoming server already started")
        parsed = urlparse(uri)
        if parsed.scheme not in ("tcp", "unix"):
            raise ValueError(f"Wyoming address {uri!r}: use tcp://HOST:PORT or unix://PATH")
        server = AsyncServer.from_uri(uri)
        info = build_info(self.offer).event()
        locks = {voice.name: asyncio.Lock() for voice in self.offer.voices}
        slots = {language: asyncio.Semaphore(self.offer.limits.utterances_per_recognizer) for language in self.offer.recognizers}

        limit = self.offer.limits.max_connections

        def connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> AsyncEventHandler:
            if len(self._admitted) >= limit:
                return Busy(reader, writer, limit)
            connection = Connection(reader, writer, self.offer, info, locks, slots, self._connections, self._admitted)
            self._admitted.add(connection)
            return connection

        await server.start(connect)
        self._server = server
        bound = uri
        if isinstance(server, AsyncTcpServer) and server._server is not None:
            host, port = server._server.sockets[0].getsockname()[:2]
            bound = f"tcp://[{host}]:{port}" if ":" in host else f"tcp://{host}:{port}"
        elif isinstance(server, AsyncUnixServer):
            bound = f"unix://{server.socket_path}"
        logger.info("Wyoming server on %s offering %s", bound, ", ".join(p for p in self.offer.programs if self.offer.offers(p)))
        return bound

    async def stop(self) -> None:
        """Stop listening, end every connection and what it started; safe to call twice."""
        server, self._server = self._server, None
        if server is None:
            return
        with contextlib.suppress(Exception):
            await server.stop()
        pending = set(self._connections)
        if pending:
            _, late = await asyncio.wait(pending, timeout=STOP_GRACE_S)
            for task in late:
                task.cancel()
            if late:
                await asyncio.wait(late)
        self._admitted.clear()  # any accepted but never started: their tasks were cancelled with the server
        logger.info("Wyoming server stopped")
