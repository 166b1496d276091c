"""The lane guard in conftest: a test that needs the real lane's models or sound server, and a file
with tests in both lanes, are named at collection."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.conftest import lane_problems


@dataclass
class _Item:
    nodeid: str
    path: Path
    marks: tuple[str, ...] = ()
    fixturenames: list[str] = field(default_factory=list)

    def iter_markers(self):
        return (getattr(pytest.mark, name).mark for name in self.marks)


def test_a_model_fixture_without_the_integration_mark_is_named():
    item = _Item("tests/test_x.py::test_a", Path("tests/test_x.py"), fixturenames=["tmp_path", "model_path"])
    assert lane_problems([item]) == ["tests/test_x.py::test_a uses the fixture model_path: mark it integration"]


def test_the_null_sink_needs_the_audio_mark_and_nothing_else_does():
    sink = _Item("tests/test_y.py::test_b", Path("tests/test_y.py"), marks=("integration",), fixturenames=["pulse_null_sink"])
    assert lane_problems([sink]) == ["tests/test_y.py::test_b uses the fixture pulse_null_sink: mark it audio"]
    marked = _Item("tests/test_y.py::test_c", Path("tests/test_y.py"), marks=("audio",), fixturenames=["pulse_null_sink"])
    assert lane_problems([marked]) == []


def test_a_file_with_tests_in_both_lanes_is_named_once():
    path = Path("tests/test_mixed.py")
    items = [
        _Item("tests/test_mixed.py::test_fast", path),
        _Item("tests/test_mixed.py::test_real", path, marks=("browser",)),
        _Item("tests/test_mixed.py::test_fast_too", path),
    ]
    assert lane_problems(items) == ["test_mixed.py has tests in both lanes: put the marked ones in a file of their own"]

