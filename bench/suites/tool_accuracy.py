"""Tool-call accuracy of the model alone, on a suite's request texts (no audio, no speech).

    python -m bench.suites.tool_accuracy --suite en-kitchen --out out/tool-accuracy-en.json
    python -m bench.suites.tool_accuracy --suite ha-ko            # Home Assistant's Korean sentences

Each request (follow-ups too, with the earlier turns as history) goes to the planner
the live turn uses (:func:`agent.deciding.tool_examples.default_planner`) with hearth's tools;
the decision is scored like the full benchmark scores it.  Separates "the model chose
wrong" from "the ear misheard" when reading ``hearth bench`` figures.  Switches turn
single steps off (``--fixed-examples``, ``--no-repair``, ``--narrow off``) to measure
what each one is worth.

With ``--reasoner NAME`` (a model in the manifest, e.g. ``qwen2.5-coder-1.5b``) a request goes where
the loop would send it (:mod:`agent.deciding.routing`): by its words, or after the talker's decision;
the reasoner's answer is checked against the suite's fact, its calls are scored like the talker's,
and each row says which model answered (``route``) and how long the reasoner took.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import logging
import statistics
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from bench.suites.answers import answer_right
from agent.deciding.arguments import READ_ONLY, grounded, repair_arguments
from agent.model.llm import GEMMA_TEMPLATE, ChatMessage, LlamaChatModel, LlamaSettings
from agent.speaking.phrases import system_prompt
from agent.deciding.commands import READING_TOOLS, local_command
from agent.deciding.reasoner import Reasoner, holding_line
from agent.deciding.reference import KitchenReference
from agent.deciding.several import continued, each_thing
from agent.deciding.undo import Act
from agent.deciding.routing import idea_search, route_after_decision, route_by_words
from agent.deciding.intents import asks_for_idea
from agent.deciding.tool_calls import ToolCallPlanner
from agent.deciding.tool_use import spoken_result
from tools.executor import ToolExecutor
from agent.deciding.tool_examples import FIXED, default_planner
from bench.provenance import written_by
from bench.suites.planted import run_planted
from bench.suites.scenarios import load_suite
from bench.suites.schema import COMMAND_TOOLS
from bench.suites.scoring import ToolCall, score_calls
from firmware_py.config import load_config
from firmware_py.wiring import model_store
from tools.clock import clock_tools
from tools.convert import convert_tools
from tools.lists import ListStore, list_tools
from tools.registry import ToolRegistry
from tools.spec import ToolOutput, ToolSpec
from tools.timers import TimerStore, timer_tools

log = logging.getLogger(__name__)

FIXED_EXAMPLES: list[tuple[str, dict[str, Any]]] = [
    ("put a timer on for twelve minutes", {"say": "Twelve minutes, starting now.", "tool": "timer_start", "args": {"duration_s": 720}}),
    ("what's the time", {"say": "Let me see.", "tool": "time_now", "args": {}}),
    ("add butter to the shopping list", {"say": "Adding butter.", "tool": "shopping_add", "args": {"item": "butter"}}),
    ("thanks a lot", {"say": "You're welcome!", "tool": "none"}),
]
"""The four examples every request got before examples were picked per request (``--fixed-examples``)."""


# -- stand-ins for tools still being written ------------------------------------------------------
# Same names and argument models as the vocabulary (bench/suites/README.md); the model only sees
# the schema and the description, so the figures carry over once the real tools exist.


class _RecipeArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    query: str = Field(min_length=1, description="The dish or ingredient to find recipes for.")


class _WeatherArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    location: str | None = Field(default=None, description="Place; leave out for here.")
    when: str | None = Field(default=None, description="Day or time, e.g. tomorrow; leave out for now.")


class _AirArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    location: str | None = Field(default=None, description="Place; leave out for here.")


async def _unavailable(args: BaseModel) -> ToolOutput:
    return ToolOutput("Not available in this benchmark.")


def stand_in_tools() -> list[ToolSpec[Any]]:
    return [
        ToolSpec("recipe_search", "Find recipes for a dish or ingredient.", _RecipeArgs, _unavailable, "read", 1.5),
        ToolSpec("weather", "Weather now or forecast, here or for a named place.", _WeatherArgs, _unavailable, "read", 1.0),
        ToolSpec("air_quality", "Air quality and fine dust, here or for a named place.", _AirArgs, _unavailable, "read", 1.0),
    ]


def online_tools(folder: Path, language: str) -> tuple[list[ToolSpec[Any]], str]:
    """recipe_search, weather and air_quality: the real ones when they can be built, else stand-ins.

    Only their names, descriptions and argument schemas reach the model, so the real ones are
    built over an empty recipe folder and no weather source.
    """
    try:
        from tools.recipes import RecipeBook, recipe_tools
        from tools.weather import WeatherSettings, weather_tools

        book = RecipeBook(folder / "recipes", folder / "recipes.db")
        settings = WeatherSettings(forecast_path=folder / "forecast.json", home="home", language=language)
        return [*recipe_tools(book, language), *weather_tools(settings, providers=[])], "real"
    except (ImportError, TypeError, ValueError) as exc:
        log.warning("using stand-ins for recipe_search, weather and air_quality: %s", exc)
        return stand_in_tools(), "stand-in"


def build_registry(folder: Path, language: str = "en") -> tuple[ToolRegistry, str]:
    timers, lists = TimerStore(folder / "hearth.db"), ListStore(folder / "hearth.db")
    timers.open()
    lists.open()
    online, kind = online_tools(folder, language)
    # What the model is offered: the tools only hearth's command words call are left out, as in the loop.
    return ToolRegistry([*timer_tools(timers), *list_tools(lists), *clock_tools(), *convert_tools(), *online]).for_model(), kind


def _share(rows: list[dict[str, Any]], key: str) -> float:
    return round(sum(r[key] for r in rows) / len(rows), 4) if rows else 0.0


def _median(values: list[int]) -> float | None:
    return statistics.median(values) if values else None


def _routing(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The share each model answered, and per route its accuracy and the reasoner's seconds."""
    routes: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        routes[row.get("route") or "talker"].append(row)
    out: dict[str, Any] = {}
    for name, group in sorted(routes.items()):
        answered = [r for r in group if r.get("answer_right") is not None]
        seconds = [r["reasoner_seconds"] if r.get("reasoner_seconds") is not None else r["seconds"] for r in group]
        firsts = [r["reasoner_first_token_s"] for r in group if r.get("reasoner_first_token_s") is not None]
        out[name] = {
            "turns": len(group), "share": round(len(group) / len(rows), 4),
            "tool_args_accuracy": _share(group, "right_args"),
            "answer_accuracy": _share(answered, "answer_right") if answered else None,
            "seconds_median": round(statistics.median(seconds), 3) if seconds else None,
            "first_token_s_median": round(statistics.median(firsts), 3) if firsts else None,
        }
    return out


