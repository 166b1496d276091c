"""A chat model served by an OpenAI-compatible inference server on the home network.

A bigger model than the Pi can run may sit on another machine (llama.cpp's server,
llama-cpp-python's, Ollama, vLLM).  Requests go over plain ``http.client`` in a worker
thread, as :class:`~agent.model.llm.LlamaChatModel` runs llama.cpp in one, so that no
HTTP library joins the dependencies; closing the stream shuts the socket, which is how
these servers learn to stop generating.
"""

from __future__ import annotations

import http.client
import json
import logging
import socket
import ssl
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlsplit

from agent.model.llm import ChatMessage, stream_from_thread

log = logging.getLogger(__name__)

SchemaStyle = Literal["llama_cpp", "openai"]

_CHAT_PATH = "/v1/chat/completions"
_ERROR_BODY = 200
"""Characters of an error response quoted in the exception."""


class RemoteModelError(RuntimeError):
    """The inference server could not be reached, refused the request, or sent a broken stream."""


@dataclass(frozen=True)
class RemoteSettings:
    """Where the inference server is and how to ask it."""

    base_url: str
    """The server's root, ``http://host:port`` (``https://`` works too); ``/v1/chat/completions`` is added to it."""
    model: str | None = None
    """The model name sent with each request; Ollama and vLLM need it, llama.cpp's servers serve what they loaded."""
    api_key: str | None = field(default=None, repr=False)
    """Sent as ``Authorization: Bearer ...`` when the server requires a key; kept out of ``repr`` and logs."""
    id_slot: int | None = None
    """The llama.cpp server slot to pin every request to, so that the warmed prompt prefix is in the slot
    the next request lands in; None lets the server choose."""
    schema_style: SchemaStyle = "llama_cpp"
    """How a JSON schema is sent: ``"llama_cpp"`` as ``{"type": "json_object", "schema": ...}`` (the only
    form llama-cpp-python's server accepts; llama.cpp's own server takes it too), ``"openai"`` as
    ``{"type": "json_schema", "json_schema": {"name": "reply", "schema": ...}}`` (Ollama, vLLM)."""
    max_tokens: int = 160
    """Longest reply, in tokens: a spoken answer should be short."""
    temperature: float = 0.3
    """Sampling temperature; low keeps small models on topic."""
    json_temperature: float = 0.0
    """Temperature of schema-constrained replies (tool decisions): greedy, so the same words get the same call."""
    connect_timeout_s: float = 2.0
    """How long to wait for the TCP (and TLS) connection: a server that is off should fail a turn fast."""
    read_timeout_s: float = 20.0
    """Longest silence allowed between two pieces of the response, prompt evaluation included."""

    def __post_init__(self) -> None:
        url = self.base_url
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError as exc:
            raise ValueError(f"remote model base_url {url!r} is not a valid URL: {exc}") from None
        if parts.scheme not in ("http", "https"):
            raise ValueError(f"remote model base_url {url!r} must start with http:// or https://")
        if not parts.hostname:
            raise ValueError(f"remote model base_url {url!r} has no host name")
        if parts.username is not None or parts.password is not None:
            raise ValueError(f"remote model base_url {url!r} must not hold credentials; use api_key")
        if parts.query or parts.fragment:
            raise ValueError(f"remote model base_url {url!r} must not have a query or fragment")
        if port == 0:
            raise ValueError(f"remote model base_url {url!r} has port 0")
        if parts.path.rstrip("/").endswith("/v1"):
            raise ValueError(
                f"remote model base_url {url!r} ends in /v1: give the server's root, /v1/chat/completions is added to it"
            )
        if self.schema_style not in ("llama_cpp", "openai"):
            raise ValueError(f"remote model schema_style {self.schema_style!r} must be 'llama_cpp' or 'openai'")
        if self.connect_timeout_s <= 0 or self.read_timeout_s <= 0:
            raise ValueError("remote model timeouts must be positive")
        if self.max_tokens < 1:
            raise ValueError("remote model max_tokens must be at least 1")
        if self.id_slot is not None and self.id_slot < 0:
            raise ValueError("remote model id_slot must be 0 or more")

    @property
    def url(self) -> str:
        """``base_url`` without a trailing slash, as error messages name the server."""
        return self.base_url.rstrip("/")


