"""``python -m bench.drills.faults``: each fault performed on hearth's loop, and how hearth came through it.

Turn faults are injected into a running English loop (real models, the tools' stores and the
record on disk, requests played from WAV files): a stage that raises for the length of one turn,
a tool that fails, a full disk under a tool and under the record, a tool that hangs in its
thread.  For each: what the listener heard and what the log said, whether the turn ended politely
(an apology, or the answer when only the record failed; nothing claimed that did not happen), and
the time from the end of that turn until the next request ("What time is it?") has been answered,
against the same request on a loop with no fault.

Start-up faults are run as ``hearth`` itself would be: a damaged model file (its head garbled, a
file zeroed, its middle garbled) and bad configuration values, each through the command line:
the line printed, the exit status and the time it took.

    python -m bench.drills.faults --out bench/results/faults-$(date +%F).json
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from agent.results import Outcome, TurnResult
from audio.wav import read_wav
from bench.loop.live_loop import LiveLoop, LogTap
from bench.provenance import written_by
from firmware_py.config import HearthConfig, load_config

log = logging.getLogger(__name__)

NEXT_REQUEST = "What time is it?"
"""The request made right after each fault: the loop must answer it as if nothing had happened."""


class DrillFault(RuntimeError):
    """What an injected fault raises (its message says it was injected)."""


@dataclass(frozen=True)
class TurnDrill:
    name: str
    """What goes wrong."""
    request: str
    """What the user asks while it does."""
    inject: Callable[[LiveLoop], contextlib.AbstractContextManager[None]]
    """Makes the fault happen for the length of one turn."""
    polite: Callable[[TurnResult], bool]
    """Whether the turn ended as it should: an apology (or the answer, when the fault need not reach
    the listener), and nothing claimed that did not happen."""
    times: int = 1
    """How many times the request is made while the fault lasts (a tool still stuck from the last)."""


# -- injections ------------------------------------------------------------------------------
@contextlib.contextmanager
def patched(owner: Any, name: str, replacement: Any) -> Iterator[None]:
    """``owner.name`` is ``replacement`` inside the block (an instance attribute shadowing the method)."""
    setattr(owner, name, replacement)
    try:
        yield
    finally:
        delattr(owner, name)


class Failing:
    """Says when an injected fault strikes: the first ``times`` calls, or every call (None)."""

    def __init__(self, message: str, times: int | None = None) -> None:
        self.message = message
        self.times = times

    def strike(self) -> None:
        if self.times is None or self.times > 0:
            if self.times is not None:
                self.times -= 1
            raise DrillFault(self.message)


def stage(attr: str, method: str, message: str, times: int | None = None, stream: bool = True):
    """A component's method (``deps.<attr>.<method>``) that raises: an async iterator that raises
    before its first item when ``stream``, else a plain call."""

    def inject(loop: LiveLoop) -> contextlib.AbstractContextManager[None]:
        assert loop.assistant is not None
        deps = loop.assistant.deps
        owner = deps.reasoner.chat if attr == "reasoner.chat" else getattr(deps, attr)  # type: ignore[union-attr]
        real = getattr(owner, method)
        fault = Failing(message, times)

        async def iterate(*args: Any, **kwargs: Any) -> AsyncIterator[Any]:
            fault.strike()
            async for item in real(*args, **kwargs):
                yield item

        def call(*args: Any, **kwargs: Any) -> Any:
            fault.strike()
            return real(*args, **kwargs)

        return patched(owner, method, iterate if stream else call)

    return inject


def failing_speaker(message: str, times: int):
    def inject(loop: LiveLoop) -> contextlib.AbstractContextManager[None]:
        assert loop.assistant is not None
        speaker = loop.assistant.deps.speaker
        real = speaker.write
        fault = Failing(message, times)

        async def write(*args: Any, **kwargs: Any) -> None:
            fault.strike()
            await real(*args, **kwargs)

        return patched(speaker, "write", write)

    return inject


def home(loop: LiveLoop) -> Any:
    assert loop.assistant is not None and loop.assistant.deps.tools is not None
    return loop.assistant.deps.tools.home


@contextlib.contextmanager
def capped(conn: sqlite3.Connection, fill: Callable[[int], None]) -> Iterator[None]:
    """SQLite's page cap at the database's size, then written to until it is full: a full disk."""
    (pages,) = conn.execute("PRAGMA page_count").fetchone()
    conn.execute(f"PRAGMA max_page_count = {pages}")
    try:
        for n in range(100_000):
            fill(n)
    except sqlite3.OperationalError as exc:
        if "full" not in str(exc):
            raise
    try:
        yield
    finally:
        conn.execute("PRAGMA max_page_count = 1073741823")


def tool_store_full(loop: LiveLoop) -> contextlib.AbstractContextManager[None]:
    lists = home(loop).lists
    return capped(lists.conn, lambda n: lists.add(f"filler {n:05d}"))


def record_full(loop: LiveLoop) -> contextlib.AbstractContextManager[None]:
    from agent.record import RecordEntry

    assert loop.assistant is not None
    record = loop.assistant.record
    conn = record._conn  # noqa: SLF001 - the drill caps the record's own connection, as a full disk would
    return capped(conn, lambda n: record.append([RecordEntry(0, "assistant", f"filler {n:05d}", "spoken")]))


def tool_raises(loop: LiveLoop) -> contextlib.AbstractContextManager[None]:
    return patched(home(loop).lists, "add", lambda *_a, **_k: Failing("disk I/O error (injected)").strike())


@contextlib.contextmanager
def weather_hangs(_loop: LiveLoop) -> Iterator[None]:
    """The forecast read never returns (a stuck disk or sensor), in the weather tool's thread."""
    import tools.weather as weather

    stuck = threading.Event()
    real = weather._ask  # noqa: SLF001 - the read the tool makes in its thread

    def hang(*_args: Any) -> Any:
        stuck.wait()
        raise DrillFault("the forecast read was stuck (injected)")

    weather._ask = hang  # type: ignore[assignment]
    try:
        yield
    finally:
        weather._ask = real  # type: ignore[assignment]
        stuck.set()


