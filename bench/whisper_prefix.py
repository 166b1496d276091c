"""A Whisper final that starts from the last partial: is it faster, and is it the same text?

With a held press the release is the exact end of the words, and the last partial decode, a
fraction of a second behind it, holds most of them. Whisper's encoder always sees its 30 s window,
so only the decoder's steps can be saved: the partial's tokens are checked against the whole
audio, and what is kept of them is Whisper's prefix, the rest decoded on from there. Two ways to
keep: ``sure``, the longest run the decoder is sure of in one aligning pass (each token's
probability, given the ones before, at least ``--sure``; CTranslate2's Whisper gives no logits, so
the greedy choice itself cannot be checked); ``words``, every word of the partial but its last
(the audio after the partial may lengthen or change it). Against it, the fresh final
of the same audio; the two are decoded in turn, clip by clip, so a busy spell of a shared machine
falls on both::

    python -m bench.whisper_prefix --suite ko-kitchen --out bench/results/whisper-prefix-ko-x86_64.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from audio.wav import read_wav
from audio.whisper_decode import FULL_WINDOW_S, encode_window, load_whisper
from bench.provenance import written_by

RATE = 16000
LEAD_S = 0.3
"""Silence before the audio, as the recognizer puts it (tiny.en drops a first word without it)."""


class PrefixFinal:
    """Whisper's fresh final and the final from a partial's tokens, on one model."""

    def __init__(self, model: Any, language: str, sure: float, keep: str = "sure") -> None:
        from faster_whisper.tokenizer import Tokenizer
        from faster_whisper.transcribe import get_suppressed_tokens

        self.model = model
        self.sure = sure
        self.keep = keep
        self.tokenizer = Tokenizer(model.hf_tokenizer, model.model.is_multilingual, task="transcribe", language=language)
        self.suppressed = get_suppressed_tokens(self.tokenizer, [-1])
        self.start = model.get_prompt(self.tokenizer, [], without_timestamps=True)

    def _encode(self, samples: np.ndarray) -> tuple[Any, int]:
        audio = np.concatenate([np.zeros(int(LEAD_S * RATE), np.float32), samples])
        encoded, frames = encode_window(self.model, audio, FULL_WINDOW_S)
        return encoded, min(frames, len(audio) // 160 + 1)

    def _generate(self, encoded: Any, prefix: list[int], cap: int) -> list[int]:
        result = self.model.model.generate(
            encoded, [self.start + prefix], beam_size=1, max_length=len(self.start) + len(prefix) + cap,
            suppress_blank=not prefix, suppress_tokens=self.suppressed,
        )[0]
        return list(result.sequences_ids[0])

    def fresh(self, samples: np.ndarray) -> tuple[list[int], float]:
        began = time.perf_counter()
        encoded, _ = self._encode(samples)
        tokens = self._generate(encoded, [], _cap(samples))
        return tokens, time.perf_counter() - began

    def from_partial(self, samples: np.ndarray, partial: list[int]) -> tuple[list[int], int, float]:
        """The final, its tokens kept from the partial, and the seconds it took."""
        began = time.perf_counter()
        encoded, frames = self._encode(samples)
        kept = 0
        if partial and self.keep == "sure":
            probabilities = self.model.model.align(encoded, self.start, [partial], frames)[0].text_token_probs
            while kept < len(partial) and probabilities[kept] >= self.sure:
                kept += 1
        elif partial:
            starts = [i for i, t in enumerate(partial) if self.tokenizer.decode([t]).startswith(" ")]
            kept = starts[-1] if starts else 0
        prefix = partial[:kept]
        # CTranslate2 returns the prefix with what it decoded after it.
        tokens = self._generate(encoded, prefix, max(4, _cap(samples) - kept))
        return tokens, kept, time.perf_counter() - began

    def text(self, tokens: Sequence[int]) -> str:
        return self.tokenizer.decode([t for t in tokens if t < self.tokenizer.eot]).strip()


def _cap(samples: np.ndarray) -> int:
    return int(16 + 16 * len(samples) / RATE)


def run(suite_name: str, model_dir: Path, language: str, limit: int | None, lag_s: float, sure: float, rounds: int,
        keep: str = "sure") -> dict[str, Any]:
    from bench.kitchen.hear import suite_turns
    from bench.suites.scoring import char_error_rate, word_error_rate

    error = char_error_rate if language == "ko" else word_error_rate
    _suite, turns = suite_turns(suite_name, limit)
    finals = PrefixFinal(load_whisper(model_dir, "int8", 2, language), language, sure, keep)
    finals.fresh(np.zeros(RATE, np.float32))  # first-call costs out of the figures
    rows: list[dict[str, Any]] = []
    for round_index in range(rounds):
        for index, (key, said, path) in enumerate(turns):
            samples = read_wav(path.read_bytes(), RATE).samples
            partial, _ = finals.fresh(samples[: max(RATE // 4, len(samples) - int(lag_s * RATE))])
            order = ("fresh", "prefix") if (index + round_index) % 2 == 0 else ("prefix", "fresh")
            got: dict[str, Any] = {}
            for way in order:
                if way == "fresh":
                    got["fresh"], got["fresh_s"] = finals.fresh(samples)
                else:
                    got["prefix"], got["kept"], got["prefix_s"] = finals.from_partial(samples, partial)
            fresh_text, prefix_text = finals.text(got["fresh"]), finals.text(got["prefix"])
            rows.append({
                "clip": key, "round": round_index, "said": said, "partial": finals.text(partial),
                "fresh": fresh_text, "from_partial": prefix_text,
                "fresh_s": round(got["fresh_s"], 4), "prefix_s": round(got["prefix_s"], 4),
                "partial_tokens": len(partial), "kept_tokens": got["kept"], "final_tokens": len(got["fresh"]),
                "whole_partial_kept": got["kept"] == len(partial),
                "same_as_fresh": got["prefix"] == got["fresh"],
                "error_fresh": round(error(said, fresh_text), 4),
                "error_from_partial": round(error(said, prefix_text), 4),
                "error_against_fresh": round(error(fresh_text, prefix_text), 4) if fresh_text else None,
            })
    return {"rows": rows, "summary": summarise(rows)}


def summarise(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    def median(key: str) -> float:
        return round(statistics.median(r[key] for r in rows), 4)

    def mean(key: str) -> float | None:
        values = [r[key] for r in rows if r[key] is not None]
        return round(statistics.mean(values), 4) if values else None

    return {
        "clips": len(rows),
        "fresh_s_median": median("fresh_s"),
        "from_partial_s_median": median("prefix_s"),
        "ratio_of_medians": round(median("prefix_s") / median("fresh_s"), 3),
        "whole_partial_kept": round(sum(r["whole_partial_kept"] for r in rows) / len(rows), 4),
        "same_as_fresh": round(sum(r["same_as_fresh"] for r in rows) / len(rows), 4),
        "error_fresh": mean("error_fresh"),
        "error_from_partial": mean("error_from_partial"),
        "error_against_fresh": mean("error_against_fresh"),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suite", default="ko-kitchen")
    parser.add_argument("--model", default=None, help="a Whisper model's name in the models folder (default: whisper-base, or whisper-tiny-en for English)")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--lag", type=float, default=0.25, help="how far the last partial trails the release (s)")
    parser.add_argument("--sure", type=float, default=0.5, help="least probability of a partial's token kept")
    parser.add_argument("--keep", choices=["sure", "words"], default="sure", help="what of the partial is kept (above)")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    from bench.suites.scenarios import load_suite
    from models.store import default_models_dir

    language = load_suite(args.suite).language
    name = args.model or ("whisper-base" if language == "ko" else "whisper-tiny-en")
    result = run(args.suite, default_models_dir() / name, language, args.limit, args.lag, args.sure, args.rounds, args.keep)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    report = {"written_by": written_by("bench.whisper_prefix", argv), "model": name, "keep": args.keep, **result}
    args.out.write_text(json.dumps(report, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(result["summary"], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
