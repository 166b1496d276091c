"""What Cadence's live splitter costs per model token.

    python -m bench.micro.cadence_cost [--out out/cadence-cost.json] [--rounds N]

:class:`agent.speaking.cadence.UnitStream` runs on every piece of text the model writes, on the same
CPU that decodes the next token, so its cost per token must stay small next to a token's
decode time; the target is at most 20 µs per token.  The pieces are what the model really
streams: each text is tokenized with the installed SmolLM2 tokenizer (its vocabulary only, no
weights) and detokenized token by token, holding back bytes until they decode (a Korean
syllable is split over several byte tokens), so the splitter sees the same many tiny pieces it
sees live.  Each round feeds every piece and flushes, timing each call; the figure is the median
round, so that a round disturbed by another process does not decide it.  The units streamed are
checked against
:func:`agent.speaking.cadence.split_units` first: a fast splitter that cuts differently is no result.

Exit status: 0 with the table printed and the JSON written; 1 when the streamed units differ
from ``split_units``; 2 when the model or the kss texts are missing.
"""

from __future__ import annotations

import argparse
import codecs
import gc
import json
import logging
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent.speaking.cadence import CadenceRules, UnitStream, split_units
from bench.micro.cadence_kss import DEFAULT_KSS as KSS, documents
from bench.provenance import machine, written_by

log = logging.getLogger(__name__)

TARGET_US_PER_TOKEN = 20.0
MODEL = "smollm2-135m-instruct"
BLOG_CHARS = 1500
UNCAPPED = CadenceRules(max_units=1_000_000)
"""No unit cap: with the default cap of 5 a long text stops being cut after four units and the
rest costs almost nothing, so this row shows what cutting a long text all the way costs."""

ENGLISH_RECIPE = (
    "Sure! For a classic sponge, preheat the oven to 180 °C (350 °F) and grease a 20 cm tin. "
    "Beat 4 eggs with 120 g of sugar for about 5 minutes, until pale and thick. "
    "Fold in 120 g of flour, a pinch of salt, and 1.5 tsp of baking powder, gently, so the air stays in. "
    "Pour it into the tin, bake for 25 to 30 minutes, and check with a skewer: it should come out clean. "
    "Let it cool for 10 minutes before you turn it out."
)

# The seed's umbrella example (tests/test_cadence.py) and a few more sentences of the same talk.
KOREAN_ANSWER = (
    "우산은 젖은 채로 접어두면 곰팡이 슬어버리니까 현관에 그냥 펼쳐두지 마. "
    "물기 털고 반쯤 펴서 통풍되는 데 두고, 완전히 마르면 그때 접어. "
    "근데 접이식은 살대 이음새에 물이 고여서 아무리 말려도 녹슬긴 해. "
    "오래 쓸 생각이면 장우산이 답이야. "
    "비가 많이 오는 날에는 우산 꽂이에 세워두고 바닥에 신문지를 깔아두면 좋아. "
    "그리고 손잡이 쪽은 가끔 물티슈로 닦아줘야 냄새가 안 나거든. "
    "혹시 천이 찢어졌으면 방수 테이프로 안쪽에서 붙이면 한동안은 괜찮을 거야."
)


class MissingInput(RuntimeError):
    """The tokenizer model or the kss texts are not where they should be; the message says what to do."""


@dataclass(frozen=True)
class Case:
    """One text to measure, as the pieces the model would stream it in."""

    name: str
    text: str
    pieces: tuple[str, ...]
    tokens: int
    rules: CadenceRules = CadenceRules()


def blog_text(kss: Path = KSS, chars: int = BLOG_CHARS) -> str:
    """About ``chars`` characters of the kss Korean blogs: a document's lines joined with nothing
    between them (how the gold sets are scored), documents one per line."""
    path = kss / "blogs_ko.txt"
    if not path.is_file():
        raise MissingInput(f"{path} is missing: the kss evaluation texts come with the bench in bench/data/kss")
    text = ""
    for lines in documents(path.read_text(encoding="utf-8")):
        text += ("\n" if text else "") + "".join(lines)
        if len(text) >= chars:
            break
    return text[:chars]


def load_tokenizer(models_dir: Path | None = None) -> Any:
    """The installed SmolLM2's tokenizer (``vocab_only``: the weights are not loaded)."""
    import llama_cpp

    from models.store import ModelStore, default_models_dir

    path = ModelStore(models_dir or default_models_dir()).path(MODEL) / "model.gguf"
    if not path.is_file():
        raise MissingInput(f"{path} is missing: run `hearth models install {MODEL}` (or set HEARTH_MODELS_DIR)")
    return llama_cpp.Llama(model_path=str(path), vocab_only=True, verbose=False)


def token_pieces(tokenizer: Any, text: str) -> tuple[list[str], int]:
    """``text`` as the text pieces the model streams, and how many tokens it takes.

    A token may end inside a UTF-8 character (Korean syllables are often two or three byte
    tokens); its bytes wait for the next token's, as in the model's own stream, so a token that
    completes no character gives no piece.
    """
    tokens = tokenizer.tokenize(text.encode("utf-8"), add_bos=False, special=False)
    decoder = codecs.getincrementaldecoder("utf-8")()
    pieces = [decoded for token in tokens if (decoded := decoder.decode(tokenizer.detokenize([token])))]
    if rest := decoder.decode(b"", final=True):
        pieces.append(rest)
    return pieces, len(tokens)


