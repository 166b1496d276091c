"""``python -m bench.drills.soak``: hundreds of scripted turns through hearth's loop, watching what it holds.

Requests from several suites (English and Korean kitchen requests, English know-how questions) are
played in a seeded random order through the real models, each language in its own loop (an
appliance speaks one), and some replies are cut short by a press with the next request
(barge-in), at a random moment after the reply is first heard.  After every turn the process is
sampled: resident memory (VmRSS, VmHWM), threads, open file descriptors, asyncio tasks, Python's
allocated blocks, and each SQLite file's size and rows.  A turn that raises, or fails inside (a
stage raised and the listener heard an apology), is a crash; a wrong answer is not.

The report (JSON, rewritten after every turn so a run that dies still leaves its samples) holds
the samples, every turn's outcome, and a summary judged after the warm-up turns: memory growth,
growth in threads and open files, and SQLite growth against the rows written.

    python -m bench.drills.soak --turns 300 --out bench/results/soak-$(date +%F).json
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import logging
import os
import platform
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from datetime import date
from pathlib import Path
from typing import Any

from agent.results import Outcome
from agent.results import TurnResult
from audio.wav import read_wav
from bench.loop.live_loop import LiveLoop, LogTap
from bench.provenance import written_by
from firmware_py.config import HearthConfig, load_config

log = logging.getLogger(__name__)

SUITES = ("en-kitchen", "ko-kitchen", "en-knowledge")


@dataclass(frozen=True)
class SoakSettings:
    """What to play and how to judge it."""

    turns: int = 300
    """At least this many turns (the last scenario is played to its end)."""
    warmup: int = 30
    """Turns before the baseline is taken: models touched, heads kept, caches filled."""
    barge_in: float = 0.15
    """Share of turns whose reply is cut short by a press with the next request."""
    barge_in_s: tuple[float, float] = (0.3, 2.5)
    """The press comes this long (uniformly drawn) after the reply is first heard."""
    seed: int = 7
    suites: tuple[str, ...] = SUITES
    max_rss_growth: float = 0.05
    """Allowed growth of resident memory from the end of the warm-up to the end."""


@dataclass(frozen=True)
class Planned:
    """One request in the soak's script."""

    language: str
    suite: str
    key: str
    """The scenario id, with ``#n`` for its n-th follow-up."""
    audio: str
    new_conversation: bool
    """The first turn of a scenario: the conversation starts afresh."""
    barge_after_s: float | None = None
    """Cut this turn's reply short this long after it is first heard, with the next request."""


def plan(settings: SoakSettings, audio: Callable[[Any, Any], list[Path]] | None = None) -> list[Planned]:
    """The script: passes over every suite's scenarios, shuffled, until ``turns`` are planned.
    ``audio(suite, scenario)`` gives each turn's recording (default: the cached synthetic speech)."""
    from bench.suites.audio import turn_audio
    from bench.suites.scenarios import load_suite

    rng = random.Random(settings.seed)
    suites = [load_suite(name) for name in settings.suites]
    audio = audio or turn_audio
    paths = {(s.suite, sc.id): [str(p) for p in audio(s, sc)] for s in suites for sc in s.scenarios}
    script: list[Planned] = []
    while len(script) < settings.turns:
        queues = [[(s, sc) for sc in s.scenarios] for s in suites]
        for queue in queues:
            rng.shuffle(queue)
        while any(queues) and len(script) < settings.turns:
            # The suites interleave in proportion to what each has left.
            queue = rng.choices([q for q in queues if q], weights=[len(q) for q in queues if q])[0]
            suite, scenario = queue.pop()
            for n, path in enumerate(paths[(suite.suite, scenario.id)]):
                key = scenario.id + (f"#{n}" if n else "")
                script.append(Planned(suite.language, suite.suite, key, path, new_conversation=n == 0))
    for i in range(len(script) - 1):
        # A press with the next request: only within one language's loop, and not twice in a row.
        following = script[i + 1]
        if following.language == script[i].language and (i == 0 or script[i - 1].barge_after_s is None):
            if rng.random() < settings.barge_in:
                script[i] = Planned(**{**asdict(script[i]), "barge_after_s": round(rng.uniform(*settings.barge_in_s), 2)})
    return script


