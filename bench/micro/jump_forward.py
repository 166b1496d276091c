"""How much sooner a tool decision is made when what its schema forces is evaluated in one batch,
measured interleaved against sampling every token.

    python -m bench.micro.jump_forward --suite en-kitchen --limit 40 --out out/jump-forward.json

Two copies of the talker run the same decisions (the planner's own prompts, examples and
narrowed grammars) in alternating order, so machine load falls on both alike.  Reports per
decision the tokens the model chose and the tokens the schema forced, the time of the whole
decision and of its decoding alone (after the first piece), and whether both wrote the same
decision.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import statistics
import tempfile
from pathlib import Path
from typing import Any

from agent.deciding.tool_calls import planner_messages
from agent.deciding.tool_examples import ExamplePicker, NarrowedChat
from agent.model.llm import LlamaChatModel, LlamaSettings
from agent.speaking.phrases import system_prompt
from bench.micro.grammar_speed import _timed
from bench.provenance import git_commit, written_by
from bench.suites.scenarios import load_suite
from bench.suites.tool_accuracy import build_registry
from firmware_py.config import load_config
from firmware_py.wiring import model_store


async def measure(options: argparse.Namespace) -> dict[str, Any]:
    config = load_config(options.config)
    suite = load_suite(options.suite)
    registry, _ = build_registry(Path(tempfile.mkdtemp(prefix="hearth-jump-")), suite.language)
    model = options.model or config.llm.model
    settings = LlamaSettings(model_store(config).path(model) / "model.gguf", n_threads=config.llm.n_threads or 2)
    token_by_token, jumping = LlamaChatModel(dataclasses.replace(settings, jump_forward=False)), LlamaChatModel(settings)
    token_by_token.load()
    jumping.load()
    picker = ExamplePicker(suite.language)
    tool_first = not options.say_first
    narrowing = NarrowedChat(token_by_token, registry, picker, n=2, none_within=3, max_chars=60, tool_first=tool_first)
    rows = []
    for i, scenario in enumerate(suite.scenarios[: options.limit]):
        text = scenario.said
        messages = planner_messages(system_prompt(suite.language), registry.specs, picker(text), [], text, tool_first)
        schema = narrowing.schema_for(text)
        order = [(token_by_token, "each"), (jumping, "jump")]
        out: dict[str, tuple[str, float, float]] = {}
        for chat, name in order if i % 2 == 0 else order[::-1]:
            out[name] = await _timed(chat, messages, schema)
        count = jumping.last_decode
        rows.append({
            "text": text, "same": out["each"][0] == out["jump"][0], "each": out["each"][0], "jump": out["jump"][0],
            "each_s": round(out["each"][1], 4), "jump_s": round(out["jump"][1], 4),
            "each_decode_s": round(out["each"][2], 4), "jump_decode_s": round(out["jump"][2], 4),
            "sampled": count.sampled if count else None, "forced": count.forced if count else None,
        })
    total = lambda key: sum(r[key] for r in rows)  # noqa: E731
    tokens = [r["sampled"] + r["forced"] for r in rows if r["sampled"] is not None]
    return {
        "suite": suite.suite, "model": model, "git_commit": git_commit(), "tool_first": tool_first, "decisions": len(rows),
        "identical": sum(r["same"] for r in rows),
        "tokens_per_decision": statistics.median(tokens) if tokens else None,
        "sampled_per_decision": statistics.median(r["sampled"] for r in rows if r["sampled"] is not None) if tokens else None,
        "forced_share": round(sum(r["forced"] for r in rows if r["forced"] is not None) / max(1, sum(tokens)), 3),
        "decision_s_median": {"each": statistics.median(r["each_s"] for r in rows), "jump": statistics.median(r["jump_s"] for r in rows)},
        "ratio_total": round(total("each_s") / total("jump_s"), 2),
        "ratio_decode": round(total("each_decode_s") / max(1e-9, total("jump_decode_s")), 2),
        "rows": rows,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suite", default="en-kitchen")
    parser.add_argument("--config", type=Path)
    parser.add_argument("--model", help="a model in the store other than the configured talker")
    parser.add_argument("--limit", type=int, default=40)
    parser.add_argument("--say-first", action="store_true", help="decisions that write their line first (not tool first)")
    parser.add_argument("--out", type=Path, default=Path("out/jump-forward.json"))
    options = parser.parse_args()
    provenance = written_by("bench.micro.jump_forward")
    report = {"written_by": provenance, **asyncio.run(measure(options))}
    options.out.parent.mkdir(parents=True, exist_ok=True)
    options.out.write_text(json.dumps(report, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    print(f"{report['suite']} ({report['model']}): {report['identical']}/{report['decisions']} identical; "
          f"{report['tokens_per_decision']} tokens a decision, {report['sampled_per_decision']} sampled "
          f"({report['forced_share']:.0%} forced overall); median decision {report['decision_s_median']['each']:.3f} s → "
          f"{report['decision_s_median']['jump']:.3f} s; token-by-token / jump-forward {report['ratio_total']}× for the whole "
          f"decision, {report['ratio_decode']}× for decoding; written to {options.out}")


if __name__ == "__main__":
    main()