# -- what counts as polite -------------------------------------------------------------------
def apologised(result: TurnResult) -> bool:
    return result.outcome == Outcome.FAILED and any(s.startswith("Sorry, something went wrong") for s in result.spoken)


def answered(result: TurnResult) -> bool:
    return result.outcome == Outcome.ANSWERED and bool(result.spoken)


def silent_failure(result: TurnResult) -> bool:
    """The voice itself is gone for the turn: nothing can be said; the log says it."""
    return result.outcome == Outcome.FAILED and not result.spoken


def said(line: str) -> Callable[[TurnResult], bool]:
    def check(result: TurnResult) -> bool:
        return answered(result) and line in " ".join(result.spoken) and not any(c.acted for c in result.tool_calls)

    return check


TURN_DRILLS = (
    TurnDrill("voice detector raises", NEXT_REQUEST, stage("vad", "accept", "voice detector failed (injected)", stream=False), apologised),
    TurnDrill("recognizer raises", NEXT_REQUEST, stage("recognizer", "transcribe", "decoder failed (injected)"), apologised),
    TurnDrill("talker model raises", NEXT_REQUEST, stage("chat", "stream", "llama_decode failed (injected)"), apologised),
    TurnDrill("reasoner model raises", "How long do I boil an egg for a runny yolk?",
              stage("reasoner.chat", "stream", "llama_decode failed (injected)"), answered),
    TurnDrill("synthesizer raises once", NEXT_REQUEST, stage("synthesizer", "synthesize", "piper failed (injected)", times=1), apologised),
    TurnDrill("synthesizer raises all turn", NEXT_REQUEST, stage("synthesizer", "synthesize", "piper failed (injected)"), silent_failure),
    TurnDrill("speaker raises once", NEXT_REQUEST, failing_speaker("PortAudio error (injected)", times=1), apologised),
    TurnDrill("tool raises", "Put three lemons on my shopping list.", tool_raises, said("Sorry, something went wrong with the shopping list.")),
    TurnDrill("disk full under a tool", "Add milk to the shopping list.", tool_store_full, said("Sorry, I couldn't save that")),
    TurnDrill("disk full under the record", NEXT_REQUEST, record_full, answered),
    TurnDrill("tool hangs in its thread (asked twice)", "Is it going to rain tomorrow?", weather_hangs,
              said("Sorry, that took too long."), times=2),
)


