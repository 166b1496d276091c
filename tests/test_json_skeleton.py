"""What a reply under a JSON schema must say next: the skeleton the decoder forces."""

from __future__ import annotations

import json

import pytest

from agent.model.json_skeleton import Skeleton, compile_skeleton

TIMER = {
    "type": "object",
    "properties": {
        "say": {"type": "string", "maxLength": 60},
        "tool": {"const": "timer_start"},
        "args": {
            "type": "object", "additionalProperties": False,
            "properties": {"duration_s": {"type": "integer"}, "label": {"anyOf": [{"type": "string"}, {"type": "null"}]}},
            "required": ["duration_s"],
        },
    },
    "required": ["say", "tool", "args"], "additionalProperties": False,
}
STATUS = {
    "type": "object",
    "properties": {"say": {"type": "string"}, "tool": {"const": "timer_status"}, "args": {"type": "object", "properties": {}}},
    "required": ["say", "tool", "args"], "additionalProperties": False,
}
NONE = {
    "type": "object", "properties": {"say": {"type": "string"}, "tool": {"const": "none"}},
    "required": ["say", "tool"], "additionalProperties": False,
}
SCHEMA = {"anyOf": [TIMER, STATUS, NONE]}


def _written(reply: dict, piece: int = 3) -> list[tuple[str, str]]:
    """The reply written ``piece`` characters at a time by the model, with what the skeleton forced between."""
    skeleton = Skeleton(compile_skeleton(SCHEMA))
    text, at, steps = json.dumps(reply), 0, []
    while at < len(text):
        forced = skeleton.forced()
        if forced:
            assert text.startswith(forced, at), (forced, text[at:])
            steps.append(("forced", forced))
            skeleton.feed(forced)
            at += len(forced)
            continue
        steps.append(("model", text[at : at + piece]))
        skeleton.feed(text[at : at + piece])
        at += piece
    assert skeleton.done
    return steps


def test_keys_quotes_and_the_rest_of_a_name_are_forced_and_values_are_the_models() -> None:
    steps = _written({"say": "Timer set.", "tool": "timer_start", "args": {"duration_s": 600}})
    forced = [text for who, text in steps if who == "forced"]
    assert forced == ['{"say": "', ' "tool": "', ', "args": {"duration_s":']
    assert "".join(text for who, text in steps if who == "model").startswith("Timer set.")


def test_where_the_ways_part_in_a_literal_only_up_to_a_boundary_is_forced() -> None:
    skeleton = Skeleton(compile_skeleton(SCHEMA))
    skeleton.feed('{"say": "Sure."')
    assert skeleton.forced() == ', "tool": "'  # the names differ from their first letter
    skeleton.feed(', "tool": "timer_st')
    assert skeleton.forced() == ""  # "timer_start" or "timer_status": the model's to say
    skeleton.feed("a")
    assert skeleton.forced() == ""
    skeleton.feed("t")
    assert skeleton.forced() == 'us", "args": {}}'


def test_an_optional_argument_is_the_models_choice_and_its_value_too() -> None:
    skeleton = Skeleton(compile_skeleton(SCHEMA))
    skeleton.feed('{"say": "Go.", "tool": "timer_start", "args": {"duration_s": 600')
    assert skeleton.forced() == ""  # more digits, the end, or a label
    skeleton.feed(", ")
    assert skeleton.forced() == '"label":'  # the space before the value is left to the model
    skeleton.feed('"label": "pasta"')
    assert skeleton.forced() == "}}"
    skeleton.feed("}}")
    assert skeleton.done


def test_a_reply_in_other_spacing_leaves_the_skeleton_and_nothing_more_is_forced() -> None:
    skeleton = Skeleton(compile_skeleton(SCHEMA))
    skeleton.feed('{"say":"x",')
    assert skeleton.left and skeleton.forced() == "" and not skeleton.done


def test_escapes_and_the_length_cap_of_a_string_are_followed() -> None:
    skeleton = Skeleton(compile_skeleton(SCHEMA))
    skeleton.feed('{"say": "a \\"quoted\\" word')
    assert skeleton.forced() == ""  # still inside the line
    skeleton.feed('"')
    assert skeleton.forced() == ', "tool": "'
    capped = Skeleton(compile_skeleton({"anyOf": [TIMER]}))
    capped.feed('{"say": "' + "x" * 61)
    assert capped.left  # longer than maxLength: not a way TIMER is written


@pytest.mark.parametrize("schema", [
    {"type": "array", "items": {"type": "string"}},
    {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": True},
])
def test_shapes_not_followed_give_no_skeleton(schema: dict) -> None:
    assert compile_skeleton(schema) is None


def test_the_registrys_decision_schema_is_followed() -> None:
    import tempfile
    from pathlib import Path

    from bench.suites.tool_accuracy import build_registry

    registry, _ = build_registry(Path(tempfile.mkdtemp(prefix="hearth-skeleton-")), "en")
    paths = compile_skeleton(registry.for_model().tool_call_schema(max_chars=60))
    assert paths is not None
    skeleton = Skeleton(paths)
    skeleton.feed(json.dumps({"say": "Added.", "tool": "shopping_add", "args": {"item": "milk", "quantity": "2 l"}}))
    assert skeleton.done
