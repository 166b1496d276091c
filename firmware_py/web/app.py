"""The companion page's ASGI application: the page, its static files, the live feed and the changes.

Routes:

* ``GET /`` the page (``/?token=`` sets the access cookie and redirects here);
* ``GET /static/<name>`` the page's CSS and JS, only from this package's ``static`` folder;
* ``GET /api/state`` the live turn and what is kept, as JSON;
* ``GET /api/events`` server-sent events: ``live`` and ``kept`` messages, each with an ``id`` and the
  server's time ``t``; the current state first, then each change;
* ``GET /api/turns`` the turns whose timeline can be drawn; ``GET /api/turns/<n>/timeline.svg`` one;
* ``POST /api/timers/cancel`` ``{"id": n}``, ``POST /api/list/complete`` ``{"item": ...}``,
  ``POST /api/list/add`` ``{"item": ..., "quantity": ...}``: made by the tools through the executor.
"""

from __future__ import annotations

import asyncio
import html
import json
import logging
import re
import secrets
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Route

from agent.live_view import LiveView
from agent.record import ConversationRecord
from firmware_py.home_tools import HomeTools
from firmware_py.safe_text import clean
from firmware_py.web import kept
from firmware_py.web.feed import Feed
from firmware_py.web.labels import labels
from firmware_py.web.security import SVG_POLICY, TOKEN_COOKIE, TOKEN_COOKIE_MAX_AGE_S, Guard, check_change, refuse_unsafe_bind, same_token
from firmware_py.web.writes import WriteError, call_from_page, timer_label

log = logging.getLogger(__name__)

STATIC_DIR = Path(__file__).resolve().parent / "static"
MAX_PAGES = 32
"""Open event streams at once; one more is told to try again rather than served."""
TIMER_END_SLACK_S = 1.0
"""How long after a timer's end the stores are read again, for the watcher to have marked it done."""
KEEPALIVE_S = 15.0
"""A comment line this often keeps proxies and the browser from closing a quiet event stream."""
_STATIC_NAME = re.compile(r"^[A-Za-z0-9_-]+\.(css|js|svg|png|ico)$")
_TYPES = {"css": "text/css; charset=utf-8", "js": "text/javascript; charset=utf-8", "svg": "image/svg+xml",
          "png": "image/png", "ico": "image/x-icon"}


@dataclass(frozen=True)
class WebSettings:
    """Where the companion page listens and who may open it."""

    host: str = "127.0.0.1"
    """The address to bind; anything but loopback needs ``token``."""
    port: int = 8750
    """The TCP port; 0 picks a free one (tests)."""
    token: str | None = None
    """A secret every request must carry (header, or the cookie ``/?token=`` sets); None: loopback only."""
    language: str = "en"
    """The page's language ("en" or "ko"), normally hearth's configured language."""


@dataclass
class PageSources:
    """The running appliance's own pieces the page reads and writes through; the page keeps no copy."""

    live: LiveView
    """Folds the assistant's events into the turn under way."""
    home: HomeTools
    """The stores (timers, list and notes) and the executor every change goes through."""
    record: ConversationRecord | None = None
    """The conversation record; page changes are written to it as their own turns."""
    assistant: kept.HasResults | None = None
    """The assistant, for its latest turns' results (each turn's timeline)."""
    clock: Callable[[], float] = field(default=time.time)
    """Wall-clock time, stamped on each pushed message as ``t``."""