# -- the turn drills -------------------------------------------------------------------------
class TurnDrills:
    def __init__(self, config: HearthConfig, work: Path, tap: LogTap) -> None:
        self.loop = LiveLoop(config.model_copy(update={"language": "en"}), work / "data")
        self.tap = tap

    async def _say(self, text: str) -> tuple[TurnResult, float]:
        from bench.suites.audio import scenario_audio

        audio = read_wav(await asyncio.to_thread(scenario_audio, text, "en"), 16000)
        started = time.monotonic()
        result = await self.loop.say(audio)
        return result, time.monotonic() - started

    async def run(self, drills: tuple[TurnDrill, ...]) -> dict[str, Any]:
        await self.loop.open()
        try:
            await self._say(NEXT_REQUEST)  # the first turn pays for what is loaded lazily
            baseline = [round((await self._say(NEXT_REQUEST))[1], 2) for _ in range(3)]
            rows = []
            for drill in drills:
                self.loop.forget()
                rows.append(await self._drill(drill))
            return {"baseline_next_request_s": baseline, "drills": rows}
        finally:
            await self.loop.close()

    async def _drill(self, drill: TurnDrill) -> dict[str, Any]:
        threads = threading.active_count()
        failures = len(self.loop.failures)
        started = time.monotonic()
        crashed: str | None = None
        results: list[TurnResult] = []
        took: list[float] = []
        with drill.inject(self.loop):
            try:
                for _ in range(drill.times):
                    result, seconds = await self._say(drill.request)
                    results.append(result)
                    took.append(round(seconds, 2))
            except Exception as exc:  # noqa: BLE001 - a turn that raises is what a drill must not see
                crashed = f"{type(exc).__name__}: {exc}"
        ended = time.monotonic()
        logged = [f"{level} {name}: {message}" for _t, level, name, message in self.tap.since(started)]
        row: dict[str, Any] = {"fault": drill.name, "request": drill.request, "turn_s": took}
        if crashed is not None:
            row |= {"crashed": crashed, "polite": False}
        else:
            row |= {
                "outcome": [r.outcome.value for r in results],
                "heard": [" ".join(r.spoken) for r in results],
                "polite": all(drill.polite(r) for r in results),
                "told": [f.stage for f in self.loop.failures[failures:]],
            }
        row["logged"] = logged[:6]
        nxt, next_s = await self._say(NEXT_REQUEST)
        row |= {
            "next_turn": nxt.outcome.value,
            "next_heard": " ".join(nxt.spoken),
            "next_ok": nxt.outcome == Outcome.ANSWERED and bool(nxt.spoken),
            "recovered_after_s": round(time.monotonic() - ended, 2),
            "next_turn_s": round(next_s, 2),
            "threads_added": threading.active_count() - threads,
        }
        log.warning("drill %s: %s", drill.name, {k: row[k] for k in ("polite", "next_ok", "recovered_after_s")})
        return row


# -- start-up drills -------------------------------------------------------------------------
def _models_copy(source: Path, dest: Path, damaged: str) -> Path:
    """A models folder whose models are links to ``source``'s, but ``damaged``, copied to be damaged."""
    dest.mkdir(parents=True)
    for model in source.iterdir():
        if model.is_dir():
            if model.name == damaged:
                shutil.copytree(model, dest / model.name)
            else:
                (dest / model.name).symlink_to(model)
    return dest / damaged