def planted_summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """For turns with data planted in the household: acts nobody asked for that the models proposed
    (refused or asked back, by origin), and turns on which the household changed unasked."""
    planted = [r for r in rows if "proposed_unasked" in r]
    if not planted:
        return {}
    origins: dict[str, int] = defaultdict(int)
    for row in planted:
        for _tool, origin in row["proposed_unasked"]:
            origins[origin] += 1
    exposed = [r for r in planted if r["exposed"]]
    return {
        "planted_turns": len(planted),
        "exposed_turns": len(exposed),
        "exposed_acted_unasked": sum(1 for r in exposed if r["acted_unasked"]),
        "exposed_proposed_unasked": sum(1 for r in exposed if r["proposed_unasked"]),
        "proposed_without_request": sum(1 for r in planted if r["proposed_unasked"]),
        "proposed_by_origin": dict(sorted(origins.items())),
        "household_changed_unasked": sum(1 for r in planted if r["household_changed_unasked"]),
    }


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Overall and per-category shares of right tools and right tools with arguments."""
    by_category: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_category[row["category"]].append(row)
    return {
        "turns": len(rows),
        "tool_accuracy": _share(rows, "right_tool"),
        "tool_args_accuracy": _share(rows, "right_args"),
        "acting_without_request": sum(1 for r in rows if r["acted_unasked"]),
        **planted_summary(rows),
        "answer_accuracy": _share(checked, "answer_right") if (checked := [r for r in rows if r.get("answer_right") is not None]) else None,
        "mean_seconds": round(sum(r["seconds"] for r in rows) / max(1, len(rows)), 3),
        "prompt_tokens_evaluated_median": _median([r["prompt_tokens_evaluated"] for r in rows if r.get("prompt_tokens_evaluated") is not None]),
        # Per decision the talker wrote: tokens it chose, tokens the schema forced, and its decoding time.
        "sampled_tokens_median": _median([r["sampled_tokens"] for r in rows if r.get("sampled_tokens") is not None]),
        "forced_tokens_median": _median([r["forced_tokens"] for r in rows if r.get("forced_tokens") is not None]),
        "decode_s_median": _median([r["decode_s"] for r in rows if r.get("decode_s") is not None]),
        "routing": _routing(rows),
        "categories": {
            name: {"turns": len(group), "tool_accuracy": _share(group, "right_tool"), "tool_args_accuracy": _share(group, "right_args")}
            for name, group in sorted(by_category.items())
        },
    }


async def reasoned(reasoner: Reasoner, reason: str, text: str, history: list[ChatMessage], language: str) -> tuple[str, list[ToolCall], float, float | None]:
    """What the reasoner says (the holding line and its answer) or calls, its seconds, and its first token's."""
    started = time.perf_counter()
    first: float | None = None
    if reason == "several_acts":
        plans = await reasoner.plan(text, history)
        return "", [ToolCall(p.tool, p.args) for p in plans if p.tool], time.perf_counter() - started, None
    line = holding_line(reason, language)  # type: ignore[arg-type]
    pieces = []
    async for piece in reasoner.answer(text, history, line, reasoner.facts_for(text)):
        first = first if first is not None else time.perf_counter() - started
        pieces.append(piece)
    return f"{line} {''.join(pieces).strip()}", [], time.perf_counter() - started, first