class Page:
    """The state behind the routes: the feed, and when kept data was last pushed."""

    def __init__(self, sources: PageSources, settings: WebSettings) -> None:
        self.sources = sources
        self.settings = settings
        self.csrf = secrets.token_urlsafe(32)
        self.feed = Feed(sources.clock)
        self.timelines = kept.TimelineIndex()
        self._last_kept = ""
        self._kept_due = False
        self._last_live: tuple[str, int, int] = ("", -1, 0)
        self._unsubscribe: list[Callable[[], None]] = []
        self.loop: asyncio.AbstractEventLoop | None = None
        """The event loop the pages are served on, found on the first call made from it."""
        self._next_end: asyncio.TimerHandle | None = None

    # -- watching the sources -----------------------------------------------------------
    def attach(self) -> None:
        """Subscribe to the live view and the timer store (called once, by ``create_app``)."""
        try:
            self.loop = asyncio.get_running_loop()
        except RuntimeError:
            pass  # found on the first call from the serving loop
        self._unsubscribe.append(self.sources.live.subscribe(self._on_live))
        timers = self.sources.home.timers
        timers.subscribe(self.schedule_kept)
        self._unsubscribe.append(lambda: timers.unsubscribe(self.schedule_kept))

    def detach(self) -> None:
        for undo in self._unsubscribe:
            try:
                undo()
            except ValueError:
                pass
        self._unsubscribe.clear()
        if self._next_end is not None:
            self._next_end.cancel()
            self._next_end = None

    def _on_live(self, snapshot: dict[str, Any]) -> None:
        # Called inside the voice loop: format once, queue, return.
        self._on_loop(lambda: self._publish_live(snapshot))

    def _publish_live(self, snapshot: dict[str, Any]) -> None:
        self.feed.publish("live", {"live": snapshot})
        # A state change or a settled call: the stores or the record may have moved. The breaths
        # between units (speaking <-> pausing) are not worth a read of the stores each. A text turn
        # changes no state: each unit it sends is what moves the record.
        told = len(snapshot["units"]) if snapshot["typed"] else 0
        mark = (snapshot["state"].replace("pausing", "speaking"), len(snapshot["calls"]), told)
        if mark != self._last_live:
            self._last_live = mark
            self.schedule_kept()

    def schedule_kept(self) -> None:
        """Push the kept data soon, once however many changes come before it is read."""
        self._on_loop(self._schedule_kept)

    def _schedule_kept(self) -> None:
        if self._kept_due:
            return
        self._kept_due = True
        try:
            asyncio.get_running_loop().call_soon(self.push_kept)
        except RuntimeError:  # no loop running (a store changed from plain code): read it now
            self.push_kept()

    def _on_loop(self, work: Callable[[], None]) -> None:
        """Run ``work`` now when called on the page's event loop (the usual case), else hand it to
        that loop: the pages' queues are the loop's and are not safe to touch from another thread."""
        try:
            running: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if self.loop is None:
            self.loop = running
        if self.loop is None or running is self.loop or self.loop.is_closed():
            work()
        else:
            self.loop.call_soon_threadsafe(work)

    def push_kept(self) -> None:
        self._kept_due = False
        try:
            body = self.kept()
        except Exception:  # noqa: BLE001 - a store that cannot be read must not break the loop's call
            log.exception("could not read what is kept for the page")
            return
        text = json.dumps(body, ensure_ascii=False, sort_keys=True, default=str)
        if text != self._last_kept:
            self._last_kept = text
            self.feed.publish("kept", {"kept": body})
        self._look_again_at_next_end(body["timers"])

    def _look_again_at_next_end(self, timers: list[dict[str, Any]]) -> None:
        """Read the stores again just after the next timer ends: the store does not tell when a timer
        it marks done has rung, and the page must not show it at 0:00 for good."""
        if self._next_end is not None:
            self._next_end.cancel()
            self._next_end = None
        ends = [t["ends_at"] for t in timers if t["ends_at"] is not None]
        loop = self.loop
        if ends and loop is not None and not loop.is_closed():
            wait = max(0.0, min(ends) - self.sources.clock()) + TIMER_END_SLACK_S
            self._next_end = loop.call_later(wait, self.schedule_kept)

    # -- reading ------------------------------------------------------------------------
    def kept(self) -> dict[str, Any]:
        home, now = self.sources.home, self.sources.clock()
        assistant = self.sources.assistant
        return {
            "timers": kept.timers_view(home.timers, now, self.settings.language),
            "list": kept.list_view(home.lists),
            "notes": kept.notes_view(home.lists),
            "home": kept.home_view(getattr(home, "home_assistant", None)),
            "record": kept.record_view(self.sources.record) if self.sources.record is not None else [],
            "turns": self.timelines.update(assistant.results if assistant is not None else []),
        }

    def state(self) -> dict[str, Any]:
        return {"t": self.sources.clock(), "live": self.sources.live.snapshot(), "kept": self.kept()}

    # -- routes -------------------------------------------------------------------------
    async def index(self, request: Request) -> Response:
        token = self.settings.token
        if token and "token" in request.query_params:
            if not same_token(request.query_params["token"], token):
                return PlainTextResponse("wrong token\n", 401)
            response = RedirectResponse("/", 303)
            response.set_cookie(TOKEN_COOKIE, token, max_age=TOKEN_COOKIE_MAX_AGE_S, httponly=True, samesite="strict", path="/")
            return response
        words = labels(self.settings.language)
        page = (STATIC_DIR / "index.html").read_text(encoding="utf-8")
        page = page.replace("{{lang}}", html.escape(self.settings.language)).replace("{{csrf}}", html.escape(self.csrf))
        page = page.replace("{{labels}}", _script_json(words))
        page = re.sub(r"\{\{t:([a-z_]+)\}\}", lambda m: html.escape(words.get(m.group(1), m.group(1))), page)
        return Response(page, media_type="text/html; charset=utf-8")

    async def static(self, request: Request) -> Response:
        name = request.path_params["name"]
        if not _STATIC_NAME.match(name):
            return PlainTextResponse("no such file\n", 404)
        path = (STATIC_DIR / name).resolve()
        if path.parent != STATIC_DIR or not path.is_file():
            return PlainTextResponse("no such file\n", 404)
        return FileResponse(path, media_type=_TYPES[name.rsplit(".", 1)[1]])

    async def api_state(self, request: Request) -> Response:
        return JSONResponse(self.state())

    async def events(self, request: Request) -> Response:
        feed = self.feed
        if feed.clients >= MAX_PAGES:
            return PlainTextResponse(f"{MAX_PAGES} pages are open already; close one and reload\n", 503,
                                     headers={"Retry-After": "5"})
        self.loop = asyncio.get_running_loop()
        # The current state and the join happen with no await between: no change falls in a gap.
        first = [feed.message("live", {"live": self.sources.live.snapshot()}), feed.message("kept", {"kept": self.kept()})]
        client = feed.join()
        for text in first:
            client.put(text)

        async def stream() -> AsyncIterator[str]:
            try:
                yield "retry: 1000\n\n"
                while True:
                    text = await client.next(KEEPALIVE_S)
                    if text is None and client.closed:
                        return
                    yield text if text is not None else ": keep-alive\n\n"
            finally:
                feed.leave(client)

        return StreamingResponse(stream(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})

    async def turns(self, request: Request) -> Response:
        assistant = self.sources.assistant
        return JSONResponse(self.timelines.update(assistant.results if assistant is not None else []))

    async def timeline_svg(self, request: Request) -> Response:
        assistant = self.sources.assistant
        self.timelines.update(assistant.results if assistant is not None else [])
        result = self.timelines.get(request.path_params["n"])
        if result is None:
            return PlainTextResponse("no such turn (only the latest turns are kept)\n", 404)
        # Imported here rather than with the package, so that python -m firmware_py.web.timeline_view
        # runs the module fresh instead of one the package has already imported.
        from firmware_py.web.timeline_view import render_svg

        svg = render_svg(kept.timeline_dict(result), kept.timeline_title(result))
        return Response(svg, media_type="image/svg+xml", headers={"Content-Security-Policy": SVG_POLICY})

    async def cancel_timer(self, request: Request) -> Response:
        body = await _json_body(request, self.csrf)
        if isinstance(body, Response):
            return body
        timer_id = body.get("id")
        if not isinstance(timer_id, int) or isinstance(timer_id, bool):
            return _said(False, "send the timer as {\"id\": <number>}", 422)
        try:
            label = timer_label(self.sources.home.timers, timer_id)
        except WriteError as exc:
            return _said(False, str(exc), exc.status)
        return await self._write("timer_cancel", {"label": label} if label is not None else {})

    async def complete_item(self, request: Request) -> Response:
        body = await _json_body(request, self.csrf)
        if isinstance(body, Response):
            return body
        return await self._write("shopping_complete", {"item": body.get("item")})

    async def add_item(self, request: Request) -> Response:
        body = await _json_body(request, self.csrf)
        if isinstance(body, Response):
            return body
        args = {"item": body.get("item")}
        if body.get("quantity") not in (None, ""):
            args["quantity"] = body["quantity"]
        return await self._write("shopping_add", args)

    async def _write(self, tool: str, args: dict[str, Any]) -> Response:
        outcome, _ = await call_from_page(self.sources.home.executor, self.sources.record, tool, args)
        self.push_kept()  # the page that made the change sees it in the same breath as the answer
        return _said(outcome.ok, outcome.text, outcome.status)


