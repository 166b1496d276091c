"""Fuzzing the scenario loader: random YAML gives a suite or one SuiteError line naming the file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from hypothesis import given
from hypothesis import strategies as st

from bench.suites.scenarios import suite_from_yaml
from bench.suites.schema import Suite, SuiteError
from tests.fuzzing import fuzz

KEYS = ["suite", "language", "description", "scenarios", "id", "text", "category", "expect", "tool", "args", "answer",
        "followups", "audio", "synthetic", "numbers", "any_of", "none_of", "duration_s", "label", "value", "from_unit", "to_unit"]
WORDS = ["s", "en", "ko", "timer", "timer_start", "convert_units", "g", "cup", "a-b", "pypi:x==1/a.wav#t=2,1", "[pause 0.5]"]

scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=20), st.sampled_from(WORDS))
data = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=6), inner, max_size=5), max_leaves=30)
TOKENS = ["suite: s\n", "language: en\n", "description: d\n", "scenarios:\n", "  - id: a\n", "    text: hi\n", "    category: timer\n",
          "    expect: []\n", "    expect: [{tool: timer_start, args: {duration_s: 60}}]\n", "&a ", "*a", "[", "]", "{", "}", ": ", "- ",
          "!!binary AAAA", "!!python/object:os.system", "2001-13-45", "0x" + "f" * 5000, "9" * 5000, "? ", "|\n", "'", '"', "\t", "%YAML 1.1\n---\n"]


def _outcome(path: Path) -> Suite | None:
    try:
        return suite_from_yaml(path)
    except SuiteError as exc:
        message = str(exc)
        assert "\n" not in message and len(message) < 1000, message
        assert message.startswith(str(path)), message
        return None


def _write(tmp_path_factory: Any, content: bytes) -> Path:
    path = tmp_path_factory.mktemp("fuzz-suite") / "s.yaml"
    path.write_bytes(content)
    return path


@fuzz(scale=2)
@given(data, st.booleans())
def test_random_yaml_data_gives_a_suite_or_one_line(tmp_path_factory, document: Any, wrapped: bool):
    if wrapped:  # a valid frame around it, so that the scenario fields are reached
        document = {"suite": "s", "language": "en", "description": "d", "scenarios": [document]}
    _outcome(_write(tmp_path_factory, yaml.safe_dump(document, allow_unicode=True).encode("utf-8")))


@fuzz(scale=2)
@given(st.lists(st.sampled_from(TOKENS) | st.text(max_size=10), max_size=25))
def test_random_yaml_text_gives_a_suite_or_one_line(tmp_path_factory, tokens: list[str]):
    _outcome(_write(tmp_path_factory, "".join(tokens).encode("utf-8", "surrogatepass")))


@fuzz()
@given(st.binary(max_size=300))
def test_random_bytes_give_a_suite_or_one_line(tmp_path_factory, content: bytes):
    _outcome(_write(tmp_path_factory, content))


def test_the_frame_alone_is_a_suite(tmp_path: Path):
    # The wrapped documents above start from a valid suite: check that it is one.
    path = tmp_path / "s.yaml"
    path.write_text("suite: s\nlanguage: en\ndescription: d\nscenarios:\n  - {id: a, text: hi, category: timer, expect: []}\n")
    assert _outcome(path) is not None