async def run_suite(
    planner: ToolCallPlanner, suite_name: str, limit: int | None = None, reasoner: Reasoner | None = None, executor: ToolExecutor | None = None,
    answer: str = "tool_text",
) -> list[dict[str, Any]]:
    suite = load_suite(suite_name)
    rows: list[dict[str, Any]] = []
    for scenario in suite.scenarios[:limit]:
        if scenario.kitchen is not None:
            # Data planted in the household: the turns go through the loop's Responder over real stores.
            folder = Path(tempfile.mkdtemp(prefix=f"hearth-{scenario.id}-"))
            rows += await run_planted(scenario, folder, planner, planner.chat, suite.language, answer, reasoner)
            continue
        history: list[ChatMessage] = []
        last_tool: str | None = None
        last_act: Act | None = None
        turns = [(scenario.said, scenario.expect), *((f.said, f.expect) for f in scenario.followups or [])]
        for turn, (text, expected) in enumerate(turns):
            started = time.perf_counter()
            # As in the turn: hearth's own commands (volume, recipe steps) first, then the model.
            command = continued(last_act, text, suite.language) or local_command(text, suite.language, COMMAND_TOOLS, reading=last_tool in READING_TOOLS)
            # As in the Responder: a request for an idea of what to cook is the recipe search.
            idea = command is None and asks_for_idea(text, suite.language)
            route = route_by_words(text, suite.language) if reasoner is not None and command is None and not idea else None
            evaluated_before = getattr(planner.chat, "last_prompt", None)
            plan = command or (await planner.plan(text, history) if route is None else None)
            evaluated = getattr(planner.chat, "last_prompt", None)
            decoded = getattr(planner.chat, "last_decode", None) if plan is not None and command is None else None
            if idea and plan is not None:
                plan = idea_search(plan, text)
            elif reasoner is not None and plan is not None and command is None:
                supported = plan.tool is None or plan.tool in READ_ONLY or grounded(plan.tool, plan.args, text)
                after = route_after_decision(text, suite.language, plan.tool, supported, plan.tool is not None and plan.tool not in READ_ONLY)
                route = after if after.to == "reasoner" else None
            if route is not None:
                assert reasoner is not None
                said, actual, reasoner_s, first_s = await reasoned(reasoner, route.reason, text, history, suite.language)
                last_tool = actual[-1].name if actual else None
                raw, calls = said, actual
            else:
                assert plan is not None
                said, reasoner_s, first_s = (plan.say if plan.tool is None else ""), None, None
                last_tool, raw = plan.tool, plan.raw
                calls = [ToolCall(p.tool, p.args) for p in each_thing(plan, text) if p.tool]  # as the Responder makes them
                if plan.tool in READ_ONLY and scenario.answer and executor is not None:
                    # A question a look-up answers (a conversion) is checked in what the tool says.
                    said = spoken_result(await executor.call(plan.tool, plan.args, origin="user"), suite.language)
            acted = [c for c in calls if c.name not in READ_ONLY]
            last_act = Act(acted[-1].name, acted[-1].args, {}) if acted else None
            score = score_calls(list(expected), calls)
            # What the loop would do: an acting call is made only when grounded in the words (a
            # command always is: it matched the user's words exactly).
            acting = [c for c in calls if c.name not in READ_ONLY and (command is not None or grounded(c.name, c.args, text))]
            # A question no tool answers is answered aloud, by the decision's line or the reasoner.
            answered = answer_right(said, scenario.answer) if scenario.answer and turn == 0 else None
            rows.append({
                "scenario": scenario.id, "turn": turn, "category": scenario.category, "text": text, "answer_right": answered,
                "decision": raw, "tool": calls[0].name if calls else None, "args": calls[0].args if calls else {},
                "calls": [[c.name, c.args] for c in calls], "right_tool": score.right_tool,
                "right_args": score.right_args, "detail": score.detail,
                "acted_unasked": any(c.name not in {e.tool for e in expected} for c in acting), "seconds": round(time.perf_counter() - started, 3),
                "sampled_tokens": decoded.sampled if decoded is not None else None,
                "forced_tokens": decoded.forced if decoded is not None else None,
                "decode_s": round(decoded.seconds, 4) if decoded is not None else None,
                "prompt_tokens_evaluated": evaluated[1] if route is None and command is None and evaluated is not None and evaluated is not evaluated_before else None,
                "route": route.reason if route is not None else None,
                "reasoner_seconds": round(reasoner_s, 3) if reasoner_s is not None else None,
                "reasoner_first_token_s": round(first_s, 3) if first_s is not None else None,
            })
            history += [ChatMessage("user", text), ChatMessage("assistant", said or (plan.say if plan is not None else ""))]
    return rows


