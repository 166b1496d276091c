"""Every result file in ``bench/results`` says what wrote it: the module, its arguments and the commit.

A file written today carries :func:`bench.provenance.written_by` under ``written_by`` (module,
arguments, commit, whether tracked files differed from the commit, machine). Files written before
that record carry it in their writer's own layout, listed in :data:`LEGACY` with the committed
module that writes each layout. Where the writer of the time recorded no commit, or no arguments,
the file is named in :data:`GAPS` with what it lacks (bench/results/README.md gives the commit
that added it); the list is exact, so no new file can join it.
"""

from __future__ import annotations

import json
import platform
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from bench.provenance import tree_dirty, written_by

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
COMMIT = re.compile(r"^[0-9a-f]{7,40}$")
COMMAND = re.compile(r"^(python -m bench\.[a-z_.]+|hearth bench)( |$)")


@dataclass(frozen=True)
class Legacy:
    """A layout written before ``written_by``: the committed module that writes it and where it keeps
    what ran."""

    writer: str
    """The module (path under the repository) whose code writes this layout."""
    keys: frozenset[str]
    """Keys every file of the layout has, each written as a literal by :attr:`writer`."""
    arguments: tuple[str, ...]
    """Keys holding the arguments the run was given (``command``: the whole command line, which names
    the module too); empty where the layout kept none."""
    commit: str | None
    """The key holding the commit measured; None where the layout kept none."""
    many: bool = False
    """The file is a list of such objects."""


def _keys(*names: str) -> frozenset[str]:
    return frozenset(names)


# The layouts found in bench/results, each with the module that writes it.
LEGACY: dict[str, Legacy] = {
    "echo listening": Legacy("bench/echo/listening.py", _keys("command", "canceller", "voice_rms", "per_language"),
                             ("command",), None),
    "echo choice": Legacy("bench/echo/choice.py", _keys("command", "replies", "voice_rate", "session_s", "summary", "runs"),
                          ("command",), None),
    "stop words": Legacy("bench/echo/stop_words.py", _keys("command", "hypotheses", "margin", "languages"), ("command",), None),
    "faults": Legacy("bench/drills/faults.py", _keys("kind", "git_commit", "command", "configuration", "next_request"),
                     ("command",), "git_commit"),
    "soak": Legacy("bench/drills/soak.py", _keys("kind", "complete", "command", "git_commit", "settings", "turn_rows"),
                   ("command",), "git_commit"),
    "ready time": Legacy("bench/drills/ready_time.py", _keys("command", "commit", "config", "runs", "ready_s"),
                         ("command",), "commit"),
    "page latency": Legacy("bench/loop/page_latency.py", _keys("command", "commit", "target_ms", "events", "never_seen"),
                           ("command",), "commit"),
    "kill": Legacy("bench/drills/kill.py", _keys("kills", "commit", "seed", "delay_s", "killed_on_a_step_share", "lives"),
                   ("kills", "seed", "delay_s", "killed_on_a_step_share"), "commit"),
    # `hearth bench`: the settings the runner kept (not --limit or --out), and the whole configuration.
    "hearth bench": Legacy("bench/loop/runner.py", _keys("suite", "git_commit", "config", "ablate", "rounds", "variants", "scenarios"),
                           ("suite", "config", "ablate", "rounds"), "git_commit"),
    "kitchen hearing": Legacy("bench/kitchen/hear.py",
                              _keys("suite", "room", "seed", "git_commit", "front_ends", "conditions", "condition_meta"),
                              ("suite", "room", "seed", "front_ends", "condition_meta"), "git_commit"),
    "wyoming round trip": Legacy("bench/loop/wyoming_rtt.py", _keys("suite", "requests", "figures", "git_commit", "talker"),
                                 ("suite", "requests"), "git_commit"),
    "jump forward": Legacy("bench/micro/jump_forward.py", _keys("suite", "model", "git_commit", "tool_first", "decisions"),
                           ("suite", "model", "tool_first", "decisions"), "git_commit"),
    "korean replies": Legacy("bench/suites/korean_replies.py", _keys("suites", "git_commit", "summary", "rows"),
                             ("suites",), "git_commit"),
    "ko intelligibility": Legacy("bench/voice/ko_intelligibility.py", _keys("bench", "commit", "recognizers", "scoring"),
                                 ("command",), "commit"),
    # The commit is the measured run's (read from its metrics.json); the file read was not kept.
    "reuse check": Legacy("bench/loop/reuse_check.py", _keys("commit", "decision_taken", "compared", "same_call", "different"),
                          (), "commit"),
    "audio faults": Legacy("bench/drills/audio_faults.py", _keys("bench", "outage_s", "reps", "loss_settings", "drills"),
                           ("outage_s", "reps"), None),
    "assist conversation": Legacy("bench/home_assistant/conversation.py", _keys("suite", "agent", "home_right", "home_changed_unasked"),
                                  ("suite",), None),
    "tool accuracy": Legacy("bench/suites/tool_accuracy.py", _keys("suite", "model", "reasoner", "answer", "reference", "settings"),
                            ("suite", "model", "reasoner", "answer", "reference", "settings"), None),
    "cadence linear": Legacy("bench/micro/cadence_linear.py", _keys("machine", "clock", "texts"), (), None),
    # A list, one analysis per hearing result read.
    "kitchen words": Legacy("bench/kitchen/words.py", _keys("suite", "room", "conditions"), (), None, many=True),
}

