"""One tool decision: the line to say is reported as soon as it is written, and a plan carries the tool and its arguments."""

from __future__ import annotations

import json

import pytest

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


