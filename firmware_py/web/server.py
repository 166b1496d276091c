"""Serving the page with uvicorn inside hearth's own event loop."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import Iterable, Iterator

import uvicorn
from starlette.types import ASGIApp
from uvicorn.lifespan.on import LifespanOn

from firmware_py.web.security import is_loopback

log = logging.getLogger(__name__)

GRACE_S = 1.0
"""How long uvicorn lets open requests finish once stopping, before it cancels them."""

STOP_TIMEOUT_S = 5.0
"""How long ``WebServer.stop`` waits for the graceful shutdown (requests, then the application's
own shutdown) before it cancels what is left: a stuck client cannot hold up hearth's shutdown."""


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
                                timeout_graceful_shutdown=GRACE_S, ws="none")
        config.load()
        config.lifespan_class = _KeptLifespan  # so stop() can wait for the application's shutdown to finish
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
        """Stop serving: open event streams end, the application shuts down (the page lets go of
        the live view and the stores), the port is released. A graceful stop that takes longer
        than ``STOP_TIMEOUT_S`` is cut short: what is left is cancelled and awaited."""
        server, task = self._server, self._task
        self._server = self._task = None
        if server is None or task is None:
            return
        page = getattr(getattr(self.app, "state", None), "page", None)
        if page is not None:
            page.feed.close()  # an open event stream never ends on its own, and uvicorn waits for it
        server.should_exit = True
        lifespan = getattr(server, "lifespan", None)
        helper = lifespan.task if isinstance(lifespan, _KeptLifespan) else None
        left = [t for t in (task, helper) if t is not None]
        try:
            done, pending = await asyncio.wait(left, timeout=STOP_TIMEOUT_S)
        except asyncio.CancelledError:
            await _cancel(left)  # hearth is being stopped harder: the server goes at once
            raise
        finally:
            for sock in self._sockets:
                sock.close()
            self._sockets = []
        if pending:
            log.warning("the companion page did not stop within %g s; its server is cancelled", STOP_TIMEOUT_S)
            server.force_exit = True
            await _cancel(pending)
        for t in done:
            if not t.cancelled() and t.exception() is not None:
                log.error("the companion page's server failed while stopping", exc_info=t.exception())


async def _cancel(tasks: Iterable[asyncio.Task[None]]) -> None:
    """Cancel ``tasks`` and wait until they have ended, so none is left pending."""
    tasks = [t for t in tasks if not t.done()]
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)

class _KeptLifespan(LifespanOn):
    """uvicorn's lifespan handling, keeping its task so a stop can wait for it to end."""

    task: asyncio.Task[None] | None = None

    async def main(self) -> None:
        self.task = asyncio.current_task()
        await super().main()


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
