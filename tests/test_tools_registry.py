"""ToolRegistry: explicit construction, lookups and the reply schema."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel, ConfigDict, Field

from tools.convert import convert_tools
from tools.registry import NO_TOOL, ToolRegistry
from tools.spec import NoArgs, ToolOutput, ToolSpec


class Inner(BaseModel):
    model_config = ConfigDict(extra="forbid")
    amount: int


class NestedArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    item: str
    quantity: Inner | None = None


async def _ok(args: BaseModel) -> ToolOutput:
    return ToolOutput("ok")


def _spec(name: str, args: type[BaseModel] = NoArgs, **kw) -> ToolSpec:
    return ToolSpec(name=name, description=f"{name} tool", args=args, run=_ok, **kw)


def test_lookup_names_and_order() -> None:
    reg = ToolRegistry([_spec("time_now"), *convert_tools(), _spec("date_today")])
    assert reg.names == ["time_now", "convert_units", "date_today"]
    assert [s.name for s in reg.specs] == reg.names
    assert reg.get("convert_units") is reg.specs[1]
    assert reg.get("nope") is None
    assert "time_now" in reg and len(reg) == 3


def test_duplicate_and_reserved_names_refused() -> None:
    with pytest.raises(ValueError, match="duplicate"):
        ToolRegistry([_spec("time_now"), _spec("time_now")])
    with pytest.raises(ValueError):
        ToolRegistry([_spec(NO_TOOL)])


def test_slow() -> None:
    reg = ToolRegistry([_spec("recipe_search", expected_s=1.5), _spec("time_now", expected_s=0.01)])
    assert reg.slow("recipe_search")
    assert not reg.slow("time_now")
    assert not reg.slow("recipe_search", threshold_s=2.0)
    assert not reg.slow("unknown")


def test_schema_has_a_branch_per_tool_plus_none_with_say_first() -> None:
    reg = ToolRegistry([_spec("time_now"), *convert_tools(), _spec("shopping_add", NestedArgs, side_effects="act")])
    schema = reg.tool_call_schema()
    json.dumps(schema)  # plain JSON, nothing pydantic-specific left
    branches = schema["anyOf"]
    assert [b["properties"]["tool"]["const"] for b in branches] == ["time_now", "convert_units", "shopping_add", NO_TOOL]
    for branch in branches:
        assert list(branch["properties"])[0] == "say"
        assert branch["required"][0] == "say"
        assert branch["properties"]["say"] == {"type": "string"}
        assert branch["additionalProperties"] is False
    none = branches[-1]
    assert set(none["properties"]) == {"say", "tool"}
    convert = branches[1]["properties"]["args"]
    assert set(convert["required"]) == {"value", "from_unit", "to_unit"}
    assert convert["additionalProperties"] is False
    assert "ingredient" in convert["properties"]


def test_schema_inlines_defs() -> None:
    reg = ToolRegistry([_spec("shopping_add", NestedArgs)])
    args = reg.tool_call_schema()["anyOf"][0]["properties"]["args"]
    text = json.dumps(args)
    assert "$ref" not in text and "$defs" not in text
    quantity = args["properties"]["quantity"]
    inner = next(option for option in quantity["anyOf"] if option.get("type") == "object")
    assert inner["properties"]["amount"]["type"] == "integer"


def test_schema_refuses_recursive_args() -> None:
    class Node(BaseModel):
        child: Node | None = None

    Node.model_rebuild()

    class TreeArgs(BaseModel):
        root: Node

    with pytest.raises(ValueError, match="recursive"):
        ToolRegistry([_spec("tree", TreeArgs)]).tool_call_schema()


def test_schema_narrowed_to_named_tools_keeps_registry_order_and_none() -> None:
    reg = ToolRegistry([_spec("time_now"), *convert_tools(), _spec("date_today")])
    narrowed = reg.tool_call_schema(names=["date_today", "time_now"])
    assert [b["properties"]["tool"]["const"] for b in narrowed["anyOf"]] == ["time_now", "date_today", NO_TOOL]
    assert reg.tool_call_schema(names=[]) == {"anyOf": [reg.tool_call_schema()["anyOf"][-1]]}
    assert reg.tool_call_schema(names=reg.names) == reg.tool_call_schema()
    with pytest.raises(ValueError, match="unknown"):
        reg.tool_call_schema(names=["weather"])
    forced = reg.tool_call_schema(names=["date_today"], allow_none=False)
    assert [b["properties"]["tool"]["const"] for b in forced["anyOf"]] == ["date_today"]
    # with nothing named, answering without a tool stays possible
    assert reg.tool_call_schema(names=[], allow_none=False) == reg.tool_call_schema(names=[])


def test_max_chars_caps_say_and_uncapped_string_arguments() -> None:
    class Args(BaseModel):
        model_config = ConfigDict(extra="forbid")
        item: str
        note: str | None = None
        code: str = Field(max_length=5)

    reg = ToolRegistry([_spec("shopping_add", Args)])
    branch, none = reg.tool_call_schema(max_chars=40)["anyOf"]
    assert branch["properties"]["say"] == {"type": "string", "maxLength": 40} == none["properties"]["say"]
    props = branch["properties"]["args"]["properties"]
    assert props["item"]["maxLength"] == 40 and props["code"]["maxLength"] == 5
    assert {"type": "string", "maxLength": 40} in props["note"]["anyOf"]
    uncapped = reg.tool_call_schema()["anyOf"][0]["properties"]
    assert uncapped["say"] == {"type": "string"} and "maxLength" not in uncapped["args"]["properties"]["item"]
