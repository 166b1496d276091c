"""The companion page served by uvicorn on loopback: the event stream, start and stop, raw requests."""

from __future__ import annotations

import asyncio
import json
import signal
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.routing import Route

from agent.events import State, StateChanged, ToolCalled, TranscriptFinal, TranscriptPartial, TurnInterrupted, UnitSpoken
from firmware_py.web import WebServer, WebSettings, create_app
from firmware_py.web import app as web_app
from firmware_py.web.feed import CLIENT_QUEUE, Feed
from tests.test_web_page import Rig, open_rig


class Stream:
    """Server-sent events read off a real connection, one parsed message at a time."""

    def __init__(self, response: httpx.Response) -> None:
        self._lines = response.aiter_lines()

    async def next(self) -> tuple[str, int, dict[str, Any]]:
        kind, event_id, data = "", 0, ""
        while True:
            line = await asyncio.wait_for(anext(self._lines), 5)
            if line.startswith("event: "):
                kind = line[7:]
            elif line.startswith("id: "):
                event_id = int(line[4:])
            elif line.startswith("data: "):
                data = line[6:]
            elif line == "" and data:
                return kind, event_id, json.loads(data)

    async def rest(self) -> list[str]:
        """The lines left until the server ends the stream."""
        return [line async for line in self._lines]

    async def next_of(self, kind: str) -> tuple[int, dict[str, Any]]:
        while True:
            got, event_id, body = await self.next()
            if got == kind:
                return event_id, body


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[tuple[Rig, str]]:
    rig, app = await open_rig(tmp_path)
    server = WebServer(app, "127.0.0.1", 0)
    host, port = await server.start()
    try:
        yield rig, f"http://{host}:{port}"
    finally:
        await server.stop()
        await rig.close()


async def test_the_stream_gives_the_state_then_each_change_in_order(served: tuple[Rig, str]) -> None:
    rig, base = served
    rig.home.lists.add("eggs")
    async with httpx.AsyncClient(base_url=base) as client, client.stream("GET", "/api/events") as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        stream = Stream(response)
        first_id, live = await stream.next_of("live")
        _, kept = await stream.next_of("kept")
        assert live["live"]["state"] == "idle" and [i["item"] for i in kept["kept"]["list"]] == ["eggs"]

        for event in (StateChanged(State.LISTENING), TranscriptPartial("set a"), TranscriptPartial("set a timer"),
                      TranscriptFinal("set a timer for pasta"), StateChanged(State.SPEAKING),
                      UnitSpoken("Pasta timer set."), TurnInterrupted(("Anything else?",))):
            rig.live.apply(event)
        seen = [await stream.next_of("live") for _ in range(7)]
        ids = [first_id] + [event_id for event_id, _ in seen]
        assert ids == sorted(ids) and len(set(ids)) == len(ids)
        assert [body["live"]["heard"] for _, body in seen[1:4]] == ["set a", "set a timer", "set a timer for pasta"]
        assert seen[-1][1]["live"]["units"] == [
            {"text": "Pasta timer set.", "kind": "answer", "status": "heard"},
            {"text": "Anything else?", "kind": "answer", "status": "cut"}]
        assert all(isinstance(body["t"], float) and body["id"] == event_id for event_id, body in seen)


async def test_kept_data_is_pushed_when_a_store_changes_and_after_a_tool_call(served: tuple[Rig, str]) -> None:
    rig, base = served
    async with httpx.AsyncClient(base_url=base) as client, client.stream("GET", "/api/events") as response:
        stream = Stream(response)
        await stream.next_of("kept")
        timer = rig.home.timers.start(120, "rice")  # the timer store says when it changes
        _, kept = await stream.next_of("kept")
        assert [(t["id"], t["label"]) for t in kept["kept"]["timers"]] == [(timer.id, "rice")]

        rig.home.lists.add("basil")  # the list has no listener: the settled tool call is the signal
        rig.live.apply(ToolCalled("shopping_add", {"item": "basil"}, "ok"))
        _, kept = await stream.next_of("kept")
        assert [i["item"] for i in kept["kept"]["list"]] == ["basil"]

        # A change made on the page reaches every open page, not only the one that made it.
        page = await client.get("/")
        csrf = page.text.split('name="csrf-token" content="', 1)[1].split('"', 1)[0]
        answer = await client.post("/api/timers/cancel", json={"id": timer.id},
                                   headers={"X-CSRF-Token": csrf, "Origin": base, "Sec-Fetch-Site": "same-origin"})
        assert answer.json() == {"ok": True, "text": "Rice timer cancelled."}
        # The store's own signal may come first, mid-call; the push after the call has it on record.
        _, kept = await stream.next_of("kept")
        assert kept["kept"]["timers"] == []
        while len(kept["kept"]["record"]) == 0 or len(kept["kept"]["record"][-1]["entries"]) < 3:
            _, kept = await stream.next_of("kept")
        assert [(e["role"], e["status"], e["origin"]) for e in kept["kept"]["record"][-1]["entries"]] == [
            ("tool", "started", "page"), ("tool", "ok", "page"), ("turn", "page", None)]