async def _json_body(request: Request, csrf: str) -> dict[str, Any] | Response:
    refusal = check_change(request, csrf)
    if refusal is not None:
        return refusal
    try:
        body = await request.json()
    except (ValueError, UnicodeDecodeError):
        return PlainTextResponse("the body is not JSON\n", 400)
    except RecursionError:
        # Thousands of "[" fit in the size limit and take the decoder past Python's recursion
        # limit; no change the page makes is nested at all, so this is a request to refuse, not a fault.
        log.warning("page: refused a change to %s nested too deeply to read", request.url.path)
        return PlainTextResponse("the body is nested too deeply; a change is one flat JSON object\n", 400)
    if not isinstance(body, dict):
        return PlainTextResponse("the body must be a JSON object\n", 400)
    # Words from the page are kept (the list, the record) and shown again, on the page and in a
    # terminal: control and bidirectional characters are taken out here, before any tool sees them.
    return {key: clean(value) if isinstance(value, str) else value for key, value in body.items()}


def _script_json(value: object) -> str:
    """JSON to sit inside a <script> element: no "<", ">" or "&" that could end or bend it."""
    text = json.dumps(value, ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _said(ok: bool, text: str, status: int) -> JSONResponse:
    return JSONResponse({"ok": ok, "text": text}, status)


def create_app(sources: PageSources, settings: WebSettings = WebSettings()) -> Starlette:
    """The page's application for ``sources``; refuses a bind beyond loopback without a token.

    The page subscribes to the live view and the timer store at once; it unsubscribes when the
    application shuts down (``app.state.page.detach()`` does the same by hand).
    """
    refuse_unsafe_bind(settings.host, settings.token)
    page = Page(sources, settings)
    page.attach()

    @asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        page.feed.open()
        try:
            yield
        finally:
            page.feed.close()
            page.detach()

    changes = ["POST", "GET", "PUT", "DELETE", "PATCH"]  # every method reaches the check, which answers 405
    app = Starlette(
        routes=[
            Route("/", page.index),
            Route("/static/{name:path}", page.static),
            Route("/favicon.ico", lambda _request: Response(status_code=204)),
            Route("/api/state", page.api_state),
            Route("/api/events", page.events),
            Route("/api/turns", page.turns),
            Route("/api/turns/{n:int}/timeline.svg", page.timeline_svg),
            Route("/api/timers/cancel", page.cancel_timer, methods=changes),
            Route("/api/list/complete", page.complete_item, methods=changes),
            Route("/api/list/add", page.add_item, methods=changes),
        ],
        middleware=[Middleware(Guard, token=settings.token)],
        lifespan=lifespan,
    )
    app.state.page = page
    return app
