"""The injection suites' kitchens, planted and played through the Responder on text (bench.suites.planted).

A model that decides exactly what each turn expects stands in for the real one, so every turn must
come out right: the recipes are found and read, a step's time is offered and a yes starts it, the
list and the forecast answer from what was planted, and nothing changes that the turn did not ask
for. The real models' figures come from ``python -m bench.suites.tool_accuracy --suite injection-en``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from agent.deciding.tool_examples import default_planner
from agent.model.llm import ChatMessage
from bench.suites.planted import run_planted
from bench.suites.scenarios import load_suite
from bench.suites.schema import Scenario
from bench.suites.tool_accuracy import build_registry, planted_summary


class ExpectedChat:
    """Decides, for each request of one scenario, the first call the scenario expects of it."""

    def __init__(self, scenario: Scenario) -> None:
        turns = [(scenario.said, scenario.expect), *((f.said, f.expect) for f in scenario.followups)]
        self.calls = {text: (expect[0].tool, dict(expect[0].args)) if expect else ("none", {}) for text, expect in turns}

    async def warm(self, system_prompt: str) -> None:
        pass

    async def stream(self, messages: Sequence[ChatMessage], max_tokens: int | None = None,
                     json_schema: dict[str, Any] | None = None, **_options: Any) -> AsyncIterator[str]:
        if json_schema is None:
            yield "Here you go."
            return
        tool, args = self.calls.get(messages[-1].content, ("none", {}))
        yield json.dumps({"say": "Okay." if tool == "none" else "", "tool": tool, "args": args}, ensure_ascii=False)
        await asyncio.sleep(0)


@pytest.mark.parametrize("suite_name", ["injection-en", "injection-ko"])
async def test_every_planted_scenario_comes_out_as_expected_with_a_model_that_decides_right(suite_name: str, tmp_path: Path) -> None:
    suite = load_suite(suite_name)
    registry, _ = build_registry(tmp_path / "registry", suite.language)
    rows: list[dict[str, Any]] = []
    for scenario in suite.scenarios:
        assert scenario.kitchen is not None, scenario.id
        chat = ExpectedChat(scenario)
        planner = default_planner(chat, registry, suite.language)
        rows += await run_planted(scenario, tmp_path / scenario.id, planner, chat, suite.language)
    for row in rows:
        expected = next(s for s in suite.scenarios if s.id == row["scenario"])
        wanted = ([expected.expect] + [f.expect for f in expected.followups])[row["turn"]]
        assert not row["acted_unasked"] and not row["household_changed_unasked"], row
        if len(wanted) <= 1:
            assert row["right_tool"] and row["right_args"], row
        assert all(status != "error" for _, _, status, _ in row["calls"]), row
        if row["answer_right"] is not None:
            assert row["answer_right"], row
    for scenario in suite.scenarios:
        # Every planted instruction is read back to a model before some turn, but a note's: no tool reads notes.
        exposed = any(r["exposed"] for r in rows if r["scenario"] == scenario.id)
        assert exposed == (scenario.kitchen.instruction is not None and not scenario.kitchen.notes), scenario.id  # type: ignore[union-attr]
    offered = next(r for r in rows if r["scenario"] == "recipe-offer-yes" and r["turn"] == 2)
    assert offered["calls"] == [["timer_start", offered["calls"][0][1], "ok", "offer"]]
    assert planted_summary(rows)["household_changed_unasked"] == 0
