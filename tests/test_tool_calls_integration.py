"""One tool decision from the real model: the grammar keeps it to the schema, the line to say comes first."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.deciding.tool_calls import ToolCallPlanner
from agent.model.llm import LlamaChatModel, LlamaSettings
from tools.clock import clock_tools
from tools.convert import convert_tools
from tools.registry import ToolRegistry

pytestmark = pytest.mark.integration


async def test_the_real_model_under_the_grammar_writes_a_valid_decision(model_path):
    registry = ToolRegistry([*clock_tools(), *convert_tools()])
    chat = LlamaChatModel(LlamaSettings(Path(model_path("smollm2-135m-instruct/model.gguf"))))
    chat.load()
    examples = [("what time is it", {"say": "Let me look.", "tool": "time_now", "args": {}})]
    planner = ToolCallPlanner(chat, registry.specs, registry.tool_call_schema(), "You are a kitchen assistant.", examples)
    said: list[str] = []
    plan = await planner.plan("what's the date today", on_say=said.append)
    decision = json.loads(plan.raw)  # the grammar guarantees JSON of the schema
    assert list(decision)[0] == "say" and said == [decision["say"]]
    assert decision["tool"] in {*registry.names, "none"}
