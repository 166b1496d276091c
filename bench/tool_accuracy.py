"""Tool-call accuracy of the model alone, on a suite's request texts (no audio, no speech).

    python -m bench.tool_accuracy --suite en-kitchen --out out/tool-accuracy-en.json

Each request (follow-ups too, with the earlier turns as history) goes to the
grammar-constrained planner with hearth's installed tools; the decision is
scored like the full benchmark scores it.  Separates "the model chose wrong"
from "the ear misheard" when reading ``hearth bench`` figures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from agent.llm import ChatMessage, LlamaChatModel, LlamaSettings
from agent.phrases import system_prompt
from agent.tool_calls import ToolCallPlanner
from bench.scenarios import load_suite
from bench.scoring import ToolCall, score_calls
from firmware_py.config import load_config
from firmware_py.wiring import model_store
from tools.clock import clock_tools
from tools.convert import convert_tools
from tools.lists import ListStore, list_tools
from tools.registry import ToolRegistry
from tools.timers import TimerStore, timer_tools

# Given as chat turns; deliberately not taken from any suite.
EXAMPLES: list[tuple[str, dict[str, Any]]] = [
    ("put a timer on for twelve minutes", {"say": "Twelve minutes, starting now.", "tool": "timer_start", "args": {"duration_s": 720}}),
    ("what's the time", {"say": "Let me see.", "tool": "time_now", "args": {}}),
    ("add butter to the shopping list", {"say": "Adding butter.", "tool": "shopping_add", "args": {"item": "butter"}}),
    ("thanks a lot", {"say": "You're welcome!", "tool": "none"}),
]


async def measure(suite_name: str, config_path: Path | None) -> dict[str, Any]:
    config = load_config(config_path)
    suite = load_suite(suite_name)
    folder = Path(tempfile.mkdtemp(prefix="hearth-tools-"))
    timers, lists = TimerStore(folder / "hearth.db"), ListStore(folder / "hearth.db")
    timers.open()
    lists.open()
    registry = ToolRegistry([*timer_tools(timers), *list_tools(lists), *clock_tools(), *convert_tools()])
    chat = LlamaChatModel(LlamaSettings(model_store(config).path(config.llm.model) / "model.gguf", n_threads=config.llm.n_threads))
    chat.load()
    planner = ToolCallPlanner(chat, registry.specs, registry.tool_call_schema(), system_prompt(suite.language), EXAMPLES)
    rows = []
    for scenario in suite.scenarios:
        history: list[ChatMessage] = []
        for turn, (text, expected) in enumerate([(scenario.text, scenario.expect), *((f.text, f.expect) for f in scenario.followups or [])]):
            started = time.perf_counter()
            plan = await planner.plan(text, history)
            actual = [ToolCall(plan.tool, plan.args)] if plan.tool else []
            score = score_calls(list(expected), actual)
            rows.append({
                "scenario": scenario.id, "turn": turn, "category": scenario.category, "text": text,
                "decision": plan.raw, "right_tool": score.right_tool, "right_args": score.right_args,
                "detail": score.detail, "seconds": round(time.perf_counter() - started, 3),
            })
            history += [ChatMessage("user", text), ChatMessage("assistant", plan.say)]
    share = lambda key: round(sum(r[key] for r in rows) / len(rows), 4)  # noqa: E731
    return {
        "suite": suite.suite, "model": config.llm.model, "tools": registry.names, "turns": len(rows),
        "tool_accuracy": share("right_tool"), "tool_args_accuracy": share("right_args"), "rows": rows,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suite", default="en-kitchen")
    parser.add_argument("--config", type=Path)
    parser.add_argument("--out", type=Path, default=Path("out/tool-accuracy.json"))
    args = parser.parse_args()
    report = asyncio.run(measure(args.suite, args.config))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    print(f"{report['suite']}: {report['turns']} turns; right tool {report['tool_accuracy']:.1%}, "
          f"right tool and arguments {report['tool_args_accuracy']:.1%}; written to {args.out}")


if __name__ == "__main__":
    main()
