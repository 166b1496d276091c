"""The kill test: hearth killed with SIGKILL at random moments of turns that act, restarted, and checked.

Each life is a child process (:mod:`bench.drills.kill_child`) running scripted requests through the
real turn, tools, stores and record, in English or Korean (drawn per life).  Once it has started
and opened its files, the previous life's reports are checked against them
(:mod:`bench.drills.kill_check`); then it is told to go, and killed after a random delay.

"Acknowledged" means the acting call settled ``ok``: the change is made, the record has the
call, and hearth is about to say so.  It is reported before the first sound of the
confirmation, so every change hearth was heard confirming is among them (and one killed
between the settled call and its confirmation counts too, which only makes the test stricter).

    python -m bench.drills.kill --kills 200 --seed 1

writes ``bench/results/kill-<date>.json``: kills, acknowledged writes, writes found after the
restart (equal when nothing acknowledged was lost), turns checked, integrity results, seed, commit.
"""

from __future__ import annotations

import argparse
import collections
import json
import logging
import os
import platform
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from bench.drills.kill_check import Check, Snapshot, check_life, check_start
from bench.provenance import written_by

log = logging.getLogger(__name__)

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class KillSettings:
    """How many kills, how they are timed, and where things go."""

    kills: int = 200
    """Lives killed; each is checked after the restart that follows it."""
    seed: int = 1
    """Draws the delays, the languages and every life's requests."""
    max_delay_s: float = 10.0
    """A life is killed after a delay drawn evenly from ``min_delay_s`` to this, counted from its go."""
    min_delay_s: float = 0.0
    """The shortest delay."""
    on_event_share: float = 0.25
    """The share of lives killed instead the moment they report a given step (an acting call
    started, a call settled, the words heard), to land in the windows a delay rarely hits: between
    a store's commit and the record, between the settled call and its confirmation."""
    step_lag_s: float = 0.005
    """A kill on a step comes a delay drawn evenly from 0 to this after the step's report."""
    data_dir: Path | None = None
    """The stores and the record (default: a fresh scratch folder, kept for inspection)."""
    out: Path | None = None
    """The JSON report (default: ``bench/results/kill-<date>.json``); None with ``write=False``."""
    write: bool = True
    """Write the JSON report."""
    startup_timeout_s: float = 120.0
    """A life that does not open its files in this long is a failure."""
    arguments: tuple[str, ...] | None = None
    """The command line's arguments, recorded in the report's ``written_by`` (default: this process's)."""


class Life:
    """One hearth child process, its reports read from its stdout as they come."""

    def __init__(
        self, data_dir: Path, language: str, seed: int, number: int, stderr: Any, kill_on: str | None = None, lag_s: float = 0.0
    ) -> None:
        command = [sys.executable, "-m", "bench.drills.kill_child", "--data-dir", str(data_dir), "--language", language,
                   "--seed", str(seed), "--life", str(number)]
        self.proc = subprocess.Popen(command, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr)
        self.reports: list[dict[str, Any]] = []
        self.kill_on = kill_on
        """Kill ``lag_s`` after a report of this kind is read (from the reading thread, so at once)."""
        self.lag_s = lag_s
        self.killed = threading.Event()
        self.ready = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            report = json.loads(raw)
            self.reports.append(report)
            if report.get("event") == "ready":
                self.ready.set()
            elif report.get("event") == self.kill_on and not self.killed.is_set():
                time.sleep(self.lag_s)
                self.proc.send_signal(signal.SIGKILL)
                self.killed.set()
        self.ready.set()  # ended: whoever waits for ready sees it never came

    def go(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"go\n")
        self.proc.stdin.flush()

    def kill(self) -> int:
        if not self.killed.is_set():
            self.proc.send_signal(signal.SIGKILL)
            self.killed.set()
        code = self.proc.wait()
        self._reader.join()
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        return code


def _last_state(reports: list[dict[str, Any]]) -> str:
    """Where the kill found hearth: the last state it showed, or the step of a turn under way."""
    state = "starting"
    for report in reports:
        kind = report.get("event")
        if kind == "ready":
            state = "ready"
        elif kind == "state":
            state = report["state"]
        elif kind == "started":
            state = "acting (call started, not settled)"
        elif kind in ("ack", "called"):
            state = "acting (call settled, confirmation not yet heard)"
    return state