def streamed_units(pieces: Sequence[str], rules: CadenceRules = CadenceRules()) -> list[str]:
    stream = UnitStream(rules)
    units: list[str] = []
    for piece in pieces:
        units += stream.feed(piece)
    return units + stream.flush()


def check(case: Case) -> str | None:
    """What is wrong with ``case`` as a measurement (None: nothing)."""
    joined = "".join(case.pieces)
    if joined != case.text:
        return f"{case.name}: the pieces do not join back into the text ({len(joined)} vs {len(case.text)} characters)"
    streamed, whole = streamed_units(case.pieces, case.rules), split_units(case.text, case.rules)
    if streamed != whole:
        first = next((i for i, (a, b) in enumerate(zip(streamed, whole)) if a != b), min(len(streamed), len(whole)))
        return f"{case.name}: streamed units differ from split_units at unit {first}: {streamed[first:first + 1]!r} vs {whole[first:first + 1]!r}"
    return None


def _time_cadence(pieces: Sequence[str], rules: CadenceRules) -> tuple[int, list[int]]:
    """Nanoseconds for the whole text (every feed and the flush), and each feed's."""
    clock = time.perf_counter_ns
    stream = UnitStream(rules)
    feeds: list[int] = []
    for piece in pieces:
        t0 = clock()
        stream.feed(piece)
        feeds.append(clock() - t0)
    t0 = clock()
    stream.flush()
    return sum(feeds) + clock() - t0, feeds


def _p99(values: Sequence[int]) -> float:
    ordered = sorted(values)
    return float(ordered[min(len(ordered) - 1, max(0, -(-99 * len(ordered) // 100) - 1))])  # nearest rank


def measure(name: str, pieces: Sequence[str], rounds: int, tokens: int | None = None, rules: CadenceRules = CadenceRules()) -> dict[str, Any]:
    """Time ``pieces`` through Cadence's stream ``rounds`` times.

    ``tokens``: how many model tokens the pieces came from (default: one per piece).
    """
    if not pieces:
        raise ValueError(f"{name}: no pieces to measure")
    tokens = tokens or len(pieces)
    # One untimed pass each: the first call pays for imports, regex compiles and caches.
    _time_cadence(pieces, rules)
    new_totals: list[int] = []
    new_feeds: list[int] = []
    for _ in range(rounds):
        # A collection left over from the previous round would land on the next one's clock.
        gc.collect()
        total, feeds = _time_cadence(pieces, rules)
        new_totals.append(total)
        new_feeds += feeds
    new_us = statistics.median(new_totals) / tokens / 1000
    return {
        "text": name,
        "chars": len("".join(pieces)),
        "tokens": tokens,
        "pieces": len(pieces),
        "units": len(streamed_units(pieces, rules)),
        "max_units": rules.max_units,
        "us_per_token": round(new_us, 3),
        "p99_feed_us": round(_p99(new_feeds) / 1000, 3),
        "within_target": new_us <= TARGET_US_PER_TOKEN,
    }


def report(results: list[dict[str, Any]], rounds: int) -> dict[str, Any]:
    return {
        "target_us_per_token": TARGET_US_PER_TOKEN,
        "rounds": rounds,
        "tokenizer": MODEL,
        "machine": machine(),
        "texts": results,
    }


def table(results: list[dict[str, Any]]) -> str:
    rows = [f"{'text':<18} {'chars':>5} {'tokens':>6} {'units':>5} {'µs/token':>9} {'p99 feed µs':>11}"]
    for r in results:
        flag = "" if r["within_target"] else f"  over {TARGET_US_PER_TOKEN:g} µs"
        rows.append(
            f"{r['text']:<18} {r['chars']:>5} {r['tokens']:>6} {r['units']:>5} {r['us_per_token']:>9.2f} "
            f"{r['p99_feed_us']:>11.2f}{flag}"
        )
    return "\n".join(rows)


def cases(tokenizer: Any, kss: Path = KSS) -> list[Case]:
    blog = blog_text(kss)
    texts = [
        ("en-recipe", ENGLISH_RECIPE, CadenceRules()),
        ("ko-answer", KOREAN_ANSWER, CadenceRules()),
        ("ko-blog", blog, CadenceRules()),
        ("ko-blog-uncapped", blog, UNCAPPED),
    ]
    out = []
    for name, text, rules in texts:
        pieces, tokens = token_pieces(tokenizer, text)
        out.append(Case(name, text, tuple(pieces), tokens, rules))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("out/cadence-cost.json"), help="where to write the JSON report")
    parser.add_argument("--rounds", type=int, default=100, help="timed rounds per text")
    parser.add_argument("--kss", type=Path, default=KSS, help="folder with the kss texts (blogs_ko.txt)")
    args = parser.parse_args(argv)
    provenance = written_by("bench.micro.cadence_cost", argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    try:
        measured = cases(load_tokenizer(), args.kss)
    except MissingInput as exc:
        print(f"cadence_cost: {exc}", file=sys.stderr)
        return 2
    problems = [p for case in measured if (p := check(case))]
    if problems:
        for problem in problems:
            print(f"cadence_cost: {problem}", file=sys.stderr)
        return 1
    results = []
    for case in measured:
        log.info("%s: %d tokens, %d rounds", case.name, case.tokens, args.rounds)
        results.append(measure(case.name, case.pieces, args.rounds, case.tokens, case.rules))
    print(table(results))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"written_by": provenance, **report(results, args.rounds)}, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