class _SseLines:
    """Splits a server-sent event stream into the ``data`` of each event, whatever the chunking."""

    def __init__(self) -> None:
        self._buffer = b""
        self._data: list[str] = []

    def feed(self, chunk: bytes) -> Iterator[str]:
        self._buffer += chunk
        *lines, self._buffer = self._buffer.split(b"\n")
        for raw in lines:
            # Whole lines only are decoded, so a character split across chunks arrives intact.
            line = raw.rstrip(b"\r").decode("utf-8", "replace")
            if not line:
                if self._data:
                    yield "\n".join(self._data)
                    self._data = []
            elif line.startswith("data:"):
                value = line[5:]
                self._data.append(value[1:] if value.startswith(" ") else value)
            # Comments (": ping"), event names and ids carry nothing a chat reply needs.

    def end(self) -> Iterator[str]:
        """The last event, when the stream ends without the blank line after it."""
        if self._buffer.strip().startswith(b"data:"):
            yield from self.feed(b"\n\n")
        elif self._data:
            yield "\n".join(self._data)
        self._data = []


def _prompt_counts(event: dict[str, Any]) -> tuple[int, int] | None:
    """(prompt tokens, tokens evaluated) in an event, or None when it reports neither.

    llama.cpp's server sends ``timings`` with ``prompt_n`` (evaluated) and ``cache_n`` (reused);
    vLLM and newer llama.cpp report ``usage.prompt_tokens_details.cached_tokens``.  A bare
    ``usage.prompt_tokens`` says nothing about the cache, so it is not taken as evaluated."""
    timings = event.get("timings")
    if isinstance(timings, dict) and isinstance(timings.get("prompt_n"), int):
        evaluated = timings["prompt_n"]
        return evaluated + int(timings.get("cache_n") or 0), evaluated
    usage = event.get("usage")
    if isinstance(usage, dict) and isinstance(usage.get("prompt_tokens"), int):
        details = usage.get("prompt_tokens_details")
        if isinstance(details, dict) and isinstance(details.get("cached_tokens"), int):
            return usage["prompt_tokens"], usage["prompt_tokens"] - details["cached_tokens"]
    return None


