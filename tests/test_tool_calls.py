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




# -- tool first ---------------------------------------------------------------------------------
@pytest.mark.parametrize("step", [1, 4, 100])
def test_tool_first_the_tool_is_reported_before_any_line(step: int):
    from agent.deciding.tool_calls import PlanReader, SayClosed, SayDelta, ToolChosen

    for text, expected in [
        ('{"tool": "timer_start", "args": {"duration_s": 600}}', [ToolChosen("timer_start")]),
        ('{"tool": "none", "say": "You\'re welcome!"}', [ToolChosen(None), SayClosed("You're welcome!")]),
    ]:
        reader = PlanReader()
        events = [e for i in range(0, len(text), step) for e in reader.feed(text[i : i + step])]
        assert [e for e in events if not isinstance(e, SayDelta)] == expected
        assert "".join(e.text for e in events if isinstance(e, SayDelta)) == (expected[-1].text if isinstance(expected[-1], SayClosed) else "")


def test_tool_first_examples_and_schema_name_the_tool_and_write_a_line_only_without_one():
    from agent.deciding.tool_calls import decision_text, planner_messages

    timer = {"say": "Ten minutes.", "tool": "timer_start", "args": {"duration_s": 600}}
    thanks = {"say": "You're welcome!", "tool": "none"}
    assert decision_text(timer, tool_first=True) == '{"tool": "timer_start", "args": {"duration_s": 600}}'
    assert decision_text(thanks, tool_first=True) == '{"tool": "none", "say": "You\'re welcome!"}'
    assert decision_text(timer) == json.dumps(timer)
    messages = planner_messages("sys", [], [("ten minutes", timer)], [], "eight minutes", tool_first=True)
    assert messages[2].content == decision_text(timer, tool_first=True) and '{"tool": "none", "say"' in messages[0].content
    registry = ToolRegistry([*clock_tools(), *convert_tools()])
    *tools, none = registry.tool_call_schema(tool_first=True)["anyOf"]
    assert all(list(b["properties"]) == ["tool", "args"] == b["required"] for b in tools)
    assert list(none["properties"]) == ["tool", "say"] == none["required"]


async def test_tool_first_a_plan_is_read_the_same():
    registry = ToolRegistry([*clock_tools(), *convert_tools()])
    schema = registry.tool_call_schema(tool_first=True)
    chat = ScriptedJson({"tool": "time_now", "args": {}})
    plan = await ToolCallPlanner(chat, registry.specs, schema, "", tool_first=True).plan("what time is it")
    assert (plan.tool, plan.args, plan.say) == ("time_now", {}, "")
    none = await ToolCallPlanner(ScriptedJson({"tool": "none", "say": "Hi!"}), registry.specs, schema, "", tool_first=True).plan("hello")
    assert (none.tool, none.say) == (None, "Hi!")