async def test_a_page_that_goes_away_leaves_the_feed_and_one_too_many_is_told_to_wait(
        served: tuple[Rig, str], monkeypatch: pytest.MonkeyPatch) -> None:
    rig, base = served
    feed = rig.app.state.page.feed
    monkeypatch.setattr(web_app, "MAX_PAGES", 1)
    async with httpx.AsyncClient(base_url=base) as client:
        async with client.stream("GET", "/api/events") as response:
            await Stream(response).next_of("kept")
            assert feed.clients == 1
            busy = await client.get("/api/events")
            assert busy.status_code == 503 and busy.headers["retry-after"] == "5"
        for _ in range(100):  # the server notices the closed connection on its next read or write
            if feed.clients == 0:
                break
            await asyncio.sleep(0.02)
        assert feed.clients == 0


async def test_a_timer_that_ends_leaves_the_page_though_the_store_does_not_say_so(
        served: tuple[Rig, str], monkeypatch: pytest.MonkeyPatch) -> None:
    rig, base = served
    monkeypatch.setattr(web_app, "TIMER_END_SLACK_S", 0.05)
    async with httpx.AsyncClient(base_url=base) as client, client.stream("GET", "/api/events") as response:
        stream = Stream(response)
        await stream.next_of("kept")
        timer = rig.home.timers.start(1, "egg")
        _, kept = await stream.next_of("kept")
        assert [t["label"] for t in kept["kept"]["timers"]] == ["egg"]
        while rig.home.timers.next_end() is not None and rig.home.timers.next_end() > time.time():
            await asyncio.sleep(0.05)
        assert rig.home.timers.mark_done(timer.id)  # what the watcher does when it rings: no listener is told
        _, kept = await stream.next_of("kept")
        assert kept["kept"]["timers"] == []


async def test_an_event_told_from_another_thread_reaches_the_page_through_the_loop(served: tuple[Rig, str]) -> None:
    rig, base = served
    async with httpx.AsyncClient(base_url=base) as client, client.stream("GET", "/api/events") as response:
        stream = Stream(response)
        await stream.next_of("kept")
        await asyncio.to_thread(rig.live.apply, TranscriptPartial("from a thread"))
        _, body = await stream.next_of("live")
        assert body["live"]["heard"] == "from a thread"


def test_a_page_that_reads_slowly_or_not_at_all_never_holds_up_the_loop() -> None:
    feed = Feed()
    stuck = feed.join()  # never read
    for n in range(10 * CLIENT_QUEUE):
        feed.publish("live", {"n": n})  # returns at once: nothing here waits on a page
    assert stuck.dropped == 9 * CLIENT_QUEUE
    waiting = list(stuck._messages)
    assert len(waiting) == CLIENT_QUEUE
    assert json.loads(waiting[-1].split("data: ", 1)[1])["n"] == 10 * CLIENT_QUEUE - 1  # the newest is kept


async def test_start_refuses_a_bind_beyond_loopback_without_a_token(tmp_path: Path) -> None:
    rig, app = await open_rig(tmp_path)
    try:
        for host in ("0.0.0.0", "::", "192.168.1.20"):
            with pytest.raises(ValueError, match="without a token"):
                await WebServer(app, host, 0).start()
    finally:
        await rig.close()


async def test_start_and_stop_leave_the_signals_to_hearth_and_free_the_port(tmp_path: Path) -> None:
    rig, app = await open_rig(tmp_path)
    before = (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM))
    server = WebServer(app, "127.0.0.1", 0)
    try:
        host, port = await server.start()
        assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before
        async with httpx.AsyncClient(base_url=f"http://{host}:{port}") as client, client.stream("GET", "/api/events"):
            await server.stop()  # with a stream open: it ends rather than holds the stop
        with pytest.raises(httpx.ConnectError):
            async with httpx.AsyncClient() as client:
                await client.get(f"http://{host}:{port}/api/state")
        assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before
    finally:
        await server.stop()
        await rig.close()


async def _raw_get(base: str, target: str) -> tuple[int, str]:
    """GET ``target`` exactly as written (no client tidies the path), on a fresh connection."""
    host, port = base.removeprefix("http://").rsplit(":", 1)
    reader, writer = await asyncio.open_connection(host, int(port))
    try:
        writer.write(f"GET {target} HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n\r\n".encode())
        await writer.drain()
        answer = (await asyncio.wait_for(reader.read(), 5)).decode("utf-8", "replace")
    finally:
        writer.close()
    return int(answer.split(" ", 2)[1]), answer


