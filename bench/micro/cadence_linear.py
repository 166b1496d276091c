"""What Cadence's live splitter costs on a unit that does not end: is it linear in the reply?

    python -m bench.micro.cadence_linear [--chars 8000] [--piece 4] [--rounds 5] [--out bench/results/cadence-linear.json]

A unit that keeps growing without a place to cut it (a code fence the model never closes, a long
run without punctuation) used to be scanned again from its start on every piece the model
wrote: quadratic in its length.  :class:`agent.speaking.cadence.UnitStream` now resumes its scan
and stops scanning while open code is all that holds the unit.  This measures both on the same
texts in the same process: "stream" is the UnitStream, "rescan" feeds the same pieces to
:func:`~agent.speaking.cadence.find_cut` on the whole unit at every piece (what the stream did
before).  Each text is measured at ``chars`` and at twice that; the runs of the two are
interleaved, round after round, so a disturbance from another process falls on both; the figure
is the median CPU time (``time.process_time``) of the rounds.  The units given out, piece by
piece, are checked to be the same first: a faster splitter that cuts differently is no result.

Exit status: 0 with the table printed and the JSON written; 1 when the two give different units.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from agent.speaking.cadence import CadenceRules, UnitStream, find_cut
from bench.provenance import machine, written_by

TEXTS: dict[str, Callable[[int], str]] = {
    "unclosed fence": lambda n: ("Here is the code:\n```python\n" + "total = add(a, b). Then, print(total)!\n" * (n // 30 + 1))[:n],
    "open inline code": lambda n: ("Run `make " + "the target and wait " * (n // 20 + 1))[:n],
    "no punctuation": lambda n: ("stir the flour into the butter and keep going " * (n // 45 + 1))[:n],
    "Korean, no endings": lambda n: ("밀가루 버터 설탕 달걀 우유 " * (n // 15 + 1))[:n],
}
"""Replies whose first unit never ends (the default rules: at most five units)."""


class Rescan:
    """The stream as it was: :func:`find_cut` on the whole unit at every piece."""

    def __init__(self, rules: CadenceRules) -> None:
        self.rules, self.units, self.text = rules, 0, ""

    def feed(self, piece: str) -> list[str]:
        grows_word = piece.isalnum() and self.text[-1:].isalnum()
        self.text += piece
        return [] if grows_word else self._cut(final=False)

    def flush(self) -> list[str]:
        out = self._cut(final=True)
        rest, self.text = self.text, ""
        return out + ([rest] if rest else [])

    def _cut(self, final: bool) -> list[str]:
        out = []
        while (cut := find_cut(self.text, 0, final, self.rules, self.units)) is not None:
            out.append(self.text[:cut])
            self.text = self.text[cut:]
            self.units += 1
        return out


def run(splitter: Any, pieces: Sequence[str]) -> list[list[str]]:
    """What ``splitter`` gives out for each piece, and at the flush."""
    return [splitter.feed(piece) for piece in pieces] + [splitter.flush()]


def cpu_seconds(make: Callable[[], Any], pieces: Sequence[str]) -> float:
    splitter = make()
    t0 = time.process_time()
    run(splitter, pieces)
    return time.process_time() - t0


def measure(name: str, text: str, piece: int, rounds: int, rules: CadenceRules = CadenceRules()) -> dict[str, Any]:
    pieces = [text[i:i + piece] for i in range(0, len(text), piece)]
    stream = UnitStream(rules)
    if run(stream, pieces) != run(Rescan(rules), pieces):
        raise ValueError(f"{name}: the stream and the rescan give different units")
    times: dict[str, list[float]] = {"stream": [], "rescan": []}
    for _ in range(rounds):  # interleaved: stream, rescan, stream, rescan, ...
        times["stream"].append(cpu_seconds(lambda: UnitStream(rules), pieces))
        times["rescan"].append(cpu_seconds(lambda: Rescan(rules), pieces))
    stream_s, rescan_s = statistics.median(times["stream"]), statistics.median(times["rescan"])
    return {
        "text": name, "chars": len(text), "piece_chars": piece, "pieces": len(pieces), "rounds": rounds,
        "stream_cpu_s": round(stream_s, 4), "rescan_cpu_s": round(rescan_s, 4),
        "speedup": round(rescan_s / stream_s, 1) if stream_s > 0 else None,
        "stream_scanned_chars": stream.scanned,
    }


def table(rows: list[dict[str, Any]]) -> str:
    lines = [f"{'text':<20} {'chars':>6} {'stream s':>9} {'rescan s':>9} {'speedup':>8} {'scanned':>9}"]
    for r in rows:
        lines.append(f"{r['text']:<20} {r['chars']:>6} {r['stream_cpu_s']:>9.4f} {r['rescan_cpu_s']:>9.4f} "
                     f"{r['speedup'] or 0:>7.1f}x {r['stream_scanned_chars']:>9}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chars", type=int, default=8000, help="length of each text (it is also measured at twice this)")
    parser.add_argument("--piece", type=int, default=4, help="characters per piece fed")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds per text")
    parser.add_argument("--out", type=Path, default=Path("bench/results/cadence-linear.json"), help="where to write the JSON")
    args = parser.parse_args(argv)
    provenance = written_by("bench.micro.cadence_linear", argv)
    if args.chars < 1 or args.piece < 1 or args.rounds < 1:
        parser.error("--chars, --piece and --rounds must be at least 1")
    rows = []
    try:
        for name, make in TEXTS.items():
            for chars in (args.chars, 2 * args.chars):
                rows.append(measure(name, make(chars), args.piece, args.rounds))
    except ValueError as exc:
        print(f"cadence_linear: {exc}", file=sys.stderr)
        return 1
    print(table(rows))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    report = {"written_by": provenance, "machine": machine(), "clock": "time.process_time", "texts": rows}
    args.out.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
