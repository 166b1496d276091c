"""One tool decision from the model: the grammar keeps it to the schema, the line to say comes first."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.model.llm import LlamaChatModel, LlamaSettings
from agent.deciding.tool_calls import SayWatcher, ToolCallPlanner
from tools.clock import clock_tools
from tools.convert import convert_tools
from tools.registry import ToolRegistry


@pytest.mark.parametrize("step", [1, 2, 5, 100])
def test_the_line_is_reported_as_soon_as_its_string_closes(step: int):
    text = '{"say": "Hang on, \\"checking\\" Ilsan.", "tool": "air_quality", "args": {"location": "Ilsan"}}'
    said: list[tuple[str, int]] = []
    fed = 0
    watcher = SayWatcher(lambda line: said.append((line, fed)))
    for i in range(0, len(text), step):
        fed = i + step
        watcher.feed(text[i : i + step])
    assert [line for line, _ in said] == ['Hang on, "checking" Ilsan.']
    closing = text.index('Ilsan.",') + len('Ilsan."')
    assert said[0][1] < closing + step  # reported before the arguments were written


class ScriptedJson:
    def __init__(self, reply: dict) -> None:
        self.reply = json.dumps(reply)
        self.schemas: list[dict] = []

    async def stream(self, messages, max_tokens=None, json_schema=None):
        self.schemas.append(json_schema)
        for i in range(0, len(self.reply), 3):
            yield self.reply[i : i + 3]


async def test_a_plan_carries_the_tool_and_arguments_and_no_tool_is_none():
    registry = ToolRegistry([*clock_tools(), *convert_tools()])
    chat = ScriptedJson({"say": "One moment.", "tool": "convert_units", "args": {"value": 1, "from_unit": "cup", "to_unit": "g", "ingredient": "flour"}})
    planner = ToolCallPlanner(chat, registry.specs, registry.tool_call_schema(), "be brief")
    said: list[str] = []
    plan = await planner.plan("how many grams is a cup of flour", on_say=said.append)
    assert (plan.tool, plan.args["ingredient"], said) == ("convert_units", "flour", ["One moment."])
    assert chat.schemas == [registry.tool_call_schema()]
    none = await ToolCallPlanner(ScriptedJson({"say": "You're welcome.", "tool": "none"}), registry.specs, registry.tool_call_schema(), "").plan("thanks")
    assert none.tool is None and none.say == "You're welcome."


@pytest.mark.integration
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
