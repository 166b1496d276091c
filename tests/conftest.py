"""Shared fixtures, and the two lanes.

Integration tests use the real models in the models directory (``HEARTH_MODELS_DIR``,
default ``~/.local/share/hearth/models``).  A missing model is a failure, never a
skip: CI installs them first with ``hearth models install``.

The tests run in two lanes (``make test-fast``, then the rest in ``make test``): the fast lane
is every test without a lane mark, run with an empty models directory; the real lane holds the
tests marked ``integration`` (real models), ``audio`` (PortAudio on a PulseAudio null sink),
``browser`` (headless Chromium) or ``home_assistant`` (a real Home Assistant core on loopback).  A test file belongs to one lane, and a test that asks for the
models or the null sink must carry the mark: collection stops, naming the test, otherwise.
"""

from __future__ import annotations

import os
from collections import defaultdict
from pathlib import Path

import pytest

LANE_MARKS = ("integration", "audio", "browser", "home_assistant")
"""A test with any of these marks runs in the real lane; without, in the fast lane."""

FIXTURE_MARKS = {"models_dir": "integration", "model_path": "integration", "pulse_null_sink": "audio",
                 "home_assistant_core": "home_assistant"}
"""Fixtures that need what only the real lane has, and the mark a test using them must carry."""


def lane_problems(items: list[pytest.Item]) -> list[str]:
    """Tests that would run in the wrong lane: a fixture's mark missing, a file in both lanes."""
    problems: list[str] = []
    lanes: dict[Path, set[bool]] = defaultdict(set)
    for item in items:
        marks = {mark.name for mark in item.iter_markers()} & set(LANE_MARKS)
        for fixture, mark in FIXTURE_MARKS.items():
            if fixture in getattr(item, "fixturenames", ()) and mark not in marks:
                problems.append(f"{item.nodeid} uses the fixture {fixture}: mark it {mark}")
        lanes[item.path].add(bool(marks))
    for path, kinds in sorted(lanes.items()):
        if len(kinds) > 1:
            problems.append(f"{path.name} has tests in both lanes: put the marked ones in a file of their own")
    return problems


@pytest.hookimpl(tryfirst=True)  # before ``-m`` deselects: every test of a file is seen
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    problems = lane_problems(items)
    if problems:
        raise pytest.UsageError("tests in the wrong lane:\n  " + "\n  ".join(problems))


def _models_dir() -> Path:
    env = os.environ.get("HEARTH_MODELS_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "hearth" / "models"


@pytest.fixture(scope="session")
def models_dir() -> Path:
    return _models_dir()


@pytest.fixture(scope="session")
def model_path(models_dir: Path):
    """Return a function that resolves a path inside the models directory or fails loudly."""

    def resolve(relative: str) -> Path:
        path = models_dir / relative
        if not path.exists():
            pytest.fail(
                f"model file {path} is missing: run `hearth models install` "
                f"(or set HEARTH_MODELS_DIR)",
                pytrace=False,
            )
        return path

    return resolve


# The PulseAudio null-sink fixture, for every test that plays or records through PortAudio.
from tests.pulse import pulse_null_sink  # noqa: E402,F401


@pytest.fixture(autouse=True)
def _scratch_data_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Timers, lists and indexes a test makes never land in the user's own data folder."""
    folder = tmp_path_factory.mktemp("hearth-data")
    monkeypatch.setenv("HEARTH_DATA_DIR", str(folder))
    return folder


@pytest.fixture(scope="session")
def home_assistant_core(tmp_path_factory: pytest.TempPathFactory):
    """A real Home Assistant core on loopback, onboarded and furnished (bench/home_assistant/core.py);
    fails, never skips, without .ha-venv (``make setup-ha``)."""
    from bench.home_assistant.core import remove_core, start_core

    try:
        core = start_core(tmp_path_factory.mktemp("home-assistant"))
    except RuntimeError as exc:
        pytest.fail(str(exc))
    yield core
    remove_core(core)