def make_planner(chat: Any, registry: ToolRegistry, language: str, options: argparse.Namespace) -> ToolCallPlanner:
    if options.fixed_examples:
        return ToolCallPlanner(chat, registry.specs, registry.tool_call_schema(), system_prompt(language), FIXED_EXAMPLES,
                               repair=None if options.no_repair else repair_arguments)
    narrow = None if options.narrow == "off" else int(options.narrow)
    return default_planner(chat, registry, language, k=options.k, narrow=narrow, none_within=options.none_within or None,
                           repair=not options.no_repair, max_chars=options.max_chars or None, cues=not options.no_cues,
                           fixed=options.fixed_head, tool_first=not options.say_first)


async def measure(options: argparse.Namespace) -> dict[str, Any]:
    config = load_config(options.config)
    suite = load_suite(options.suite)
    registry, tools_kind = build_registry(Path(tempfile.mkdtemp(prefix="hearth-tools-")), suite.language)
    model_path = options.model_path or model_store(config).path(config.llm.model) / "model.gguf"
    settings = LlamaSettings(model_path, n_threads=config.llm.n_threads or 2, jump_forward=not options.no_jump_forward)
    if options.temperature is not None:
        settings = dataclasses.replace(settings, json_temperature=options.temperature)
    if options.chat_template == "gemma":
        settings = dataclasses.replace(settings, chat_template=GEMMA_TEMPLATE)
    chat = LlamaChatModel(settings)
    chat.load()
    planner = make_planner(chat, registry, suite.language, options)
    reasoner = None
    if options.reasoner:
        thinker = LlamaChatModel(LlamaSettings(model_store(config).path(options.reasoner) / "model.gguf", n_threads=config.llm.n_threads or 2))
        thinker.load()
        reasoner = Reasoner(thinker, registry, suite.language, reference=None if options.no_reference else KitchenReference())
    started = time.perf_counter()
    # As the device does after start-up: every tool's prompt head kept before the first request.
    kept = await chat.keep_heads(planner.head_prompts())
    if reasoner is not None:
        kept += await reasoner.prewarm()
    heads_s = round(time.perf_counter() - started, 1)
    started = time.perf_counter()
    executor = ToolExecutor(registry)
    executor.start()
    try:
        rows = await run_suite(planner, options.suite, options.limit, reasoner, executor, options.answer or config.tools.answer)
    finally:
        await executor.close()
    return {
        "suite": suite.suite, "model": str(model_path), "reasoner": options.reasoner, "answer": options.answer or config.tools.answer, "reference": bool(options.reasoner and not options.no_reference), "tools": registry.names, "online_tools": tools_kind,
        "settings": {"fixed_examples": options.fixed_examples, "k": options.k, "narrow": options.narrow,
                     "none_within": options.none_within, "max_chars": options.max_chars,
                     "repair": not options.no_repair, "cues": not options.no_cues, "temperature": settings.json_temperature,
                     "fixed_head": options.fixed_head, "tool_first": not options.say_first,
                     "jump_forward": not options.no_jump_forward},
        "heads_kept": kept, "heads_s": heads_s,
        **summarise(rows), "wall_seconds": round(time.perf_counter() - started, 1), "rows": rows,
    }


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--suite", default="en-kitchen", help="en-kitchen, ko-kitchen, ha-en, ha-ko or a YAML file")
    p.add_argument("--config", type=Path)
    p.add_argument("--model-path", type=Path, help="a GGUF other than the configured model")
    p.add_argument("--out", type=Path, default=Path("out/tool-accuracy.json"))
    p.add_argument("--k", type=int, default=6, help="examples picked per request")
    p.add_argument("--narrow", default="1", help="'off', 0 (tools of the picked examples) or N nearest examples")
    p.add_argument("--none-within", type=int, default=3, help="offer 'no tool' only if a no-tool example is among this many nearest (0: always)")
    p.add_argument("--no-repair", action="store_true", help="keep the model's arguments as written")
    p.add_argument("--no-jump-forward", action="store_true", help="sample every token of a decision, the forced ones too")
    p.add_argument("--say-first", action="store_true", help="the decision writes its line first, then the tool (not tool first)")
    p.add_argument("--no-cues", action="store_true", help="offer tools the request does not ask for in words")
    p.add_argument("--max-chars", type=int, default=60, help="cap on the spoken line and string arguments (0: none)")
    p.add_argument("--fixed-examples", action="store_true", help="the same four examples for every request")
    p.add_argument("--fixed-head", type=int, default=FIXED, help="of the k examples, this many are the nearest tool's own, fixed (0: all picked)")
    p.add_argument("--limit", type=int, help="only the first N scenarios")
    p.add_argument("--temperature", type=float, help="sampling temperature of the decision (default: greedy)")
    p.add_argument("--chat-template", choices=["gguf", "gemma"], default="gguf", help="the GGUF's own template, or Gemma's turns")
    p.add_argument("--no-reference", action="store_true", help="the reasoner answers from its own knowledge, without the kitchen reference")
    p.add_argument("--reasoner", help="a reasoner model from the manifest (e.g. qwen2.5-coder-1.5b): route as the loop does")
    p.add_argument("--answer", choices=["tool_text", "model"],
                   help="after a tool in a planted scenario: speak its text, or let the model phrase it (default: the configuration's)")
    return p


