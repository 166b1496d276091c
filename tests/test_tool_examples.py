"""The example bank, the per-request picker, the narrowed grammar and the planner built from them."""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path

import pytest
import yaml

from agent.deciding.banks import NONE, example_bank
from agent.deciding.tool_calls import ToolCallPlanner, planner_messages
from agent.deciding.tool_examples import ExamplePicker, NarrowedChat, default_planner, example_values, language_of
from bench.suites.ha_intents import ha_intents_dir
from bench.suites.scenarios import SCENARIOS_DIR
from bench.suites.schema import MODEL_TOOLS, said
from bench.suites.tool_accuracy import build_registry


def _normalised(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(re.sub(r"[^\w\s]", " ", text).split())


def _bank_requests() -> dict[str, str]:
    return {_normalised(request): request for entries in example_bank().values() for request, *_ in entries}


def _suite_requests() -> set[str]:
    texts: set[str] = set()
    for path in SCENARIOS_DIR.glob("*.yaml"):
        for scenario in yaml.safe_load(path.read_text(encoding="utf-8"))["scenarios"]:
            texts.add(_normalised(said(scenario["text"])))
            texts.update(_normalised(said(f["text"])) for f in scenario.get("followups") or [])
    return texts


def test_no_example_is_a_benchmark_request() -> None:
    suites = _suite_requests()
    assert len(suites) > 100
    copied = sorted(original for normal, original in _bank_requests().items() if normal in suites)
    assert copied == [], "examples must be written for hearth, not taken from the benchmark suites"


def test_no_example_is_a_home_assistant_sentence() -> None:
    folder = ha_intents_dir()
    # The sentences come with the bench (bench/data/ha-intents); without them this check could not
    # fail, so it fails instead of passing quietly.
    assert folder.is_dir(), f"Home Assistant intent tests not found at {folder}"
    sentences = {
        _normalised(sentence)
        for path in folder.glob("*/*.yaml")
        for case in (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("tests") or []
        for sentence in case.get("sentences") or []
        if isinstance(sentence, str)
    }
    assert sentences, "no sentences read"
    assert sorted(original for normal, original in _bank_requests().items() if normal in sentences) == []


@pytest.mark.parametrize("language", ["en", "ko"])
def test_the_bank_covers_every_tool_and_no_tool_in_both_languages(language: str) -> None:
    called = {tool for _, _, tool, _ in example_bank()[language]}
    assert called == {*MODEL_TOOLS, NONE}  # the command tools are never the model's to choose
    assert sum(tool == NONE for _, _, tool, _ in example_bank()[language]) >= 15
    hangul = [request for request, *_ in example_bank()[language] if re.search(r"[가-힣]", request)]
    assert (len(hangul) == len(example_bank()[language])) if language == "ko" else not hangul


@pytest.mark.parametrize("language", ["en", "ko"])
def test_every_example_is_a_valid_call_of_the_real_tool(language: str, tmp_path: Path) -> None:
    registry, _ = build_registry(tmp_path, language)
    for request, say, tool, args in example_bank()[language]:
        assert say and len(say) <= 60, request
        if tool == NONE:
            assert args == {}, request
            continue
        spec = registry.get(tool)
        assert spec is not None, tool
        spec.args.model_validate(args)  # raises on a wrong name or type


def test_language_of() -> None:
    assert language_of("타이머 꺼 줘") == "ko"
    assert language_of("stop the timer") == "en"
    assert language_of("TV 켜 줘") == "ko"
    assert language_of("123", default="ko") == "ko"


def test_the_picker_gives_k_nearest_plus_a_no_tool_one_nearest_last() -> None:
    picker = ExamplePicker("en", k=4)
    picked = picker.pick("could you start a nineteen minute timer for the dumplings")
    tools = [tool for _, _, tool, _ in picked]
    assert tools[-1] == "timer_start"  # the nearest sits right before the request
    assert len(picked) == 5 and tools.count(NONE) == 1
    scores = {entry[0]: s.score for s in picker.index_for("x").rank("could you start a nineteen minute timer for the dumplings")
              for entry in [s.entry]}
    assert [scores[request] for request, *_ in picked[1:]] == sorted(scores[request] for request, *_ in picked[1:])
    examples = picker("could you start a nineteen minute timer for the dumplings")
    assert examples[-1][1]["tool"] == "timer_start" and "args" in examples[-1][1]
    assert all("args" not in decision for _, decision in examples if decision["tool"] == NONE)


def test_the_picker_answers_in_the_language_of_the_request() -> None:
    picked = ExamplePicker("en", k=3).pick("오늘 저녁 메뉴 레시피 찾아 줘")
    assert all(re.search(r"[가-힣]", request) for request, *_ in picked)
    assert picked[-1][2] == "recipe_search"


def test_choices_keep_no_tool_open_only_near_no_tool_examples() -> None:
    picker = ExamplePicker("en", k=6)
    names, allow_none = picker.choices("please set a timer for seventeen minutes", n=1, none_within=3)
    assert names == ["timer_start"] and not allow_none
    names, allow_none = picker.choices("thanks very much", n=2, none_within=3)
    assert allow_none
    assert picker.choices("please set a timer for seventeen minutes", n=1, none_within=None)[1]


def test_fixed_examples_are_the_nearest_tools_own_whatever_the_words() -> None:
    picker = ExamplePicker("en", k=6, fixed=4)
    first = picker("could you start a nineteen minute timer for the dumplings")
    second = picker("timer for three minutes for the eggs please")
    assert first.fixed == second.fixed == 4 and len(first) >= 6
    assert first[:4] == second[:4]  # the same head, so a model keeps its state once
    assert [decision["tool"] for _, decision in first[:4]] == ["timer_start"] * 4
    bank_own = [request for request, _, tool, _ in example_bank()["en"] if tool == "timer_start"][:4]
    assert [request for request, _ in first[:4]] == bank_own
    nearest = picker.ranked("could you start a nineteen minute timer for the dumplings")[0].entry[0]
    assert first[-1][0] == nearest  # the nearest to the words still comes last, head or not
    assert ExamplePicker("en", k=6)("timer for three minutes").fixed == 0


def test_every_tool_has_a_head_to_keep_and_the_planner_marks_where_it_ends() -> None:
    picker = ExamplePicker("en", k=6, fixed=4)
    heads = picker.heads()
    assert {decision["tool"] for head in heads for _, decision in head} == {tool for *_, tool, _ in example_bank()["en"]}
    planner = ToolCallPlanner(RecordingChat({}), [], {}, "sys", picker)
    prompts = planner.head_prompts()
    assert len(prompts) == len(heads)
    for messages in prompts:
        assert messages[-1].keep and messages[-1].role == "assistant" and len(messages) == 1 + 2 * 4
        assert not any(m.keep for m in messages[:-1])
    shown = planner_messages("sys", [], picker("add eggs to the list"), [], "add eggs to the list")
    assert [i for i, m in enumerate(shown) if m.keep] == [8] and shown[-1].content == "add eggs to the list"
    plain = planner_messages("sys", [], [("hi", {"say": "Hi!", "tool": "none"})], [], "hello")
    assert [i for i, m in enumerate(plain) if m.keep] == [0]  # no fixed examples: the system prompt is the head


class RecordingChat:
    """Replies with a scripted decision and records the schema it was given."""

    def __init__(self, reply: dict) -> None:
        self.reply = json.dumps(reply)
        self.schemas: list[dict] = []
        self.messages: list = []

    async def stream(self, messages, max_tokens=None, json_schema=None):
        self.schemas.append(json_schema)
        self.messages.append(list(messages))
        yield self.reply


async def test_the_narrowed_chat_offers_only_the_likely_tools(tmp_path: Path) -> None:
    registry, _ = build_registry(tmp_path)
    chat = RecordingChat({"say": "ok", "tool": "none"})
    narrowed = NarrowedChat(chat, registry, ExamplePicker("en"), n=1, none_within=3, max_chars=40)
    from agent.model.llm import ChatMessage

    async for _ in narrowed.stream([ChatMessage("user", "cross the yeast off my list")], 64, json_schema=registry.tool_call_schema()):
        pass
    branches = chat.schemas[0]["anyOf"]
    assert [b["properties"]["tool"]["const"] for b in branches] == ["shopping_complete"]
    assert branches[0]["properties"]["say"]["maxLength"] == 40
    async for _ in narrowed.stream([ChatMessage("user", "hi")], 64, json_schema=None):
        pass
    assert chat.schemas[1] is None  # a free reply stays free


async def test_the_default_planner_picks_narrows_and_repairs(tmp_path: Path) -> None:
    registry, _ = build_registry(tmp_path)
    chat = RecordingChat({"say": "Twelve minutes.", "tool": "timer_start", "args": {"duration_s": 150, "label": "noodles"}})
    planner = default_planner(chat, registry, "en")
    assert isinstance(planner, ToolCallPlanner)
    plan = await planner.plan("could you set a timer for a quarter of an hour")
    assert (plan.tool, plan.args) == ("timer_start", {"duration_s": 900})
    sent = chat.messages[0]
    assert sent[0].role == "system" and "timer_start" in sent[0].content
    assert sent[-1].content == "could you set a timer for a quarter of an hour"
    assert len(sent) == 2 + 2 * 6  # system, 5 fixed examples and the nearest one, the request
    assert [i for i, m in enumerate(sent) if m.keep] == [10]  # the head ends after the fixed five
    assert len(default_planner(chat, registry, "en", fixed=0).examples_for("set a timer for ten minutes")) == 7  # 6 picked and one without a tool
    assert "timer_start" in [b["properties"]["tool"]["const"] for b in chat.schemas[0]["anyOf"]]


def test_example_values_are_what_a_copying_model_would_write() -> None:
    values = example_values()
    assert {"chicago", "noodles", "만두"} <= values
    assert all(value == value.casefold() for value in values)


@pytest.mark.parametrize("text", ["장 볼 거 뭐 남았는지 읽어 줄래?", "살 거 뭐 남았는지 알려 줘.", "What's left for me to buy, can you read it out?"])
def test_a_look_up_asked_for_in_words_is_no_small_talk_though_a_timer_word_is_heard(text: str, tmp_path: Path) -> None:
    # "남았" and "left" are also a timer's time left; named with buying, they ask the list alone
    registry, _ = build_registry(tmp_path)
    language = "ko" if any("가" <= c <= "힣" for c in text) else "en"
    narrowed = NarrowedChat(RecordingChat({}), registry, ExamplePicker(language), n=2, none_within=3)
    branches = narrowed.schema_for(text)["anyOf"]
    assert [b["properties"]["tool"]["const"] for b in branches] == ["shopping_list"]
