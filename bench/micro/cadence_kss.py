"""Sentence-boundary precision and recall of Cadence's sentence tier on the kss gold sets.

    python -m bench.micro.cadence_kss [--kss DIR] [--out out/cadence-kss.json]

Each file holds one gold sentence per line and documents separated by an empty line; a
document's raw text is its lines joined with nothing between them.  The text is cut with
:func:`agent.speaking.cadence.sentence_ends` (the paragraph and sentence tiers, no length rules, no unit
cap) and the predicted ends are compared with the gold line ends.  Positions are counted in
non-space characters, so where the spaces around a boundary go does not matter.  A document's
own end is not counted: every splitter gets it for free.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

from agent.speaking.cadence import sentence_ends
from bench.provenance import written_by

FILES = ("sample.txt", "blogs_ko.txt", "tweets.txt", "v_ending.txt")
DEFAULT_KSS = Path(__file__).resolve().parents[1] / "data" / "kss"
"""The kss gold sets kept with the bench (see ``bench/data/README.md``)."""


@dataclass(frozen=True)
class Score:
    file: str
    documents: int
    gold: int
    predicted: int
    correct: int
    sentences_exact: int
    sentences: int

    @property
    def precision(self) -> float:
        return self.correct / self.predicted if self.predicted else 1.0

    @property
    def recall(self) -> float:
        return self.correct / self.gold if self.gold else 1.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def as_dict(self) -> dict[str, object]:
        return {**asdict(self), "precision": round(self.precision, 4), "recall": round(self.recall, 4), "f1": round(self.f1, 4)}


def documents(text: str) -> list[list[str]]:
    """The gold sentences of each document (lines without their newline, blank lines dropped)."""
    docs: list[list[str]] = [[]]
    for line in text.split("\n"):
        if line.strip():
            docs[-1].append(line)
        elif docs[-1]:
            docs.append([])
    return [d for d in docs if d]


def _dense(text: str, positions: list[int]) -> set[int]:
    """``positions`` in ``text`` as counts of non-space characters before them."""
    counts = [0]
    for ch in text:
        counts.append(counts[-1] + (not ch.isspace()))
    return {counts[p] for p in positions}


def score_file(path: Path) -> Score:
    docs = documents(path.read_text(encoding="utf-8"))
    gold_n = predicted_n = correct = exact = sentences = 0
    for lines in docs:
        raw = "".join(lines)
        ends, total = [], 0
        for line in lines:
            total += len(line)
            ends.append(total)
        dense_total = len("".join(raw.split()))
        gold = _dense(raw, ends) - {dense_total}
        predicted = _dense(raw, sentence_ends(raw)) - {dense_total, 0}
        gold_n += len(gold)
        predicted_n += len(predicted)
        correct += len(gold & predicted)
        # A sentence is found exactly when both its ends are predicted and nothing falls inside.
        bounds = sorted(gold | {0, dense_total})
        predicted_all = predicted | {0, dense_total}
        for a, b in zip(bounds, bounds[1:]):
            sentences += 1
            exact += a in predicted_all and b in predicted_all and not any(a < p < b for p in predicted)
    return Score(path.name, len(docs), gold_n, predicted_n, correct, exact, sentences)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kss", type=Path, default=DEFAULT_KSS, help="folder with the kss gold files")
    parser.add_argument("--out", type=Path, default=Path("out/cadence-kss.json"))
    args = parser.parse_args(argv)
    provenance = written_by("bench.micro.cadence_kss", argv)
    missing = [name for name in FILES if not (args.kss / name).is_file()]
    if missing:
        print(f"{args.kss}: missing {', '.join(missing)}", file=sys.stderr)
        return 2
    scores = [score_file(args.kss / name) for name in FILES]
    print(f"{'file':<14} {'gold':>5} {'pred':>5} {'P':>6} {'R':>6} {'F1':>6} {'exact':>7}")
    for s in scores:
        print(f"{s.file:<14} {s.gold:>5} {s.predicted:>5} {s.precision:6.3f} {s.recall:6.3f} {s.f1:6.3f} {s.sentences_exact:>3}/{s.sentences}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"written_by": provenance, "kss": str(args.kss), "files": [s.as_dict() for s in scores]},
                                   indent=2, ensure_ascii=False) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
