"""The remote chat model against a scripted HTTP server."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import socket
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from agent.model.llm import ChatMessage, ChatModel, stopped_at_cap
from agent.model.remote import RemoteChatModel, RemoteModelError, RemoteSettings, _SseLines

SCHEMA = {
    "type": "object",
    "properties": {"say": {"type": "string"}, "tool": {"type": "string", "enum": ["timer_set", "none"]}},
    "required": ["say", "tool"],
}
ASK = [ChatMessage("system", "You are a kitchen assistant."), ChatMessage("user", "Boil an egg?")]


# -- a scripted server ---------------------------------------------------------------------
Action = Callable[["_Handler"], None]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
        action = self.server.script.pop(0) if self.server.script else answer(["ok"])
        action(self)

    def log_message(self, *args: Any) -> None:
        pass

    # -- what actions use
    def start_events(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def end_events(self) -> None:
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.requests: list[dict[str, Any]] = []
        self.script: list[Action] = []
        self.disconnected = threading.Event()
        self.release = threading.Event()
        self.url = f"http://127.0.0.1:{self.server_address[1]}"


@pytest.fixture
def server() -> Iterator[_Server]:
    httpd = _Server()
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield httpd
    httpd.release.set()
    httpd.shutdown()
    httpd.server_close()


def event(payload: Any) -> bytes:
    return b"data: " + json.dumps(payload).encode() + b"\n\n"


def delta(text: str) -> bytes:
    return event({"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]})


def sse_bytes(texts: list[str], *extra: dict[str, Any], done: bool = True) -> bytes:
    data = event({"choices": [{"index": 0, "delta": {"role": "assistant"}}]})
    data += b"".join(delta(text) for text in texts)
    data += b"".join(event(payload) for payload in extra)
    return data + (b"data: [DONE]\n\n" if done else b"")


def answer(texts: list[str], *extra: dict[str, Any], piece: int = 0, done: bool = True) -> Action:
    """Stream ``texts`` as deltas, in pieces of ``piece`` bytes (0: one event a chunk)."""

    def act(h: _Handler) -> None:
        h.start_events()
        data = sse_bytes(texts, *extra, done=done)
        if piece:
            for i in range(0, len(data), piece):
                h.chunk(data[i : i + piece])
                time.sleep(0.002)
        else:
            for line in data.split(b"\n\n")[:-1]:
                h.chunk(line + b"\n\n")
        h.end_events()

    return act


def raw(status: int, body: bytes, kind: str = "application/json") -> Action:
    def act(h: _Handler) -> None:
        h.send_response(status)
        h.send_header("Content-Type", kind)
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        h.wfile.write(body)

    return act


def endless(data: bytes) -> Action:
    """Send ``data`` every 10 ms until the client goes away (noted in ``server.disconnected``)."""

    def act(h: _Handler) -> None:
        h.start_events()
        try:
            for _ in range(1000):
                h.chunk(data)
                time.sleep(0.01)
            h.end_events()
        except (BrokenPipeError, ConnectionResetError):
            h.server.disconnected.set()
            h.close_connection = True

    return act


def stall(first: bytes) -> Action:
    def act(h: _Handler) -> None:
        h.start_events()
        h.chunk(first)
        h.server.release.wait(10)
        h.close_connection = True

    return act


def model(url: str, **settings: Any) -> RemoteChatModel:
    return RemoteChatModel(RemoteSettings(url, **settings))


async def collect(chat: RemoteChatModel, messages: list[ChatMessage] = ASK, **kwargs: Any) -> list[str]:
    return [piece async for piece in chat.stream(messages, **kwargs)]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# -- streaming -----------------------------------------------------------------------------
def test_sse_lines_byte_by_byte() -> None:
    data = b": ping\r\n\r\ndata: {\"a\": \"\xc2\xb0C\"}\r\n\r\nevent: x\ndata: one\ndata:two\n\ndata: [DONE]\n\n"
    lines = _SseLines()
    events = [payload for i in range(len(data)) for payload in lines.feed(data[i : i + 1])]
    assert events == ['{"a": "°C"}', "one\ntwo", "[DONE]"]
    last = _SseLines()
    assert list(last.feed(b"data: [DONE]")) == [] and list(last.end()) == ["[DONE]"]


async def test_pieces_arrive_across_chunk_boundaries(server: _Server) -> None:
    texts = ["Boil ", "it for ", "nine minutes at 100 °C", " — then cool it."]
    server.script.append(answer(texts, piece=7))
    chat = model(server.url)
    assert isinstance(chat, ChatModel)
    assert await collect(chat) == texts


async def test_events_after_done_are_not_read(server: _Server) -> None:
    def act(h: _Handler) -> None:
        h.start_events()
        h.chunk(delta("yes") + b"data: [DONE]\n\n" + b"data: {broken\n\n")
        h.end_events()

    server.script.append(act)
    assert await collect(model(server.url)) == ["yes"]


async def test_the_request_body(server: _Server) -> None:
    chat = model(server.url, id_slot=3, model="qwen", temperature=0.5, json_temperature=0.1, max_tokens=99)
    await collect(chat)
    await collect(chat, max_tokens=12, json_schema=SCHEMA)
    plain, constrained = (r["body"] for r in server.requests)
    assert server.requests[0]["path"] == "/v1/chat/completions"
    assert plain == {
        "messages": [
            {"role": "system", "content": "You are a kitchen assistant."},
            {"role": "user", "content": "Boil an egg?"},
        ],
        "stream": True,
        "stream_options": {"include_usage": True},
        "max_tokens": 99,
        "temperature": 0.5,
        "cache_prompt": True,
        "model": "qwen",
        "id_slot": 3,
    }
    assert constrained["max_tokens"] == 12 and constrained["temperature"] == 0.1
    assert constrained["response_format"] == {"type": "json_object", "schema": SCHEMA}
    assert "Authorization" not in server.requests[0]["headers"]


async def test_openai_schema_style_and_no_optional_fields(server: _Server) -> None:
    await collect(model(server.url, schema_style="openai"), json_schema=SCHEMA)
    body = server.requests[0]["body"]
    assert body["response_format"] == {"type": "json_schema", "json_schema": {"name": "reply", "schema": SCHEMA}}
    assert "id_slot" not in body and "model" not in body and body["max_tokens"] == 160


async def test_api_key_is_a_bearer_header_and_stays_out_of_repr(server: _Server) -> None:
    chat = model(server.url, api_key="s3cret")
    await collect(chat)
    assert server.requests[0]["headers"]["Authorization"] == "Bearer s3cret"
    assert "s3cret" not in repr(chat.settings)


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        ({"choices": [], "timings": {"prompt_n": 8, "cache_n": 42}}, (50, 8)),
        ({"choices": [], "usage": {"prompt_tokens": 30, "prompt_tokens_details": {"cached_tokens": 20}}}, (30, 10)),
        ({"choices": [], "usage": {"prompt_tokens": 30, "completion_tokens": 2}}, (0, 0)),
        ({"choices": []}, (0, 0)),
    ],
)
async def test_usage_gives_last_prompt(server: _Server, extra: dict[str, Any], expected: tuple[int, int]) -> None:
    chat = model(server.url)
    chat.last_prompt = (1, 1)
    server.script.append(answer(["a", "b"], extra))
    assert await collect(chat) == ["a", "b"]
    assert chat.last_prompt == expected


async def test_closing_the_stream_early_closes_the_connection(server: _Server) -> None:
    server.script.append(answer(["again"], {"choices": [], "timings": {"prompt_n": 1}}))
    chat = model(server.url)
    await collect(chat)  # a full reply first: a closed stream must not keep its counts
    assert chat.last_prompt == (1, 1)
    server.script.append(endless(delta("more ")))
    t0 = time.monotonic()
    async with contextlib.aclosing(chat.stream(ASK)) as pieces:
        async for piece in pieces:
            assert piece == "more "
            break
    assert time.monotonic() - t0 < 1.0
    assert await asyncio.to_thread(server.disconnected.wait, 3.0)
    assert chat.last_prompt == (0, 0)
    assert await collect(chat) == ["ok"]  # and the next request goes through


# -- failures ------------------------------------------------------------------------------
async def test_http_error_names_the_server(server: _Server) -> None:
    server.script.append(raw(500, b'{"error": "model\n exploded"}'))
    with pytest.raises(RemoteModelError) as caught:
        await collect(model(server.url + "/"))
    assert str(caught.value) == f'{server.url}: HTTP 500 Internal Server Error: {{"error": "model exploded"}}'


async def test_connection_refused() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(RemoteModelError, match=f"^{re.escape(url)}: connection refused$"):
        await collect(model(url))


async def test_read_timeout_between_pieces(server: _Server) -> None:
    server.script.append(stall(delta("first")))
    chat = model(server.url, read_timeout_s=0.3)
    got: list[str] = []
    t0 = time.monotonic()
    with pytest.raises(RemoteModelError, match=f"^{re.escape(server.url)}: no data for 0.3 s$"):
        async for piece in chat.stream(ASK):
            got.append(piece)
    assert got == ["first"] and time.monotonic() - t0 < 3.0


@pytest.mark.parametrize(
    ("action", "message"),
    [
        (answer([], {"broken": True}, done=True), None),  # no choices: fine, nothing said
        (raw(200, b"data: {oops\n\n", "text/event-stream"), "malformed stream: not JSON"),
        (answer(["half"], done=False), "malformed stream: it ended before \\[DONE\\]"),
        (answer([], {"error": {"message": "context is full"}}), "server error: context is full"),
        (answer([], {"choices": [{"delta": {"content": 7}}]}), "malformed stream: content is not text"),
        (answer([], {"choices": "x"}), "malformed stream: unexpected event"),
        (raw(200, b'{"choices": []}'), "the server did not stream"),
    ],
)
async def test_malformed_streams(server: _Server, action: Action, message: str | None) -> None:
    server.script.append(action)
    if message is None:
        assert await collect(model(server.url)) == []
        return
    with pytest.raises(RemoteModelError, match=f"^{re.escape(server.url)}: {message}"):
        await collect(model(server.url))


@pytest.mark.parametrize(
    "url",
    ["ftp://10.0.0.5:8080", "10.0.0.5:8080", "http://", "http://:8080", "http://host:99999", "http://host:0",
     "http://u:p@host:8080", "http://host:8080/v1", "http://host:8080/?x=1", "file:///tmp/sock", ""],
)
def test_bad_base_url(url: str) -> None:
    with pytest.raises(ValueError, match="base_url"):
        RemoteSettings(url)


def test_good_base_urls_and_other_checks() -> None:
    RemoteSettings("http://10.0.0.5:8080")
    RemoteSettings("https://kitchen-gpu.lan/llm/")
    for bad in ({"schema_style": "xml"}, {"connect_timeout_s": 0}, {"read_timeout_s": -1}, {"max_tokens": 0}, {"id_slot": -1}):
        with pytest.raises(ValueError):
            RemoteSettings("http://10.0.0.5:8080", **bad)


# -- warming -------------------------------------------------------------------------------
async def test_warm_sends_the_system_prompt_for_one_token(server: _Server) -> None:
    await model(server.url, id_slot=0).warm("You are a kitchen assistant.")
    body = server.requests[0]["body"]
    assert body["messages"] == [{"role": "system", "content": "You are a kitchen assistant."}]
    assert body["max_tokens"] == 1 and body["cache_prompt"] is True and body["id_slot"] == 0


async def test_warm_logs_failures_and_does_not_raise(server: _Server, caplog: pytest.LogCaptureFixture) -> None:
    server.script.append(raw(503, b"loading model"))
    nobody = f"http://127.0.0.1:{free_port()}"
    with caplog.at_level(logging.WARNING, logger="agent.model.remote"):
        await model(server.url).warm("system")
        await model(nobody).warm("system")
    assert [r.getMessage() for r in caplog.records] == [
        f"remote prompt cache not warmed: {server.url}: HTTP 503 Service Unavailable: loading model",
        f"remote prompt cache not warmed: {nobody}: connection refused",
    ]


def _prompts() -> list[list[ChatMessage]]:
    system = ChatMessage("system", "sys", keep=True)
    example = [ChatMessage("user", "timer ten"), ChatMessage("assistant", '{"tool": "timer_set"}', keep=True)]
    return [
        [system, *example, ChatMessage("user", "timer five")],
        [system, *example, ChatMessage("user", "timer two")],  # the same head: sent once
        [system, ChatMessage("user", "add milk")],
        [ChatMessage("system", "sys"), ChatMessage("user", "no head")],  # nothing kept
    ]


async def test_keep_heads_sends_each_distinct_head(server: _Server) -> None:
    assert await model(server.url).keep_heads(_prompts()) == 2
    heads = [[m["content"] for m in r["body"]["messages"]] for r in server.requests]
    assert heads == [["sys", "timer ten", '{"tool": "timer_set"}'], ["sys"]]
    assert all(r["body"]["max_tokens"] == 1 for r in server.requests)


async def test_keep_heads_stops_at_a_failure(server: _Server) -> None:
    server.script += [answer(["x"]), raw(500, b"")]
    assert await model(server.url).keep_heads(_prompts() * 2) == 1
    assert len(server.requests) == 2


async def test_a_real_call_cuts_keeping_heads_short(server: _Server) -> None:
    server.script += [endless(b": ping\n\n"), answer(["now"])]
    chat = model(server.url)
    keeping = asyncio.create_task(chat.keep_heads(_prompts()))
    while not server.requests:
        await asyncio.sleep(0.01)
    assert await collect(chat) == ["now"]
    assert await asyncio.wait_for(keeping, 3.0) == 0
    assert await asyncio.to_thread(server.disconnected.wait, 3.0)
    assert len(server.requests) == 2


SYSTEM = (
    "You are Hearth, a calm assistant in a family kitchen. You set timers, convert units, read recipes "
    "aloud step by step, keep the shopping list, and answer cooking questions in one or two short spoken "
    "sentences. Never use lists, markdown or emoji, because everything you write is read aloud."
)




async def test_a_reply_stopped_at_its_token_cap_says_so(server: _Server) -> None:
    chat = model(server.url)
    server.script.append(answer(["Rest it five minutes. ", "Then"], {"choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]}))
    assert await collect(chat) == ["Rest it five minutes. ", "Then"]
    assert stopped_at_cap(chat)
    server.script.append(answer(["Done."], {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}))
    assert await collect(chat) == ["Done."]
    assert not stopped_at_cap(chat)
