"""The remote chat model against llama-cpp-python's real server and the real talker."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.model.llm import ChatMessage
from agent.model.remote import RemoteModelError
from tests.test_remote_model import SCHEMA, SYSTEM, collect, free_port, model

pytestmark = pytest.mark.integration


# -- the real llama-cpp-python server ------------------------------------------------------
class _LlamaServer:
    def __init__(self, url: str, log: Path) -> None:
        self.url = url
        self.log = log

    def text(self) -> str:
        return self.log.read_text(errors="replace")


@pytest.fixture(scope="module")
def llama_server(model_path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[_LlamaServer]:
    gguf = model_path("smollm2-135m-instruct/model.gguf")
    port = free_port()
    log = tmp_path_factory.mktemp("llama-server") / "server.log"
    # One thread each: llama.cpp's OpenMP threads spin at barriers, and on a busy two-core machine two of
    # them take seconds a token where one takes milliseconds.
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--host", "127.0.0.1",
               "--port", str(port), "--n_ctx", "2048", "--n_threads", "1", "--n_threads_batch", "1"]
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    server = _LlamaServer(f"http://127.0.0.1:{port}", log)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{server.url}/v1/models", timeout=1) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                state = f"exited with {process.returncode}" if process.poll() is not None else "did not answer in 60 s"
                pytest.fail(f"llama_cpp.server {state}; its output:\n{server.text()[-4000:]}", pytrace=False)
            time.sleep(0.2)
        yield server
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _prefix_hits(text: str) -> list[tuple[int, int]]:
    """(tokens reused, tokens left to evaluate) of each request, from llama-cpp-python's verbose log."""
    return [(int(a), int(b)) for a, b in re.findall(r"(\d+) prefix-match hit, remaining (\d+) prompt tokens", text)]


async def test_real_server_streams_a_plain_reply(llama_server: _LlamaServer) -> None:
    chat = model(llama_server.url)
    pieces = await collect(chat, [ChatMessage("system", SYSTEM), ChatMessage("user", "How long do I boil an egg?")],
                           max_tokens=24)
    assert len(pieces) > 1 and "".join(pieces).strip()
    assert chat.last_prompt == (0, 0)  # llama-cpp-python's server sends no usage or timings when streaming


async def test_real_server_honours_a_json_schema(llama_server: _LlamaServer) -> None:
    json_only = ' Reply with JSON only, like {"say": "Five minutes, starting now.", "tool": "timer_set"}.'
    messages = [ChatMessage("system", SYSTEM + json_only), ChatMessage("user", "Set a timer for ten minutes.")]
    text = "".join(await collect(model(llama_server.url), messages, max_tokens=60, json_schema=SCHEMA))
    reply = json.loads(text)
    assert isinstance(reply["say"], str) and reply["tool"] in ("timer_set", "none")
    # Its request model takes response_format types "text" and "json_object" only, and answers 500.
    with pytest.raises(RemoteModelError, match="HTTP 500 .*response_format.*Input should be 'text' or 'json_object'"):
        await collect(model(llama_server.url, schema_style="openai"), messages, max_tokens=60, json_schema=SCHEMA)


async def test_real_server_warm_prefix_is_reused(llama_server: _LlamaServer) -> None:
    chat = model(llama_server.url)
    await collect(chat, [ChatMessage("system", "Be brief."), ChatMessage("user", "Hi")], max_tokens=2)  # evict SYSTEM
    before = len(llama_server.text())
    await chat.warm(SYSTEM)
    warmed = len(llama_server.text())
    await collect(chat, [ChatMessage("system", SYSTEM), ChatMessage("user", "Is the oven hot?")], max_tokens=4)
    warm_hits = _prefix_hits(llama_server.text()[before:warmed])
    turn_hits = _prefix_hits(llama_server.text()[warmed:])
    assert len(warm_hits) == 1 and warm_hits[0][0] < 10  # the warm-up itself found little cached
    assert len(turn_hits) == 1
    reused, remaining = turn_hits[0]
    assert reused > 50 and remaining < reused  # the turn evaluated only what follows the system prompt


async def test_real_server_stops_when_the_stream_is_closed(llama_server: _LlamaServer) -> None:
    chat = model(llama_server.url)
    messages = [ChatMessage("system", SYSTEM), ChatMessage("user", "Tell me a long story about bread.")]
    before = len(llama_server.text())
    async with contextlib.aclosing(chat.stream(messages, max_tokens=400)) as pieces:
        async for _ in pieces:
            break
    deadline = time.monotonic() + 5
    while "Disconnected from client" not in llama_server.text()[before:] and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert "Disconnected from client" in llama_server.text()[before:]
    assert "".join(await collect(chat, [ChatMessage("user", "Say hello.")], max_tokens=8)).strip()