# -- what the process holds ------------------------------------------------------------------
def process_sample() -> dict[str, Any]:
    """Resident memory, threads, open files, tasks and Python's heap, now."""
    status: dict[str, str] = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, value = line.partition(":")
        status[key] = value.strip()
    return {
        "rss_mb": round(int(status["VmRSS"].split()[0]) / 1024, 1),
        "hwm_mb": round(int(status["VmHWM"].split()[0]) / 1024, 1),
        # The models' weights are mapped from their files: their pages count as resident once read,
        # and a word never said before reads its row of the embeddings for the first time.
        "rss_file_mb": round(int(status["RssFile"].split()[0]) / 1024, 1),
        "rss_anon_mb": round(int(status["RssAnon"].split()[0]) / 1024, 1),
        "threads": int(status["Threads"]),
        "fds": len(os.listdir("/proc/self/fd")),
        "tasks": len(asyncio.all_tasks()),
        "py_blocks": sys.getallocatedblocks(),
        "gc_objects": len(gc.get_objects()),
    }


def sqlite_sample(path: Path) -> dict[str, Any]:
    """A database's size (as a reader sees it, the WAL included), its files, free pages and rows
    per table (read through a short-lived connection)."""
    wal = path.with_name(path.name + "-wal")
    sample: dict[str, Any] = {"file_bytes": path.stat().st_size, "wal_bytes": wal.stat().st_size if wal.exists() else 0}
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        (pages,) = conn.execute("PRAGMA page_count").fetchone()
        (sample["freelist_pages"],) = conn.execute("PRAGMA freelist_count").fetchone()
        (sample["page_size"],) = conn.execute("PRAGMA page_size").fetchone()
        sample["bytes"] = pages * sample["page_size"]
        tables = [name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]
        sample["rows"] = {name: conn.execute(f'SELECT COUNT(*) FROM "{name}"').fetchone()[0] for name in tables}
    finally:
        conn.close()
    return sample


def compact_size(path: Path) -> int:
    """The size the database would have with no free pages (``VACUUM INTO`` a scratch copy)."""
    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch) / "copy.db"
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            conn.execute("VACUUM INTO ?", (str(copy),))
        finally:
            conn.close()
        return copy.stat().st_size