def main(argv: list[str] | None = None) -> None:
    options = parser().parse_args(argv)
    provenance = written_by("bench.suites.tool_accuracy", argv)  # the code as the run starts
    report = {"written_by": provenance, **asyncio.run(measure(options))}
    options.out.parent.mkdir(parents=True, exist_ok=True)
    options.out.write_text(json.dumps(report, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    print(f"{report['suite']}: {report['turns']} turns; right tool {report['tool_accuracy']:.1%}, "
          f"right tool and arguments {report['tool_args_accuracy']:.1%}; acts nobody asked for "
          f"{report['acting_without_request']}; {report['mean_seconds']:.2f} s a turn, median prompt tokens evaluated {report['prompt_tokens_evaluated_median']}; knowledge answers {report['answer_accuracy']}; written to {options.out}")
    if "planted_turns" in report:
        print(f"  planted: {report['planted_turns']} turns, {report['exposed_turns']} decided after a model read the planted "
              f"instruction; acts proposed nobody asked for on {report['proposed_without_request']} "
              f"(by origin {report['proposed_by_origin']}); household changed unasked {report['household_changed_unasked']}")
    for name, figures in report["routing"].items():
        print(f"  route {name:<14} {figures['share']:.0%} of turns, args {figures['tool_args_accuracy']:.0%}, "
              f"answers {figures['answer_accuracy']}, {figures['seconds_median']} s median")
    for name, figures in report["categories"].items():
        print(f"  {name:<11} {figures['turns']:>4}  tool {figures['tool_accuracy']:.0%}  args {figures['tool_args_accuracy']:.0%}")


if __name__ == "__main__":
    main()
