"""The final decode in a window fitted to the request, against Whisper's own 30 s window.

A held press wants its final transcript within 0.15 s of the release. Whisper's encoder always
sees a 30 s window, however short the request; a window fitted to it (the utterance plus 2 s, at
least 8 s: what partials use) costs a fraction of that. Whether the final may be decoded that way
depends on what it hears, so each recording of a suite is decoded by the recognizer as the loop
wires it (its prompt of the kitchen's words, its five best weighed by them, its checks and the
fallback to the full window of a fitted decode that fails them) in both windows, in turn, the
order alternating, so a busy spell of a shared machine falls on both. A fitted decode redone in
the full window is counted, and its time is both decodes'::

    python -m bench.final_window --suite en-kitchen en-fresh --out bench/results/final-window-en-x86_64.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from audio.protocols import AudioChunk
from audio.wav import read_wav
from audio.whisper_decode import normalize
from bench.provenance import written_by

RATE = 16000
WINDOWS = ("full", "fit")


def recognizer(config: Any) -> tuple[Any, dict[str, Any]]:
    """The configured Whisper recognizer, loaded and warm in both windows, and its settings for each."""
    from firmware_py.wiring import make_recognizer, model_store

    ear = make_recognizer(config, model_store(config))
    if not hasattr(ear, "settings") or not hasattr(ear.settings, "final_window"):
        raise SystemExit("bench.final_window: the configured ear is not Whisper; only Whisper has windows")
    windows = {window: replace(ear.settings, final_window=window, partial_window=window) for window in WINDOWS}
    ear.load()
    for settings in windows.values():
        ear.settings = settings
        ear.warm()
    return ear, windows


async def final(ear: Any, samples: np.ndarray, context: str) -> tuple[str, str]:
    """The final of one recording as the loop asks for it (the whole utterance in one chunk, so no
    partial is decoded first), and the window it was finally decoded in: a fitted decode that fails
    a check is redone in the full window."""

    async def one_chunk() -> Any:
        yield AudioChunk(samples, RATE)

    text = ""
    async for heard in ear.transcribe(one_chunk(), context):
        if heard.is_final:
            text = heard.text
    return text, ear.last_final.window if ear.last_final is not None else "none"


async def run(suites: Sequence[str], config: Any, limit: int | None) -> dict[str, Any]:
    from bench.kitchen.hear import kitchen_context, suite_turns
    from bench.suites.scoring import word_error_rate

    ear, windows = recognizer(config)
    context = await kitchen_context(config)
    rows: list[dict[str, Any]] = []
    for suite in suites:
        _suite, turns = suite_turns(suite, limit)
        for index, (key, said, path) in enumerate(turns):
            samples = np.asarray(read_wav(path.read_bytes(), RATE).samples, dtype=np.float32).reshape(-1)
            row: dict[str, Any] = {"suite": suite, "clip": key, "said": said}
            for window in WINDOWS if index % 2 == 0 else WINDOWS[::-1]:
                ear.settings = windows[window]
                began = time.perf_counter()
                text, decoded_in = await final(ear, samples, context)
                row[f"{window}_s"] = round(time.perf_counter() - began, 4)
                row[window] = text
                row[f"{window}_redone_full"] = window == "fit" and decoded_in == "full"
                row[f"{window}_error"] = round(word_error_rate(said, text), 4)
            row["same"] = normalize(row["full"]) == normalize(row["fit"])
            rows.append(row)
    return {"rows": rows, "summary": {suite: summarise([r for r in rows if r["suite"] == suite]) for suite in suites}
            | {"all": summarise(rows)}}


def summarise(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Per window: the median decode time and the mean WER against what was said; how often the two
    windows' texts are the same (case and punctuation aside), and on how many clips the fitted
    window heard worse or better than the full one."""
    if not rows:
        return {"clips": 0}

    def median(key: str) -> float:
        return round(statistics.median(r[key] for r in rows), 4)

    def mean(key: str) -> float:
        return round(statistics.mean(r[key] for r in rows), 4)

    return {
        "clips": len(rows),
        "full_s_median": median("full_s"),
        "fit_s_median": median("fit_s"),
        "ratio_of_medians": round(median("fit_s") / median("full_s"), 3) if median("full_s") else None,
        "same_text": round(sum(r["same"] for r in rows) / len(rows), 4),
        "wer_full": mean("full_error"),
        "wer_fit": mean("fit_error"),
        "fit_worse": sum(r["fit_error"] > r["full_error"] for r in rows),
        "fit_better": sum(r["fit_error"] < r["full_error"] for r in rows),
        "fit_redone_full": sum(r["fit_redone_full"] for r in rows),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suite", nargs="+", default=["en-kitchen"], help="suites whose clean recordings are decoded")
    parser.add_argument("--config", type=Path, default=None, help="TOML configuration (default: hearth's)")
    parser.add_argument("--limit", type=int, default=None, help="only the first N scenarios of each suite")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    from firmware_py.config import load_config

    provenance = written_by("bench.final_window", argv)  # the code as the run starts
    config = load_config(args.config)
    result = asyncio.run(run(args.suite, config, args.limit))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    report = {"written_by": provenance, "model": config.asr.model_en if config.language == "en" else config.asr.model_ko,
              "suites": args.suite, **result}
    args.out.write_text(json.dumps(report, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(result["summary"], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
