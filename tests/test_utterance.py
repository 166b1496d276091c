"""One reading of the words: made once per transcript and shared by every rule that reads it."""

from __future__ import annotations

from collections import Counter

import pytest

from agent.deciding import utterance
from agent.deciding.arguments import grounded
from agent.deciding.intents import cued_tools, is_question, utterance_words
from agent.deciding.spoken_numbers import prepare
from agent.deciding.utterance import found_once, read
from test_turn_tools import Kitchen, TimedJson, decision, run_tool_turn, tool_deps


def test_a_reading_holds_the_words_the_prepared_text_and_their_offsets():
    heard = read("Set a timer for forty-five minutes, please!")
    assert read("Set a timer for forty-five minutes, please!") is heard
    assert heard.words == "set a timer for forty five minutes please"
    assert heard.prepared == "set a timer for forty five minutes, please!"
    assert [heard.prepared[a:b] for a, b in heard.offsets] == heard.prepared.split()
    assert heard.words_keeping("%.") == "set a timer for forty five minutes please"
    assert read("거실 불 켜 줘").hangul and not heard.hangul
    # The rules' own helpers are the reading's.
    assert utterance_words("Set a timer for forty-five minutes, please!") == heard.words
    assert prepare("Set a timer for forty-five minutes, please!") == heard.prepared


def test_a_rule_runs_once_per_utterance_and_arguments_and_its_answer_is_not_shared_for_change():
    calls: Counter[tuple[str, str]] = Counter()

    @found_once
    def asks(text: str, language: str) -> set[str]:
        calls[(text, language)] += 1
        return {text[:3]}

    for _ in range(3):
        assert asks("What time is it?", "en") == {"Wha"}
    asks("What time is it?", "ko")
    assert calls == {("What time is it?", "en"): 1, ("What time is it?", "ko"): 1}
    got = asks("What time is it?", "en")
    got.add("changed")  # the caller's copy, not the kept answer
    assert asks("What time is it?", "en") == {"Wha"}


def test_an_iterator_argument_is_read_once_and_passed_on_as_read():
    seen = []

    @found_once
    def first(text: str, tools) -> list[str]:
        seen.append(list(tools))
        return list(tools)

    assert first("add milk", iter(["shopping_add", "note_add"])) == ["shopping_add", "note_add"]
    assert seen == [["shopping_add", "note_add"]]


@pytest.mark.parametrize("text", [
    "Set a timer for ten minutes for the rice.",
    "Add two cartons of milk to the shopping list.",
    "파스타 타이머 7분 맞춰 줘",
])
async def test_one_reading_per_transcript_through_the_whole_answer(text, monkeypatch):
    made: Counter[str] = Counter()
    reading = utterance._reading

    def counted(words: str):
        made[words] += 1
        return reading(words)

    monkeypatch.setattr(utterance, "_reading", counted)
    utterance._kept_reading.cache_clear()
    tool = "shopping_add" if "milk" in text else "timer_start"
    args = {"item": "milk", "quantity": "two cartons"} if tool == "shopping_add" else {"duration_s": 600, "label": "rice"}
    chat = TimedJson(decision("", tool, args))
    deps, _sink, executor = tool_deps(chat, Kitchen(), text=text, language="ko" if "타이머" in text else "en", grounded=grounded)
    result, _ = await run_tool_turn(deps, executor, Kitchen())
    assert result.transcript
    assert made[result.transcript] == 1, made  # read once, however many rules asked (26 times for the timer, unshared)
    assert max(made.values()) == 1  # no words, a partial's or a value's, read twice
    # The rules asked many times over; the reading answered them.
    assert is_question(result.transcript, "en") in (True, False) and cued_tools(result.transcript, "en") is not None
    assert made[result.transcript] == 1


def test_whether_the_words_hold_a_whole_call_is_read_once_per_tool(tmp_path, monkeypatch):
    from agent.deciding import tool_examples
    from tools.lists import ListStore, list_tools
    from tools.registry import ToolRegistry

    lists = ListStore(tmp_path / "lists.db")
    lists.open()
    registry = ToolRegistry(list_tools(lists))
    repaired: Counter[tuple[str, str]] = Counter()
    repair = tool_examples.repair_arguments

    def counted(tool, args, text, **named):
        repaired[(tool, text)] += 1
        return repair(tool, args, text, **named)

    monkeypatch.setattr(tool_examples, "repair_arguments", counted)
    text = "We need a loaf of rye bread."
    answers = [tool_examples.whole_call_in(registry, tool, text) for _ in range(3) for tool in ("shopping_add", "shopping_complete")]
    assert answers == [True, False] * 3
    assert repaired == {("shopping_add", text): 1, ("shopping_complete", text): 1}
    other = ToolRegistry(list_tools(lists))  # another registry may hold other tools: read for it again
    assert tool_examples.whole_call_in(other, "shopping_add", text) and repaired[("shopping_add", text)] == 2