def run(settings: KillSettings) -> dict[str, Any]:
    provenance = written_by("bench.drills.kill", settings.arguments)  # the code as it starts
    rng = random.Random(settings.seed)
    data_dir = settings.data_dir or Path(tempfile.mkdtemp(prefix="hearth-kill-"))
    data_dir.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    totals: collections.Counter[str] = collections.Counter()
    integrity_counts: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    killed_in: collections.Counter[str] = collections.Counter()
    failures: list[str] = []
    lives: list[dict[str, Any]] = []
    previous: list[dict[str, Any]] | None = None
    before: Snapshot = {}
    stderr_path = data_dir / "children.log"
    with open(stderr_path, "ab") as stderr:
        for number in range(settings.kills + 1):
            language = rng.choice(("en", "ko"))
            delay = rng.uniform(settings.min_delay_s, settings.max_delay_s)
            kill_on = rng.choice(("started", "ack", "words")) if rng.random() < settings.on_event_share else None
            # Up to a few milliseconds after the step: a store's commit and the record's are that far apart.
            lag = rng.uniform(0.0, settings.step_lag_s)
            life = Life(data_dir, language, settings.seed, number, stderr, kill_on, lag)
            if not life.ready.wait(settings.startup_timeout_s) or life.proc.poll() is not None:
                life.kill()
                raise RuntimeError(f"life {number} did not start; see {stderr_path}")
            check = check_life(data_dir, previous, before) if previous is not None else check_start(data_dir)
            before = check.snapshot
            for name, result in check.integrity.items():
                integrity_counts[name]["ok" if result == "ok" else "not ok"] += 1
            failures += [f"after kill {number}: {f}" for f in check.failures]
            if previous is not None:
                _add(totals, check)
                lives[-1].update(acknowledged=check.acknowledged, found=check.found)
            if number == settings.kills:
                life.kill()  # the last start only checks the last kill
                break
            life.go()
            went = time.monotonic()
            if kill_on is None:
                time.sleep(delay)
                on_event = False
            else:  # at the first report of the step, or after the longest delay if none comes
                on_event = life.killed.wait(settings.max_delay_s)
            if life.proc.poll() is not None and not life.killed.is_set():
                raise RuntimeError(f"life {number} ended by itself (exit {life.proc.returncode}); see {stderr_path}")
            life.kill()
            when = f"{lag * 1000:.1f} ms after {kill_on}" if on_event else f"after {time.monotonic() - went:.2f} s"
            previous = life.reports
            killed_in[_last_state(previous)] += 1
            lives.append({"life": number, "language": language, "killed": when, "killed_in": _last_state(previous)})
            print(f"kill {number + 1}/{settings.kills}: {language}, {when}, in {lives[-1]['killed_in']}; "
                  f"checked so far: {totals['acknowledged']} acknowledged, {totals['found']} found", file=sys.stderr, flush=True)
    tracebacks = stderr_path.read_text(encoding="utf-8", errors="replace").count("Traceback")
    report = {
        "kills": settings.kills,
        "acknowledged_writes": totals["acknowledged"],
        "writes_found_after_restart": totals["found"],
        "acknowledged_and_heard_to_the_end": totals["heard_confirmations"],
        "turns_checked": totals["turns"],
        "user_words_checked": totals["words"],
        "units_heard_checked": totals["units"],
        "store_rows_checked": totals["rows"],
        "changes_made": totals["changes"],
        "changes_made_but_not_acknowledged": totals["unacknowledged_changes"],
        "integrity": {name: dict(counts) for name, counts in integrity_counts.items()},
        "failures": failures,
        "child_tracebacks": tracebacks,
        "killed_in": dict(killed_in.most_common()),
        "seed": settings.seed,
        "delay_s": [settings.min_delay_s, settings.max_delay_s],
        "killed_on_a_step_share": settings.on_event_share,
        "step_lag_s": [0.0, settings.step_lag_s],
        "commit": provenance["commit"] + ("+changes" if provenance["dirty"] else ""),
        "date": date.today().isoformat(),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
        "wall_s": round(time.monotonic() - started, 1),
        "data_dir": str(data_dir),
        "real": "the assistant and its turns (Silero voice detector, planner parsing, argument repair and grounding, "
                "tool executor, Cadence, spoken units), the tools and their SQLite stores, the conversation record, "
                "the timer watcher, espeak-ng speaking into a clocked WAV speaker, SIGKILL",
        "scripted": "the user's words (spoken by espeak-ng into the microphone, recognized as the script says: no ASR) "
                    "and the talker's decision (the JSON the model would write for the request)",
        "acknowledged_means": "the acting call settled ok: the change is made, the record has the call, and the "
                              "confirmation is about to be spoken (reported before its first sound)",
        "lives": lives,
        "written_by": provenance,
    }
    if settings.write:
        out = settings.out or ROOT / "bench" / "results" / f"kill-{date.today().isoformat()}.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(report, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        report["written_to"] = str(out)
    return report


def _add(totals: collections.Counter[str], check: Check) -> None:
    totals["acknowledged"] += check.acknowledged
    totals["found"] += check.found
    totals["heard_confirmations"] += check.heard_confirmations
    totals["turns"] += len(check.turns)
    totals["words"] += check.words
    totals["units"] += check.units
    totals["rows"] += check.rows
    totals["changes"] += check.changes
    totals["unacknowledged_changes"] += check.unacknowledged_changes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.drills.kill", description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--max-delay", type=float, default=10.0, help="longest wait before a kill, in seconds")
    parser.add_argument("--min-delay", type=float, default=0.0, help="shortest wait before a kill, in seconds")
    parser.add_argument("--on-event-share", type=float, default=0.25, help="share of kills made the moment a step is reported")
    parser.add_argument("--data-dir", type=Path, help="where the stores and the record go (default: a new scratch folder)")
    parser.add_argument("--out", type=Path, help="the JSON report (default: bench/results/kill-<date>.json)")
    args = parser.parse_args(argv)
    report = run(KillSettings(kills=args.kills, seed=args.seed, max_delay_s=args.max_delay, min_delay_s=args.min_delay,
                              on_event_share=args.on_event_share, data_dir=args.data_dir, out=args.out,
                              arguments=tuple(argv if argv is not None else sys.argv[1:])))
    print(f"{report['kills']} kills: {report['acknowledged_writes']} acknowledged writes, "
          f"{report['writes_found_after_restart']} found after restart; {report['turns_checked']} turns checked; "
          f"integrity {report['integrity']}; {len(report['failures'])} failures; written to {report.get('written_to')}")
    return 0 if not report["failures"] and report["acknowledged_writes"] == report["writes_found_after_restart"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
