"""Top-token-first grammar sampling on the real model: the same decisions as the plain grammar path, and a reply without a grammar untouched."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from agent.deciding.tool_calls import planner_messages
from agent.deciding.tool_examples import ExamplePicker
from agent.model.llm import LlamaChatModel, LlamaSettings
from bench.suites.tool_accuracy import build_registry
from tests.test_grammar_sampling import REQUESTS

pytestmark = pytest.mark.integration


async def _decide(chat: LlamaChatModel, messages, schema) -> str:
    return "".join([piece async for piece in chat.stream(messages, 96, json_schema=schema)])


async def test_top_token_first_writes_exactly_what_the_plain_grammar_writes(model_path, tmp_path: Path) -> None:
    # Sampling every token (no jump-forward), so that the two paths differ only in how they sample.
    settings = LlamaSettings(Path(model_path("smollm2-135m-instruct/model.gguf")), jump_forward=False)
    # Two instances see the same prompts in the same order, so their caches, and logits, match.
    plain, fast = LlamaChatModel(replace(settings, top_token_first=False)), LlamaChatModel(settings)
    plain.load()
    fast.load()
    registry, _ = build_registry(tmp_path)
    schema = registry.tool_call_schema(max_chars=60)
    fallbacks = tokens = 0
    for language, text in REQUESTS:
        messages = planner_messages("You are a kitchen assistant.", registry.specs, ExamplePicker(language)(text), [], text)
        expected = await _decide(plain, messages, schema)
        assert plain.grammar_stats() is None
        got = await _decide(fast, messages, schema)
        assert got == expected, text
        decision = json.loads(got)
        assert decision["tool"] in {*registry.names, "none"}
        n, f = fast.grammar_stats()
        tokens, fallbacks = tokens + n, fallbacks + f
    assert 0 < fallbacks < tokens  # the shortcut was taken, and the fallback was needed and used


async def test_a_reply_without_a_grammar_is_untouched(model_path) -> None:
    chat = LlamaChatModel(LlamaSettings(Path(model_path("smollm2-135m-instruct/model.gguf")), max_tokens=8))
    chat.load()
    text = "".join([piece async for piece in chat.stream(planner_messages("Be brief.", [], [], [], "hello"))])
    assert text and chat.grammar_stats() is None
