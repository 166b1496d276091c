"""How much faster top-token-first grammar sampling decides, measured interleaved against the plain path.

    python -m bench.micro.grammar_speed --suite en-kitchen --limit 20

Two copies of the model run the same tool decisions (the planner's own prompts and narrowed
grammars) in alternating order, so machine load falls on both alike.  Reports the time of
the whole decision and of its decoding alone (after the first piece, when the prompt is
done), whether every decision came out identical, and how often the grammar had to mask the
full vocabulary.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import logging
import tempfile
import time
from pathlib import Path
from typing import Any

from agent.model.llm import LlamaChatModel, LlamaSettings
from agent.speaking.phrases import system_prompt
from agent.deciding.tool_calls import planner_messages
from agent.deciding.tool_examples import ExamplePicker, NarrowedChat
from bench.provenance import written_by
from bench.suites.scenarios import load_suite
from bench.suites.tool_accuracy import build_registry
from firmware_py.config import load_config
from firmware_py.wiring import model_store

log = logging.getLogger(__name__)


async def _timed(chat: LlamaChatModel, messages: list[Any], schema: dict[str, Any]) -> tuple[str, float, float]:
    started = time.perf_counter()
    first: float | None = None
    pieces = []
    async for piece in chat.stream(messages, 128, json_schema=schema):
        first = first or time.perf_counter()
        pieces.append(piece)
    end = time.perf_counter()
    return "".join(pieces), end - started, end - (first or end)


async def measure(options: argparse.Namespace) -> dict[str, Any]:
    config = load_config(options.config)
    suite = load_suite(options.suite)
    registry, _ = build_registry(Path(tempfile.mkdtemp(prefix="hearth-speed-")), suite.language)
    settings = LlamaSettings(model_store(config).path(config.llm.model) / "model.gguf", n_threads=config.llm.n_threads or 2)
    plain, fast = LlamaChatModel(dataclasses.replace(settings, top_token_first=False)), LlamaChatModel(settings)
    plain.load()
    fast.load()
    picker = ExamplePicker(suite.language)
    narrowing = NarrowedChat(plain, registry, picker, n=2, none_within=3, max_chars=60)
    rows = []
    for i, scenario in enumerate(suite.scenarios[: options.limit]):
        text = scenario.said
        messages = planner_messages(system_prompt(suite.language), registry.specs, picker(text), [], text)
        schema = narrowing.schema_for(text) if options.narrowed else registry.tool_call_schema(max_chars=60)
        order = [(plain, "plain"), (fast, "fast")] if i % 2 == 0 else [(fast, "fast"), (plain, "plain")]
        out: dict[str, tuple[str, float, float]] = {}
        for chat, name in order:
            out[name] = await _timed(chat, messages, schema)
        tokens, fallbacks = fast.grammar_stats() or (0, 0)
        rows.append({"text": text, "same": out["plain"][0] == out["fast"][0], "plain_s": out["plain"][1], "fast_s": out["fast"][1],
                     "plain_decode_s": out["plain"][2], "fast_decode_s": out["fast"][2], "tokens": tokens, "fallbacks": fallbacks})
    total = lambda key: sum(r[key] for r in rows)  # noqa: E731
    return {
        "suite": suite.suite, "decisions": len(rows), "identical": sum(r["same"] for r in rows),
        "ratio_total": round(total("plain_s") / total("fast_s"), 2),
        "ratio_decode": round(total("plain_decode_s") / total("fast_decode_s"), 2),
        "fallback_share": round(total("fallbacks") / max(1, total("tokens")), 3),
        "narrowed": options.narrowed, "rows": rows,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suite", default="en-kitchen")
    parser.add_argument("--config", type=Path)
    parser.add_argument("--limit", type=int, default=20)
    parser.add_argument("--narrowed", action="store_true", help="the narrowed grammars the planner uses, not the full one")
    parser.add_argument("--out", type=Path, default=Path("out/grammar-speed.json"))
    options = parser.parse_args()
    provenance = written_by("bench.micro.grammar_speed")
    report = {"written_by": provenance, **asyncio.run(measure(options))}
    options.out.parent.mkdir(parents=True, exist_ok=True)
    options.out.write_text(json.dumps(report, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    print(f"{report['suite']}: {report['identical']}/{report['decisions']} identical; plain/fast {report['ratio_total']}× "
          f"for the whole decision, {report['ratio_decode']}× for decoding; the full grammar pass ran for "
          f"{report['fallback_share']:.1%} of tokens; written to {options.out}")


if __name__ == "__main__":
    main()