class _Link:
    """The socket of a request in flight, for the event loop to shut when the stream is closed."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._socket: socket.socket | None = None
        self.cancel = threading.Event()
        self.capped = False
        """The server said the reply stopped at its token cap (``finish_reason`` "length")."""

    def attach(self, sock: socket.socket) -> None:
        with self._lock:
            self._socket = sock
            if self.cancel.is_set():
                self._shut()

    def close(self) -> None:
        with self._lock:
            self.cancel.set()
            self._shut()

    def _shut(self) -> None:
        # shutdown, not close: it wakes the worker blocked in recv and sends the server a FIN now.
        # The plain socket's shutdown even for TLS: SSLSocket's would unwrap it under the worker's read.
        if self._socket is not None:
            try:
                socket.socket.shutdown(self._socket, socket.SHUT_RDWR)
            except OSError:
                pass


class RemoteChatModel:
    """Streams chat replies from an OpenAI-compatible server (``POST /v1/chat/completions``)."""

    def __init__(self, settings: RemoteSettings) -> None:
        self.settings = settings
        parts = urlsplit(settings.base_url)
        self._https = parts.scheme == "https"
        self._host = parts.hostname or ""
        self._port = parts.port
        self._path = parts.path.rstrip("/") + _CHAT_PATH
        self.last_prompt: tuple[int, int] = (0, 0)
        """(tokens in the prompt, tokens evaluated for it) of the latest reply, as the server reported
        them; (0, 0) when it reported nothing usable (llama-cpp-python's server reports nothing)."""
        self.capped = False
        """Whether the latest reply stopped at its token cap, as the server reported it (see
        :func:`agent.model.llm.stopped_at_cap`)."""
        self._background: set[_Link] = set()
        """Requests that only warm the server's cache, closed by any real call."""

    # -- requests ------------------------------------------------------------------------
    def _body(
        self,
        messages: Sequence[ChatMessage],
        max_tokens: int,
        json_schema: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        s = self.settings
        body: dict[str, Any] = {
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            "stream": True,
            "stream_options": {"include_usage": True},
            "max_tokens": max_tokens,
            "temperature": s.temperature if json_schema is None else s.json_temperature,
            # Older llama.cpp servers reuse the evaluated prefix of the last prompt only when asked.
            "cache_prompt": True,
        }
        if s.model is not None:
            body["model"] = s.model
        if s.id_slot is not None:
            body["id_slot"] = s.id_slot
        if json_schema is not None:
            if s.schema_style == "openai":
                body["response_format"] = {"type": "json_schema", "json_schema": {"name": "reply", "schema": json_schema}}
            else:
                body["response_format"] = {"type": "json_object", "schema": json_schema}
        return body

    def _error(self, what: str) -> RemoteModelError:
        return RemoteModelError(f"{self.settings.url}: {what}")

    def _connection(self) -> http.client.HTTPConnection:
        timeout = self.settings.connect_timeout_s
        if self._https:
            return http.client.HTTPSConnection(
                self._host, self._port, timeout=timeout, context=ssl.create_default_context()
            )
        return http.client.HTTPConnection(self._host, self._port, timeout=timeout)

    def _exchange(self, body: dict[str, Any], link: _Link, emit: Callable[[str], None]) -> tuple[int, int] | None:
        """Send one request and hand each piece of the reply to ``emit`` (worker thread).  Returns
        the prompt counts the server reported, (0, 0) if none, or None once cancelled."""
        s = self.settings
        conn = self._connection()
        try:
            try:
                conn.connect()
            except ConnectionRefusedError:
                raise self._error("connection refused") from None
            except TimeoutError:
                raise self._error(f"no connection within {s.connect_timeout_s:g} s") from None
            except OSError as exc:
                raise self._error(f"cannot connect ({exc.strerror or exc})") from None
            assert conn.sock is not None
            conn.sock.settimeout(s.read_timeout_s)
            link.attach(conn.sock)
            try:
                return self._converse(conn, body, link, emit)
            except TimeoutError:
                if link.cancel.is_set():
                    return None
                raise self._error(f"no data for {s.read_timeout_s:g} s") from None
            except (OSError, http.client.HTTPException) as exc:
                if link.cancel.is_set():  # the socket was shut on purpose
                    return None
                raise self._error(f"connection lost ({type(exc).__name__}: {exc})") from None
        finally:
            conn.close()

    def _converse(
        self, conn: http.client.HTTPConnection, body: dict[str, Any], link: _Link, emit: Callable[[str], None]
    ) -> tuple[int, int] | None:
        headers = {"Content-Type": "application/json", "Accept": "text/event-stream"}
        if self.settings.api_key:
            headers["Authorization"] = f"Bearer {self.settings.api_key}"
        conn.request("POST", self._path, body=json.dumps(body).encode("utf-8"), headers=headers)
        response = conn.getresponse()
        if response.status != 200:
            text = response.read(_ERROR_BODY * 4).decode("utf-8", "replace")
            detail = " ".join(text.split())[:_ERROR_BODY]
            raise self._error(f"HTTP {response.status} {response.reason}" + (f": {detail}" if detail else ""))
        kind = response.getheader("Content-Type", "")
        if "json" in kind:  # a server that ignores stream=True answers with one JSON document
            raise self._error(f"the server did not stream (Content-Type {kind})")
        counts = (0, 0)
        events = _SseLines()
        while not link.cancel.is_set():
            chunk = response.read1(65536)
            payloads = events.feed(chunk) if chunk else events.end()
            for payload in payloads:
                if payload == "[DONE]":
                    return counts
                counts = self._take(payload, emit, link) or counts
                if link.cancel.is_set():
                    return None
            if not chunk:
                if link.cancel.is_set():
                    return None
                raise self._error("malformed stream: it ended before [DONE]")
        return None

    def _take(self, payload: str, emit: Callable[[str], None], link: _Link | None = None) -> tuple[int, int] | None:
        """Emit the text of one event; its prompt counts, if it has them. A reply that stopped at
        its token cap is noted on ``link``."""
        try:
            event = json.loads(payload)
        except ValueError:
            raise self._error(f"malformed stream: not JSON: {payload[:80]!r}") from None
        if not isinstance(event, dict):
            raise self._error(f"malformed stream: not an object: {payload[:80]!r}")
        if "error" in event:
            error = event["error"]
            message = error.get("message", error) if isinstance(error, dict) else error
            raise self._error(f"server error: {' '.join(str(message).split())[:_ERROR_BODY]}")
        choices = event.get("choices") or []
        try:
            content = choices[0].get("delta", {}).get("content") if choices else None
        except (AttributeError, KeyError, TypeError):
            raise self._error(f"malformed stream: unexpected event {payload[:80]!r}") from None
        if content:
            if not isinstance(content, str):
                raise self._error(f"malformed stream: content is not text: {payload[:80]!r}")
            emit(content)
        if link is not None and choices and isinstance(choices[0], dict) and choices[0].get("finish_reason") == "length":
            link.capped = True
        return _prompt_counts(event)

    async def _pieces(
        self, body: dict[str, Any], link: _Link, report: list[tuple[int, int] | None]
    ) -> AsyncIterator[str]:
        """Run one request on a worker thread and yield its pieces; closing this stops the request."""

        def exchange(emit: Callable[[str], None]) -> None:
            report.append(self._exchange(body, link, emit))

        async with aclosing(stream_from_thread(exchange, link.close)) as pieces:
            async for piece in pieces:
                yield piece

    async def _prime(self, messages: Sequence[ChatMessage]) -> bool:
        """A one-token request, for the server to evaluate ``messages`` and keep them cached; False
        when a real call closed it first."""
        link = _Link()
        self._background.add(link)
        report: list[tuple[int, int] | None] = []
        try:
            async for _ in self._pieces(self._body(messages, 1), link, report):
                pass
        finally:
            self._background.discard(link)
        return bool(report) and report[0] is not None

    # -- the ChatModel interface ---------------------------------------------------------
    async def warm(self, system_prompt: str) -> None:
        """Have the server evaluate and cache the system prompt, so that turns sharing it start fast."""
        t0 = time.monotonic()
        try:
            done = await self._prime([ChatMessage("system", system_prompt)])
        except RemoteModelError as exc:
            log.warning("remote prompt cache not warmed: %s", exc)
            return
        if done:
            log.info("remote prompt cache warmed in %.2f s", time.monotonic() - t0)
        else:
            log.info("remote prompt cache warm-up cut short by a real request")

    async def keep_heads(self, prompts: Sequence[Sequence[ChatMessage]]) -> int:
        """Have the server evaluate the head (up to the last message marked ``keep``) of each
        prompt, once per distinct head; whether it keeps more than the latest depends on the
        server (llama.cpp's ``--cache-ram``, or a slot per head).  Stops at the first failure
        or real call.  Returns how many heads were sent and answered."""
        heads: list[tuple[ChatMessage, ...]] = []
        for messages in prompts:
            marked = [i for i, m in enumerate(messages) if m.keep]
            head = tuple(messages[: marked[-1] + 1]) if marked else ()
            if head and head not in heads:
                heads.append(head)
        sent = 0
        for head in heads:
            try:
                if not await self._prime(head):
                    break  # a real call closed it
            except RemoteModelError as exc:
                log.warning("remote prompt heads: %d of %d sent, then: %s", sent, len(heads), exc)
                break
            sent += 1
        return sent

    async def stream(
        self,
        messages: Sequence[ChatMessage],
        max_tokens: int | None = None,
        json_schema: dict[str, Any] | None = None,
    ) -> AsyncIterator[str]:
        """Stream the reply; with ``json_schema`` the server constrains it to JSON of that schema."""
        for background in list(self._background):
            background.close()  # a real call goes first
        self.last_prompt = (0, 0)
        self.capped = False
        body = self._body(messages, max_tokens or self.settings.max_tokens, json_schema)
        report: list[tuple[int, int] | None] = []
        link = _Link()
        async for piece in self._pieces(body, link, report):
            yield piece
        self.last_prompt = (report[0] if report else None) or (0, 0)
        self.capped = link.capped