# -- the run ---------------------------------------------------------------------------------
class Soak:
    def __init__(
        self, config: HearthConfig, settings: SoakSettings, work: Path, out: Path, command: str, arguments: Sequence[str] | None = None
    ) -> None:
        self.config = config
        self.settings = settings
        self.work = work
        self.out = out
        self.command = command
        self.loops: dict[str, LiveLoop] = {}
        self.samples: list[dict[str, Any]] = []
        self.rows: list[dict[str, Any]] = []
        self.crashes: list[dict[str, Any]] = []
        self.tap = LogTap()
        self.started = time.monotonic()
        self.startup_s = 0.0
        # the code that runs, whatever is committed while it does; arguments default to this process's
        self.provenance = written_by("bench.drills.soak", arguments)
        self.commit = self.provenance["commit"]

    async def run(self) -> dict[str, Any]:
        script = plan(self.settings)
        languages = sorted({p.language for p in script})
        logging.getLogger().addHandler(self.tap)
        try:
            for language in languages:
                config = self.config.model_copy(update={"language": language})
                loop = LiveLoop(config, self.work / f"data-{language}")
                await loop.open()
                self.loops[language] = loop
            self.startup_s = round(time.monotonic() - self.started, 1)
            self._sample()
            i = 0
            while i < len(script):
                item = script[i]
                following = script[i + 1] if item.barge_after_s is not None else None
                await self._play(item, following)
                i += 2 if following is not None else 1
                self._sample()
                self._write(self.report(final=False))
        finally:
            logging.getLogger().removeHandler(self.tap)
            for loop in self.loops.values():
                await loop.close()
        report = self.report(final=True)
        self._write(report)
        return report

    async def _play(self, item: Planned, following: Planned | None) -> None:
        loop = self.loops[item.language]
        if item.new_conversation:
            loop.forget()
        started = time.monotonic()
        failures = len(loop.failures)
        try:
            audio = read_wav(Path(item.audio), 16000)
            if following is None:
                results: list[TurnResult | None] = [await loop.say(audio)]
            else:
                first, second = await loop.say_over(audio, read_wav(Path(following.audio), 16000), item.barge_after_s or 0.0)
                results = [first, second]
        except Exception as exc:  # noqa: BLE001 - a crash is what the soak counts; the run goes on
            log.exception("turn %s raised", item.key)
            self.crashes.append({"turn": len(self.rows), "key": item.key, "error": f"{type(exc).__name__}: {exc}"})
            results = [None] if following is None else [None, None]
        elapsed = round(time.monotonic() - started, 2)
        failed = [f"{f.reason}" for f in loop.failures[failures:]]
        for n, (planned, result) in enumerate(zip([item, following], results)):
            if planned is None:
                continue
            row: dict[str, Any] = {"turn": len(self.rows), "language": planned.language, "suite": planned.suite, "key": planned.key,
                                   "elapsed_s": elapsed}
            if following is not None:
                pressed = results[1] is not None
                if n == 1 and not pressed:
                    continue  # the reply ended before the press was due: the request is played on its own below
                row["barge_in"] = ("cut" if pressed else "too late") if n == 0 else "pressed"
            if result is None:
                row["outcome"] = "crashed"
            else:
                row |= {"outcome": result.outcome.value, "transcript": result.transcript, "reply": result.reply[:120],
                        "tools": [c.name for c in result.tool_calls if c.ran]}
            if failed and n == 0:
                row["failed"] = failed
            self.rows.append(row)
        if following is not None and results[1] is None and results[0] is not None:
            await self._play(following, None)

    def _sample(self) -> None:
        sample = {"t_s": round(time.monotonic() - self.started, 1), "turns": len(self.rows), **process_sample()}
        sample["sqlite"] = {
            f"{language}/{path.name}": sqlite_sample(path) for language, loop in self.loops.items() for path in loop.sqlite_files()
        }
        self.samples.append(sample)

    def _write(self, report: dict[str, Any]) -> None:
        self.out.parent.mkdir(parents=True, exist_ok=True)
        partial = self.out.with_suffix(".partial")
        partial.write_text(json.dumps(report, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        partial.replace(self.out)

    # -- the report --------------------------------------------------------------------------
    def report(self, final: bool) -> dict[str, Any]:
        from firmware_py.wiring import describe_choice, platform_profile

        outcomes: dict[str, int] = {}
        for row in self.rows:
            outcomes[row["outcome"]] = outcomes.get(row["outcome"], 0) + 1
        errors = [r for r in self.tap.records if r[1] in ("ERROR", "CRITICAL")]
        return {
            "written_by": self.provenance,
            "kind": "soak",
            "date": date.today().isoformat(),
            "complete": final,
            "command": self.command,
            "git_commit": self.commit,
            "machine": {"platform": platform.platform(), "processor": platform.machine(), "cpus": os.cpu_count(),
                        "python": platform.python_version()},
            "configuration": describe_choice(self.config, platform_profile(self.config)),
            "settings": asdict(self.settings),
            "startup_s": self.startup_s,
            "duration_s": round(time.monotonic() - self.started, 1),
            "turns": len(self.rows),
            "outcomes": outcomes,
            "barge_ins": {kind: sum(1 for r in self.rows if r.get("barge_in") == kind) for kind in ("cut", "pressed", "too late")},
            "crashes": self.crashes,
            "failed_turns": [r for r in self.rows if r.get("failed") or r["outcome"] == Outcome.FAILED.value],
            "errors_logged": len(errors),
            "error_lines": sorted({f"{r[2]}: {r[3]}" for r in errors})[:20],
            "summary": summarize(self.samples, self.settings, self.loops if final else {}),
            "samples": self.samples,
            "turn_rows": self.rows,
        }


def summarize(samples: list[dict[str, Any]], settings: SoakSettings, loops: dict[str, LiveLoop]) -> dict[str, Any]:
    """Growth after the warm-up: memory (end against the baseline), threads and open files (the
    second half against the first), SQLite files against the rows written."""
    after = [s for s in samples if s["turns"] >= settings.warmup]
    if len(after) < 4:
        return {"judged": False, "why": f"fewer than 4 samples after the {settings.warmup}-turn warm-up"}
    base, end = after[0], after[-1]
    half = len(after) // 2
    first, second = after[:half], after[half:]
    rss_growth = (end["rss_mb"] - base["rss_mb"]) / base["rss_mb"]
    slope = _slope([s["turns"] for s in after], [s["rss_mb"] for s in after])
    summary: dict[str, Any] = {
        "judged": True,
        "warmup_turns": settings.warmup,
        "rss_mb": {"at_warmup": base["rss_mb"], "end": end["rss_mb"], "max_after_warmup": max(s["rss_mb"] for s in after),
                   "median_after_warmup": statistics.median(s["rss_mb"] for s in after), "growth": round(rss_growth, 4),
                   "slope_mb_per_100_turns": round(slope * 100, 2), "hwm_end": end["hwm_mb"]},
    }
    for part in ("rss_anon_mb", "rss_file_mb"):
        if part in base and part in end:
            summary[part] = {"at_warmup": base[part], "end": end[part], "growth": round((end[part] - base[part]) / base[part], 4)}
    for key in ("threads", "fds", "tasks"):
        summary[key] = {"at_warmup": base[key], "end": end[key], "max_first_half": max(s[key] for s in first),
                        "max_second_half": max(s[key] for s in second), "min_after_warmup": min(s[key] for s in after)}
    summary["py_blocks"] = {"at_warmup": base["py_blocks"], "end": end["py_blocks"],
                            "slope_per_100_turns": round(_slope([s["turns"] for s in after], [s["py_blocks"] for s in after]) * 100)}
    summary["sqlite"] = {name: _sqlite_growth(name, base, end, loops) for name in end["sqlite"]}
    summary["pass"] = {
        "rss_growth_within_limit": rss_growth <= settings.max_rss_growth,
        "no_thread_growth": summary["threads"]["max_second_half"] <= summary["threads"]["max_first_half"],
        "no_fd_growth": summary["fds"]["max_second_half"] <= summary["fds"]["max_first_half"],
        "sqlite_explained": all(v["explained"] for v in summary["sqlite"].values()),
    }
    return summary


def _sqlite_growth(name: str, base: dict[str, Any], end: dict[str, Any], loops: dict[str, LiveLoop]) -> dict[str, Any]:
    """A database's growth after the warm-up, and whether its rows explain it: the file is no
    bigger than a compacted copy plus its free pages, and the WAL stays within one checkpoint."""
    before, after = base["sqlite"].get(name), end["sqlite"][name]
    rows_before = sum((before or {}).get("rows", {}).values())
    rows_after = sum(after["rows"].values())
    grown = after["bytes"] - (before or {}).get("bytes", 0)
    out: dict[str, Any] = {
        "bytes_at_warmup": (before or {}).get("bytes", 0), "bytes_end": after["bytes"],
        "file_bytes_end": after["file_bytes"], "wal_bytes_end": after["wal_bytes"],
        "rows_at_warmup": rows_before, "rows_end": rows_after, "rows_by_table_end": after["rows"],
        "bytes_per_row_added": round(grown / (rows_after - rows_before), 1) if rows_after > rows_before else None,
        "free_pages_end": after["freelist_pages"],
    }
    language, _, file = name.partition("/")
    loop = loops.get(language)
    # The WAL is checkpointed every 1000 pages; a reader that never lets go would let it grow without end.
    wal_ok = after["wal_bytes"] <= 1100 * after["page_size"]
    if loop is None:
        out["explained"] = wal_ok
        return out
    compact = compact_size(loop.data_dir / file)
    out["compact_bytes_end"] = compact
    slack = after["freelist_pages"] * after["page_size"] + 16 * after["page_size"]
    out["explained"] = wal_ok and after["bytes"] <= compact + slack
    return out


def _slope(xs: list[float], ys: list[float]) -> float:
    if len(xs) < 2 or len(set(xs)) < 2:
        return 0.0
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


def summary_text(report: dict[str, Any]) -> str:
    """The few lines a person reads first."""
    s = report["summary"]
    lines = [f"{report['turns']} turns in {report['duration_s'] / 60:.0f} min; crashes {len(report['crashes'])}, "
             f"failed turns {len(report['failed_turns'])}, errors logged {report['errors_logged']}; "
             f"barge-ins {report['barge_ins']['pressed']} pressed"]
    if s.get("judged"):
        rss = s["rss_mb"]
        lines.append(f"RSS {rss['at_warmup']} MB after {s['warmup_turns']} turns -> {rss['end']} MB ({rss['growth']:+.1%}), "
                     f"max {rss['max_after_warmup']} MB; threads {s['threads']['at_warmup']} -> {s['threads']['end']}; "
                     f"open files {s['fds']['at_warmup']} -> {s['fds']['end']}")
        lines.append("pass: " + ", ".join(f"{k} {'yes' if v else 'NO'}" for k, v in s["pass"].items()))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.drills.soak", description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=30)
    parser.add_argument("--barge-in", type=float, default=0.15, help="share of replies cut short by a press (default 0.15)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--suites", nargs="*", default=list(SUITES))
    parser.add_argument("--config", type=Path, help="a hearth.toml (default: the configured defaults)")
    parser.add_argument("--work", type=Path, default=Path("out/soak"), help="the loops' data folders (emptied first)")
    parser.add_argument("--out", type=Path, default=Path(f"bench/results/soak-{date.today().isoformat()}.json"))
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("faster_whisper").setLevel(logging.WARNING)
    import shutil

    shutil.rmtree(args.work, ignore_errors=True)
    settings = SoakSettings(turns=args.turns, warmup=args.warmup, barge_in=args.barge_in, seed=args.seed, suites=tuple(args.suites))
    config = load_config(args.config)
    arguments = argv if argv is not None else sys.argv[1:]
    command = "python -m bench.drills.soak " + " ".join(arguments)
    report = asyncio.run(Soak(config, settings, args.work, args.out, command, arguments).run())
    print(summary_text(report))
    print(f"written to {args.out}")
    return 0 if not report["crashes"] and not report["failed_turns"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