@pytest.mark.parametrize("target", [
    "/static/../app.py", "/static/..%2fapp.py", "/static/%2e%2e/app.py", "/static/%2e%2e%2f%2e%2e%2fpyproject.toml",
    "/static/../../../../etc/passwd", "/static/....//app.py", "/static//etc/passwd", "/static/%2fetc%2fpasswd",
    "/static/page.js%00.css", "/static/index.html", "/../firmware_py/web/app.py",
])
async def test_nothing_outside_the_packages_static_files_is_served(served: tuple[Rig, str], target: str) -> None:
    _rig, base = served
    status, answer = await _raw_get(base, target)
    assert status in (400, 404), (target, status)
    assert "import" not in answer and "root:" not in answer and "[project]" not in answer
    status, answer = await _raw_get(base, "/static/page.js")
    assert status == 200 and "EventSource" in answer


def test_settings_default_to_loopback_on_8750() -> None:
    settings = WebSettings()
    assert (settings.host, settings.port, settings.token, settings.language) == ("127.0.0.1", 8750, None, "en")
    with pytest.raises(ValueError):
        create_app(None, WebSettings(host="::"))  # type: ignore[arg-type]


async def test_stop_with_a_page_still_listening_ends_its_stream_then_lets_go_of_the_sources(tmp_path: Path) -> None:
    rig, app = await open_rig(tmp_path)
    page = app.state.page
    before = asyncio.all_tasks()
    server = WebServer(app, "127.0.0.1", 0)
    try:
        host, port = await server.start()
        assert page.schedule_kept in rig.home.timers._listeners
        assert len(rig.live._subscribers) == 1
        async with httpx.AsyncClient(base_url=f"http://{host}:{port}") as client, \
                client.stream("GET", "/api/events") as response:
            stream = Stream(response)
            await stream.next_of("live")  # the page is listening when the server stops
            await server.stop()
            rest = await asyncio.wait_for(stream.rest(), 5)  # the server ended the stream
        assert ": keep-alive" not in rest
        assert rig.live._subscribers == []
        assert page.schedule_kept not in rig.home.timers._listeners
        assert page.feed.clients == 0
        left = asyncio.all_tasks() - before - {asyncio.current_task()}
        assert [t for t in left if not t.done()] == []
    finally:
        await server.stop()
        await rig.close()


async def test_a_request_that_never_ends_is_cut_short_and_the_page_still_lets_go(tmp_path: Path) -> None:
    rig, app = await open_rig(tmp_path)
    page = app.state.page
    stuck = asyncio.Event()

    async def never_ends(_request: Any) -> Any:
        stuck.set()
        await asyncio.Event().wait()  # a handler that ignores the stop until it is cancelled

    routes = app.router.routes
    routes[[getattr(r, "path", "") for r in routes].index("/api/state")] = Route("/api/state", never_ends)
    before = asyncio.all_tasks()
    server = WebServer(app, "127.0.0.1", 0)
    try:
        host, port = await server.start()
        async with httpx.AsyncClient(base_url=f"http://{host}:{port}") as client:
            request = asyncio.create_task(client.get("/api/state"))
            await asyncio.wait_for(stuck.wait(), 5)
            await server.stop()
            (answer,) = await asyncio.gather(request, return_exceptions=True)
        # The stuck request was cancelled: uvicorn answers 500 (or drops it), and the stop went on.
        assert isinstance(answer, httpx.HTTPError) or answer.status_code == 500
        assert rig.live._subscribers == []
        assert page.schedule_kept not in rig.home.timers._listeners
        left = asyncio.all_tasks() - before - {asyncio.current_task()}
        assert [t for t in left if not t.done()] == []
    finally:
        await server.stop()
        await rig.close()


async def test_an_application_whose_shutdown_hangs_is_cancelled_and_nothing_is_left_pending(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from firmware_py.web import server as web_server
    monkeypatch.setattr(web_server, "STOP_TIMEOUT_S", 0.5)
    shutting_down = asyncio.Event()

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        assert scope["type"] == "lifespan"
        await receive()
        await send({"type": "lifespan.startup.complete"})
        await receive()
        shutting_down.set()
        await asyncio.Event().wait()  # the shutdown never completes

    before = asyncio.all_tasks()
    server = WebServer(app, "127.0.0.1", 0)
    await server.start()
    await server.stop()
    assert shutting_down.is_set()
    left = asyncio.all_tasks() - before - {asyncio.current_task()}
    assert [t for t in left if not t.done()] == []
