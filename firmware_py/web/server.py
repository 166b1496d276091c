"""Serving the page with uvicorn inside hearth's own event loop."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import Iterator

import uvicorn
from starlette.types import ASGIApp

from firmware_py.web.security import is_loopback

log = logging.getLogger(__name__)


class WebServer:
    """uvicorn on sockets of its own, with no signal handlers: hearth's loop owns the signals."""

    def __init__(self, app: ASGIApp, host: str = "127.0.0.1", port: int = 8750, token: str | None = None) -> None:
        self.app = app
        self.host = host
        self.port = port
        self.token = token
        self._server: uvicorn.Server | None = None
        self._task: asyncio.Task[None] | None = None
        self._sockets: list[socket.socket] = []

    async def start(self) -> tuple[str, int]:
        """Bind and start serving; the bound (host, port). Refuses a bind beyond loopback unless the
        application guards itself with a token (``create_app`` with ``WebSettings.token``)."""
        if self._server is not None:
            raise RuntimeError("WebServer already started")
        if not is_loopback(self.host) and not (self.token or _has_token(self.app)):
            raise ValueError(
                f"the companion page would listen on {self.host}, beyond this machine, without a token: "
                "set a token in the [web] settings or bind to 127.0.0.1"
            )
        family = socket.AF_INET6 if ":" in self.host.strip("[]") else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((self.host.strip("[]"), self.port))
            sock.listen(128)
            sock.setblocking(False)
        except OSError:
            sock.close()
            raise
        self._sockets = [sock]
        # log_config=None: uvicorn would otherwise replace hearth's logging set-up with its own.
        config = uvicorn.Config(self.app, log_config=None, log_level="warning", access_log=False, lifespan="on",
                                timeout_graceful_shutdown=1, ws="none")
        server = _QuietServer(config)
        self._server = server
        self._task = asyncio.create_task(self._serve(server), name="hearth-web")
        while not server.started:
            if self._task.done():
                self._server = None
                sock.close()
                self._task.result()  # raises what stopped it
                raise RuntimeError("the companion page's server stopped before it started")
            await asyncio.sleep(0.01)
        host, port = sock.getsockname()[:2]
        log.info("companion page on http://%s:%d/", host if ":" not in host else f"[{host}]", port)
        return host, port

    async def _serve(self, server: uvicorn.Server) -> None:
        await server.serve(sockets=self._sockets)

    async def stop(self) -> None:
        """Stop serving: open event streams are closed, the port is released."""
        server, task = self._server, self._task
        self._server = self._task = None
        if server is None or task is None:
            return
        page = getattr(getattr(self.app, "state", None), "page", None)
        if page is not None:
            page.feed.close()  # an open event stream never ends on its own
        server.should_exit = True
        try:
            await asyncio.wait_for(task, 5)
        except (asyncio.TimeoutError, asyncio.CancelledError):
            task.cancel()
        for sock in self._sockets:
            sock.close()
        self._sockets = []


class _QuietServer(uvicorn.Server):
    """A uvicorn server that leaves SIGINT and SIGTERM to hearth: stopping is ``WebServer.stop``."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield

    def install_signal_handlers(self) -> None:  # the name older uvicorn releases call
        pass


def _has_token(app: ASGIApp) -> bool:
    page = getattr(getattr(app, "state", None), "page", None)
    return bool(page is not None and page.settings.token)
