"""What llama.cpp evaluates for a prompt: kept heads, slices that a cancel stops, background keeping."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agent.deciding.tool_calls import Examples, planner_messages
from agent.model.llm import ChatMessage, LlamaChatModel, LlamaSettings

pytestmark = pytest.mark.integration

SYSTEM = "You are a kitchen assistant. Reply with JSON only."
TIMER = [
    ("set a timer for ten minutes", {"say": "Ten minutes.", "tool": "timer_start", "args": {"duration_s": 600}}),
    ("start a five minute timer", {"say": "Five minutes.", "tool": "timer_start", "args": {"duration_s": 300}}),
]
LIST = [("add milk to the list", {"say": "Adding milk.", "tool": "shopping_add", "args": {"item": "milk"}})]


def _model(model_path, **settings) -> LlamaChatModel:
    chat = LlamaChatModel(LlamaSettings(Path(model_path("smollm2-135m-instruct/model.gguf")), **settings))
    chat.load()
    return chat


def _prompt(examples, words: str) -> list[ChatMessage]:
    return planner_messages(SYSTEM, [], Examples(examples, fixed=len(examples)), [], words)


async def _reply(chat: LlamaChatModel, messages: list[ChatMessage]) -> str:
    return "".join([piece async for piece in chat.stream(messages, max_tokens=12)])


async def test_a_kept_head_is_loaded_not_evaluated_and_changes_nothing(model_path) -> None:
    chat = _model(model_path)
    first = _prompt(TIMER, "timer for three minutes please")
    await _reply(chat, first)
    total, evaluated = chat.last_prompt
    assert evaluated == total  # nothing kept yet: all of it read
    await _reply(chat, _prompt(LIST, "add eggs"))  # another head: the cache no longer holds the timer one
    asked = _prompt(TIMER, "set a timer for twenty minutes for the rice")
    again = await _reply(chat, asked)
    total, evaluated = chat.last_prompt
    prompt, _ = chat.format(asked)
    head = len(chat._tokenize(chat.head_of(asked, prompt)))
    assert head > 40 and evaluated == total - head  # only the words after the head are read

    fresh = _model(model_path)  # the same prompt, head evaluated here: the same reply
    assert await _reply(fresh, asked) == again
    assert fresh.last_prompt == (total, total)


async def test_a_cancelled_call_stops_evaluating_its_prompt_within_a_slice(model_path) -> None:
    chat = _model(model_path, prefill_slice=16, kept_heads=0)
    long_words = "and then " * 800  # ~1,600 tokens: seconds of evaluation on a small CPU, far over 0.05 s on any
    messages = [ChatMessage("system", SYSTEM), ChatMessage("user", long_words)]

    async def consume() -> None:
        async for _ in chat.stream(messages, max_tokens=4):
            pass

    task = asyncio.create_task(consume())
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    total, _ = chat.last_prompt
    assert total > 1500 and chat._llama.n_tokens < total - 16  # stopped, not read to the end


async def test_keeping_heads_in_the_background_gives_way_to_a_real_call(model_path) -> None:
    chat = _model(model_path)
    heads = [_prompt(TIMER[:1] + [(f"example {n}", {"say": "ok", "tool": "none"})], "")[:-1] for n in range(12)]
    keeping = asyncio.create_task(chat.keep_heads(heads))
    await asyncio.sleep(0.05)
    reply = await _reply(chat, _prompt(LIST, "add butter"))
    kept = await keeping
    assert reply and kept < len(heads)  # the real call went first, the rest is kept when used
    assert await chat.keep_heads(heads[:1]) in (0, 1)
    assert await chat.keep_heads(heads[:1]) == 0  # kept once only


async def test_a_head_not_kept_yet_starts_from_a_kept_head_it_begins_with(model_path) -> None:
    """The conversation head (the examples, then the exchanges so far) is not kept when the turn
    comes too soon after the last; the fixed examples it begins with are, and are loaded."""
    chat = _model(model_path)
    fixed = _prompt(TIMER, "")[:-1]
    assert await chat.keep_heads([fixed]) == 1
    await _reply(chat, _prompt(LIST, "add eggs"))  # the cache now holds another prompt
    history = [ChatMessage("user", "what time is it"), ChatMessage("assistant", "It's noon.", keep=True)]
    asked = [*fixed, *history, ChatMessage("user", "set a timer for twenty minutes")]
    again = await _reply(chat, asked)
    total, evaluated = chat.last_prompt
    prompt, _ = chat.format(fixed + [ChatMessage("user", "")])
    kept = len(chat._tokenize(chat.head_of(fixed, prompt)))
    assert kept > 40 and evaluated == total - kept  # the fixed head loaded, the rest read
    fresh = _model(model_path)
    assert await _reply(fresh, asked) == again  # and the reply is what a fresh model gives
