"""The Thinker's decisions taken by the answer, against fresh ones on the same words.

Reads the ``metrics.json`` of a run with ``--ablate finish-newest``: for each turn where the
answer took the Thinker's decision and the variant without ``finish-newest`` decided afresh on
the same final words (:func:`agent.listening.hearing.words_of`), whether the calls made are the same.

    python -m bench.loop.reuse_check out/hb/metrics.json > reuse-check.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from agent.listening.hearing import words_of
from bench.provenance import written_by

FRESH = "no-finish-newest"


def _calls(row: dict[str, Any]) -> list[tuple[str, str]]:
    return [(c["name"], json.dumps(c["args"], sort_keys=True)) for c in row["tool_calls"]]


def compare(report: dict[str, Any], baseline: str = "baseline", fresh: str = FRESH) -> dict[str, Any]:
    key = lambda r: (r["scenario"], r["turn"], r["round"])  # noqa: E731
    rows = [r for r in report["scenarios"] if "error" not in r]
    taken = {key(r): r for r in rows if r["variant"] == baseline}
    afresh = {key(r): r for r in rows if r["variant"] == fresh}
    same, different = 0, []
    for k, row in taken.items():
        other = afresh.get(k)
        if other is None or not row.get("decision_reused") or other.get("decision_reused"):
            continue
        if words_of(row["transcript"] or "") != words_of(other["transcript"] or ""):
            continue
        if _calls(row) == _calls(other):
            same += 1
        else:
            different.append({"turn": list(k), "transcript": row["transcript"], "taken": _calls(row), "afresh": _calls(other)})
    return {
        "commit": report.get("git_commit"),
        "turns": len(taken),
        "decision_taken": sum(1 for r in taken.values() if r.get("decision_reused")),
        "compared": same + len(different),
        "same_call": same,
        "different": different,
    }


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    report = json.loads(Path(args[0]).read_text(encoding="utf-8"))
    if not any(r["variant"] == FRESH for r in report["scenarios"]):
        print(f"{args[0]}: no {FRESH!r} variant (run with --ablate finish-newest)", file=sys.stderr)
        return 2
    # ``commit`` is the measured run's (its metrics.json's); ``written_by`` says what wrote this comparison.
    print(json.dumps({"written_by": written_by("bench.loop.reuse_check", args), **compare(report)}, ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