# Legacy files whose writer recorded no commit or no arguments: exactly these, with what each lacks.
_NO_COMMIT = frozenset({"commit"})
_NO_ARGUMENTS = frozenset({"arguments"})
_NEITHER = frozenset({"commit", "arguments"})
GAPS: dict[str, frozenset[str]] = {
    **{f"echo-x86_64{tail}.json": _NO_COMMIT for tail in (
        "", "-loud-voice", "-path-steps", "-path-steps-before", "-path-steps-checks", "-speex", "-run-a", "-run-b", "-run-c",
        "-run-d", "-run-e", "-run-f-en", "-run-g", "-run-i", "-run-j", "-run-k-ko", "-run-l-ko", "-run-m-ko")},
    **{f"echo-choice-x86_64{tail}.json": _NO_COMMIT for tail in ("", "-linear", "-quiet-user")},
    "stop-words-x86_64.json": _NO_COMMIT,
    "stop-words-x86_64-ko-before-jamkkan.json": _NO_COMMIT,
    "faults-audio-x86_64.json": _NO_COMMIT,
    "faults-audio-x86_64-outage20.json": _NO_COMMIT,
    **{f"home-x86_64/home-{suite}-assist.json": _NO_COMMIT for suite in ("en", "ko", "unseen-en", "unseen-ko")},
    **{f"injection-{language}{tail}.json": _NO_COMMIT for language in ("en", "ko") for tail in ("", "-answer-model", "-reasoner-1.5b")},
    "cadence-linear.json": _NEITHER,
    "kitchen-words-en-x86_64.json": _NEITHER,
    # The screen's note says what was run (every third line, the code of 176b1e0 before it was committed).
    "voice-ko-x86_64-screen.json": _NO_ARGUMENTS,
    "heartbeat-en-x86_64/reuse-check.json": _NO_ARGUMENTS,
}


def _result_files() -> list[Path]:
    return sorted(RESULTS.rglob("*.json"))


def _name(path: Path) -> str:
    return path.relative_to(RESULTS).as_posix()


def _layout(data: Any) -> tuple[str, Legacy]:
    """The one legacy layout ``data`` is in (a list: its items' layout, which must all agree)."""
    items = data if isinstance(data, list) else [data]
    assert items and all(isinstance(item, dict) for item in items), "not an object or a list of objects"
    found = {name for name, legacy in LEGACY.items()
             if legacy.many == isinstance(data, list) and all(legacy.keys <= item.keys() for item in items)}
    assert len(found) == 1, f"no single known layout (matches {sorted(found) or 'none'}); write it with written_by"
    name = found.pop()
    return name, LEGACY[name]


def _what_it_lacks(data: Any, legacy: Legacy) -> frozenset[str]:
    """The parts of module, arguments and commit the file does not name (the module is its layout's writer)."""
    items = data if isinstance(data, list) else [data]
    lacks = set()
    for item in items:
        if legacy.commit is None or not COMMIT.match(str(item.get(legacy.commit, "")).removesuffix("+changes")):
            lacks.add("commit")
        if not legacy.arguments or not all(key in item for key in legacy.arguments):
            lacks.add("arguments")
        elif "command" in legacy.arguments and not COMMAND.match(str(item["command"])):
            lacks.add("arguments")
    return frozenset(lacks)


def test_bench_results_has_files_to_check() -> None:
    assert len(_result_files()) > 20


