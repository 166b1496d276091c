"""How well the recognizer's sureness of each word tells heard words from misheard ones, on a
hearing bench result (:mod:`bench.kitchen.hear`, which keeps each final's ``word_probs``).

For each threshold: the share of misheard words (not in the words said, aligned by edit
distance) below it, the share of rightly heard words below it, and what that costs an act: of
the turns whose transcript supports the expected act, the share whose sure words (those at or
above the threshold) no longer do, so the act would be asked back although it was heard right.

    python -m bench.kitchen.words out/kitchen-hear.json [--thresholds 0.3 0.5 0.7]
"""

from __future__ import annotations

import argparse
import difflib
import json
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from agent.deciding.arguments import content_in, grounded
from audio.whisper_decode import normalize
from bench.provenance import written_by
from bench.suites.scoring import transcript_words

DEFAULT_THRESHOLDS = (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8)


def word_marks(reference: str, words: Sequence[tuple[str, float]], language: str = "en") -> list[tuple[bool, float]]:
    """Each heard word with whether it is among the words said (aligned in order), and its probability."""
    said = transcript_words(reference, language)
    heard = [(transcript_words(w, language), p) for w, p in words]
    flat = [(n, piece) for n, (pieces, _) in enumerate(heard) for piece in pieces]
    right = [False] * len(heard)
    matcher = difflib.SequenceMatcher(a=said, b=[piece for _, piece in flat], autojunk=False)
    for block in matcher.get_matching_blocks():
        for k in range(block.size):
            right[flat[block.b + k][0]] = True
    return [(right[n], p) for n, (pieces, p) in enumerate(heard) if pieces]


def _first(value: Any) -> Any:
    return value[0] if isinstance(value, list) else value


def acts_asked_back(rows: Iterable[dict[str, Any]], expected: dict[str, list[dict[str, Any]]], threshold: float) -> tuple[int, int]:
    """(turns whose transcript supports each expected acting call, of them the turns its sure words do not)."""
    supported = lost = 0
    for row in rows:
        calls = expected.get(row["turn"].split("#")[0], [])
        words = row.get("word_probs") or []
        if not calls or not words:
            continue
        text = row["transcript"]
        if not all(grounded(c["tool"], {k: _first(v) for k, v in c["args"].items()}, text) for c in calls):
            continue
        supported += 1
        sure = " ".join(w for w, p in words if p >= threshold or not normalize(w))
        if not all(content_in(c["tool"], {k: _first(v) for k, v in c["args"].items()}, sure) for c in calls):
            lost += 1
    return supported, lost


def suite_acts(suite_name: str) -> dict[str, list[dict[str, Any]]]:
    """Each scenario's expected acting calls (first turn only)."""
    from agent.deciding.arguments import READ_ONLY
    from bench.suites.scenarios import load_suite

    suite = load_suite(suite_name)
    return {
        s.id: [{"tool": c.tool, "args": dict(c.args)} for c in s.expect if c.tool not in READ_ONLY]
        for s in suite.scenarios
    }


def analyse(result: dict[str, Any], thresholds: Sequence[float] = DEFAULT_THRESHOLDS) -> dict[str, Any]:
    expected = suite_acts(result["suite"])
    out: dict[str, Any] = {"suite": result["suite"], "room": result.get("room"), "conditions": {}}
    rows = [r for r in result["rows"] if r.get("text") and r.get("word_probs") is not None]
    for condition in dict.fromkeys(r["condition"] for r in rows):
        mine = [r for r in rows if r["condition"] == condition]
        marks = [m for r in mine for m in word_marks(r["text"], r["word_probs"], result.get("language", "en"))]
        wrong = [p for ok, p in marks if not ok]
        right = [p for ok, p in marks if ok]
        per: dict[str, Any] = {"words": len(marks), "misheard_words": len(wrong)}
        for t in thresholds:
            supported, lost = acts_asked_back(mine, expected, t)
            per[f"{t:g}"] = {
                "misheard_caught": round(sum(p < t for p in wrong) / len(wrong), 3) if wrong else None,
                "heard_doubted": round(sum(p < t for p in right) / len(right), 3) if right else None,
                "right_acts": supported,
                "right_acts_asked_back": lost,
            }
        out["conditions"][condition] = per
    return out


def render(analysis: dict[str, Any]) -> str:
    lines = [f"{analysis['suite']} in {analysis['room']}: misheard words caught / heard words doubted / right acts asked back"]
    for condition, per in analysis["conditions"].items():
        cells = [
            f"{t}: {v['misheard_caught']}/{v['heard_doubted']}/{v['right_acts_asked_back']} of {v['right_acts']}"
            for t, v in per.items() if isinstance(v, dict)
        ]
        lines.append(f"- {condition} ({per['misheard_words']} of {per['words']} words misheard): " + "; ".join(cells))
    return "\n".join(lines)


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.kitchen.words", description=__doc__.split("\n\n")[0])
    parser.add_argument("results", nargs="+", type=Path, help="hearing bench result JSON files")
    parser.add_argument("--thresholds", nargs="+", type=float, default=list(DEFAULT_THRESHOLDS))
    parser.add_argument("--out", type=Path, help="write the analysis JSON here")
    arguments = list(argv) if argv is not None else None
    args = parser.parse_args(arguments)
    provenance = written_by("bench.kitchen.words", arguments)
    analyses = [analyse(json.loads(path.read_text()), args.thresholds) for path in args.results]
    for analysis in analyses:
        print(render(analysis))
    if args.out:
        args.out.write_text(json.dumps({"written_by": provenance, "analyses": analyses}, indent=1, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