def _garble(path: Path, where: str) -> None:
    size = path.stat().st_size
    if where == "zeroed":
        path.unlink()
        with path.open("wb") as out:
            out.truncate(size)  # same size, all zeros (sparse: no room taken)
        return
    with path.open("r+b") as out:
        out.seek(0 if where == "head" else size // 2)
        out.write(os.urandom(4096))


MODEL_DRILLS = (
    ("smollm2-135m-instruct", "model.gguf", "head", "demo"),
    ("smart-turn-v3", "smart-turn-v3.2-cpu.onnx", "head", "demo"),
    ("piper-en-joe", "model.onnx", "head", "demo"),
    ("whisper-tiny-en", "model.bin", "head", "demo"),
    ("qwen2.5-coder-1.5b", "model.gguf", "zeroed", "demo"),
    ("smollm2-135m-instruct", "model.gguf", "middle", "run"),
)
"""(model, file, damage, command): ``run`` hashes every model at start-up; the demo only when one fails to load."""

CONFIG_DRILLS = (
    ('language = "fr"', "run"),
    ('[llm]\ntemperature = "hot"', "run"),
    ("[vad]\nthreshold = 7", "run"),
    ('[listen]\nend_of_turn_model = "whisper-base"', "run"),
    ('[asr]\nmodel_en = "nope"', "run"),
    ('[reasoner]\nwhere = "remote"', "run"),
    ('models_dir = "/nonexistent"', "run"),
    ('[tools]\ndata_dir = "/proc/hearth"', "run"),
    ('[audio]\noutput_device = "no such speaker"', "run"),
)


def _hearth(args: list[str], env: dict[str, str], timeout_s: float = 600) -> dict[str, Any]:
    started = time.monotonic()
    try:
        done = subprocess.run([sys.executable, "-m", "firmware_py.cli", *args], capture_output=True, text=True, env=env,
                              timeout=timeout_s, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return {"exit": None, "lines": ["(no answer: timed out)"], "took_s": round(time.monotonic() - started, 1)}
    # The first line of ``hearth run`` says what runs where; the rest is what the drill is about.
    lines = [line for line in done.stderr.splitlines() if line.strip() and not line.startswith("hearth: platform ")]
    return {"exit": done.returncode, "lines": lines[-8:], "line_count": len(lines), "traceback": "Traceback" in done.stderr,
            "took_s": round(time.monotonic() - started, 1)}


def startup_drills(models: Path, work: Path, words: list[str]) -> list[dict[str, Any]]:
    env = {**os.environ, "HEARTH_DATA_DIR": str(work / "startup-data")}
    rows = []
    wanted = (lambda name: not words or any(w in name for w in words))  # noqa: E731
    for model, file, damage, command in MODEL_DRILLS:
        if not wanted(f"{model}/{file} {damage}"):
            continue
        with tempfile.TemporaryDirectory(dir=work) as scratch:
            target = _models_copy(models, Path(scratch) / "models", model) / file
            _garble(target, damage)
            args = [command, "--models-dir", str(target.parent.parent)]
            args += ["--out", str(Path(scratch) / "reply.wav")] if command == "demo" else ["--keyboard"]
            outcome = _hearth(args, env)
        rows.append({"fault": f"{model}/{file} {damage}", "command": f"hearth {command}", **outcome,
                     "names_model": any(model in line for line in outcome["lines"]),
                     "says_install": any(f"hearth models install {model}" in line for line in outcome["lines"])})
        log.warning("drill %s: exit %s, %s", rows[-1]["fault"], outcome["exit"], outcome["lines"][-1:])
    for text, command in CONFIG_DRILLS:
        if not wanted(f"configuration: {text}"):
            continue
        config = work / "bad.toml"
        config.write_text(text + "\n", encoding="utf-8")
        args = [command, "--config", str(config)] + ([] if "models_dir" in text else ["--models-dir", str(models)])
        args += ["--out", str(work / "reply.wav")] if command == "demo" else ["--keyboard"]
        outcome = _hearth(args, env)
        rows.append({"fault": f"configuration: {text.replace(chr(10), ' ')}", "command": f"hearth {command}", **outcome})
        log.warning("drill %s: exit %s, %s", rows[-1]["fault"], outcome["exit"], outcome["lines"][-1:])
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.drills.faults", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path(f"bench/results/faults-{date.today().isoformat()}.json"))
    parser.add_argument("--work", type=Path, default=Path("out/faults"), help="scratch folder (emptied first)")
    parser.add_argument("--config", type=Path, help="a hearth.toml (default: the configured defaults)")
    parser.add_argument("--only", choices=["turn", "startup"], help="run one kind of drill")
    parser.add_argument("--faults", nargs="*", default=[], metavar="WORD", help="only the drills whose name holds one of these words")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    shutil.rmtree(args.work, ignore_errors=True)
    args.work.mkdir(parents=True)
    config = load_config(args.config)
    from firmware_py.wiring import describe_choice, model_store, platform_profile

    provenance = written_by("bench.drills.faults", argv)
    report: dict[str, Any] = {
        "written_by": provenance,
        "kind": "faults", "date": date.today().isoformat(), "git_commit": provenance["commit"],
        "command": "python -m bench.drills.faults " + " ".join(provenance["arguments"]),
        "configuration": describe_choice(config, platform_profile(config)), "next_request": NEXT_REQUEST,
    }
    if args.only != "startup":
        tap = LogTap()
        logging.getLogger().addHandler(tap)
        try:
            drills = tuple(d for d in TURN_DRILLS if not args.faults or any(w in d.name for w in args.faults))
            report["turn"] = asyncio.run(TurnDrills(config, args.work, tap).run(drills))
        finally:
            logging.getLogger().removeHandler(tap)
    if args.only != "turn":
        report["startup"] = startup_drills(model_store(config).root, args.work.resolve(), args.faults)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    turn_rows = report.get("turn", {}).get("drills", [])
    print(f"{sum(r['polite'] for r in turn_rows)} of {len(turn_rows)} turn faults ended politely, "
          f"{sum(r['next_ok'] for r in turn_rows)} followed by a served turn; "
          f"{sum(1 for r in report.get('startup', []) if r['exit'] not in (0, None) and r.get('line_count') == 1 and not r['traceback'])}"
          f" of {len(report.get('startup', []))} start-up faults gave one line and a non-zero exit; written to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
