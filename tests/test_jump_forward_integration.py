"""Jump-forward decoding on the real talker: valid decisions of the registry's schema, most of
their tokens forced, the same decision every time, and the line before the tool streamed as before."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.deciding.tool_calls import PlanReader, SayClosed, planner_messages
from agent.deciding.tool_examples import ExamplePicker
from agent.model.llm import LlamaChatModel, LlamaSettings
from bench.suites.tool_accuracy import build_registry
from tests.test_grammar_sampling import REQUESTS

pytestmark = pytest.mark.integration


async def test_decisions_are_valid_mostly_forced_and_repeatable(model_path, tmp_path: Path) -> None:
    chat = LlamaChatModel(LlamaSettings(Path(model_path("smollm2-135m-instruct/model.gguf"))))
    chat.load()
    registry, _ = build_registry(tmp_path)
    schema = registry.tool_call_schema(max_chars=60)
    sampled = forced = 0
    for language, text in REQUESTS:
        messages = planner_messages("You are a kitchen assistant.", registry.specs, ExamplePicker(language)(text), [], text)
        pieces = [piece async for piece in chat.stream(messages, 96, json_schema=schema)]
        decision = json.loads("".join(pieces))
        assert decision["tool"] in {*registry.names, "none"}, text
        assert chat.last_decode is not None and chat.last_decode.finish == "stop"
        sampled, forced = sampled + chat.last_decode.sampled, forced + chat.last_decode.forced
        # The reader sees the line close as the pieces come, forced ones among them.
        reader = PlanReader()
        closed = [e for piece in pieces for e in reader.feed(piece) if isinstance(e, SayClosed)]
        assert [e.text for e in closed] == [decision["say"]]
        again = "".join([piece async for piece in chat.stream(messages, 96, json_schema=schema)])
        assert again == "".join(pieces), text
    assert forced > sampled / 2  # keys, quotes and names: a large share of every decision


async def test_a_decision_cut_at_its_token_cap_says_so(model_path, tmp_path: Path) -> None:
    chat = LlamaChatModel(LlamaSettings(Path(model_path("smollm2-135m-instruct/model.gguf"))))
    chat.load()
    registry, _ = build_registry(tmp_path)
    text = "add cherry tomatoes to the shopping list"
    messages = planner_messages("You are a kitchen assistant.", registry.specs, ExamplePicker("en")(text), [], text)
    written = "".join([piece async for piece in chat.stream(messages, 6, json_schema=registry.tool_call_schema(max_chars=60))])
    assert chat.capped and chat.last_decode is not None and chat.last_decode.sampled + chat.last_decode.forced == 6
    assert written.startswith('{"say": "')