@pytest.mark.parametrize("path", _result_files(), ids=_name)
def test_every_result_file_names_its_module_arguments_and_commit(path: Path) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    name = _name(path)
    if isinstance(data, dict) and "written_by" in data:
        record = data["written_by"]
        assert isinstance(record["module"], str) and re.fullmatch(r"[a-z_]+(\.[a-z_]+)+", record["module"])
        assert isinstance(record["arguments"], list) and all(isinstance(a, str) for a in record["arguments"])
        assert COMMIT.match(record["commit"]), record["commit"]
        assert isinstance(record["dirty"], bool)
        assert name not in GAPS, f"{name} has written_by: take it off GAPS"
        return
    _, legacy = _layout(data)
    assert _what_it_lacks(data, legacy) == GAPS.get(name, frozenset()), (
        f"{name}: a file written now carries written_by; GAPS lists only the old files that lack a part")


def test_gaps_names_only_files_that_exist() -> None:
    assert sorted(n for n in GAPS if not (RESULTS / n).is_file()) == []


@pytest.mark.parametrize("name", sorted(LEGACY))
def test_each_legacy_layout_is_written_by_committed_code(name: str) -> None:
    legacy = LEGACY[name]
    source = (ROOT / legacy.writer).read_text(encoding="utf-8")
    assert [key for key in sorted(legacy.keys) if f'"{key}"' not in source] == []


# -- the helper --------------------------------------------------------------------------------


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args], cwd=repo, check=True,
                   capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    _git(tmp_path, "init", "-q")
    (tmp_path / "code.py").write_text("x = 1\n")
    _git(tmp_path, "add", "code.py")
    _git(tmp_path, "commit", "-q", "-m", "one")
    return tmp_path


def test_written_by_names_module_arguments_commit_and_a_clean_tree(repo: Path) -> None:
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True).stdout.strip()
    record = written_by("bench.example", ["--out", "x.json"], root=repo)
    assert record["module"] == "bench.example"
    assert record["arguments"] == ["--out", "x.json"]
    assert record["commit"] == head
    assert record["dirty"] is False
    assert record["machine"]["python"] == platform.python_version()


def test_a_modified_tracked_file_makes_the_tree_dirty(repo: Path) -> None:
    (repo / "code.py").write_text("x = 2\n")
    assert written_by("bench.example", [], root=repo)["dirty"] is True
    _git(repo, "add", "code.py")  # staged is still not committed
    assert tree_dirty(repo) is True


def test_an_untracked_file_does_not_make_the_tree_dirty(repo: Path) -> None:
    (repo / "out.json").write_text("{}\n")
    assert tree_dirty(repo) is False


def test_outside_a_checkout_the_commit_and_dirtiness_are_unknown(tmp_path: Path) -> None:
    record = written_by("bench.example", [], root=tmp_path)
    assert record["commit"] == "unknown"
    assert record["dirty"] is None


def test_written_by_takes_this_process_arguments_by_default(monkeypatch: pytest.MonkeyPatch, repo: Path) -> None:
    monkeypatch.setattr(sys, "argv", ["prog", "--rounds", "3"])
    assert written_by("bench.example", root=repo)["arguments"] == ["--rounds", "3"]


# -- writers record it -------------------------------------------------------------------------


def _run_writer(main: Callable[[list[str]], int], argv: list[str]) -> None:
    assert main(argv) == 0


def test_cadence_linear_writes_written_by(tmp_path: Path) -> None:
    from bench.micro.cadence_linear import main

    out = tmp_path / "linear.json"
    argv = ["--chars", "40", "--rounds", "1", "--out", str(out)]
    _run_writer(main, argv)
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["written_by"]["module"] == "bench.micro.cadence_linear"
    assert report["written_by"]["arguments"] == argv
    assert isinstance(report["written_by"]["dirty"], bool)
    assert report["texts"]  # the figures are kept beside it


def test_reuse_check_prints_written_by_beside_the_measured_commit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from bench.loop.reuse_check import FRESH, main

    metrics = tmp_path / "metrics.json"
    row = {"scenario": "s", "turn": 0, "round": 0, "transcript": "set a timer", "tool_calls": []}
    metrics.write_text(json.dumps({"git_commit": "a" * 40, "scenarios": [
        {**row, "variant": "baseline", "decision_reused": True}, {**row, "variant": FRESH, "decision_reused": False}]}))
    _run_writer(main, [str(metrics)])
    printed = json.loads(capsys.readouterr().out)
    assert printed["commit"] == "a" * 40  # the measured run's
    assert printed["written_by"]["module"] == "bench.loop.reuse_check"
    assert printed["written_by"]["arguments"] == [str(metrics)]
    assert COMMIT.match(printed["written_by"]["commit"])
    assert printed["same_call"] == 1
