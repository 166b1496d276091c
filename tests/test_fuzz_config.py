"""Fuzzing the configuration loader: random bytes and random TOML give a config or one line.

Whatever the file holds, ``load_config`` returns a :class:`HearthConfig` or raises one
:class:`ConfigError` whose message is a single line naming the file; nothing else escapes.
"""

from __future__ import annotations

import math
import string
from datetime import date, datetime, time
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from firmware_py.config import ConfigError, HearthConfig, load_config
from tests.fuzzing import fuzz

SECTIONS = {name: field.annotation for name, field in HearthConfig.model_fields.items()}
KEYS = sorted({*SECTIONS, *(key for ann in SECTIONS.values() for key in getattr(ann, "model_fields", {}))})


def _outcome(path: Path, overrides: dict[str, Any] | None = None) -> HearthConfig | str:
    try:
        return load_config(path, overrides)
    except ConfigError as exc:
        message = str(exc)
        assert "\n" not in message and "\r" not in message, message
        assert message.startswith((f"{path}: ", "command line: ")), message
        return message


scalars = st.one_of(
    st.booleans(), st.integers(min_value=-(2**63), max_value=2**63 - 1), st.floats(), st.text(max_size=30),
    st.sampled_from(["~nosuchuser-fuzz/x", "~/models", "", "en", "ko", "gpio", "keyboard", "rgb", "auto", "none", "\n"]),
    st.dates(), st.times(), st.datetimes(),
)
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=6), inner, max_size=4), max_leaves=12)
documents = st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=8), values, max_size=6)


def _key(key: str) -> str:
    return key if key and all(c in string.ascii_letters + string.digits + "_-" for c in key) else _string(key)


def _string(text: str) -> str:
    return '"' + "".join(c if c.isprintable() and c not in '"\\' else f"\\u{ord(c):04x}" if ord(c) < 0x10000 else f"\\U{ord(c):08x}" for c in text) + '"'


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return "nan" if value != value else ("inf" if value > 0 else "-inf") if value in (float("inf"), float("-inf")) else repr(value)
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, list):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    return "{" + ", ".join(f"{_key(k)} = {_value(v)}" for k, v in value.items()) + "}"


def toml(document: dict[str, Any]) -> str:
    """``document`` written as TOML (top-level tables as [sections], the rest inline)."""
    lines, tables = [], []
    for key, value in document.items():
        (tables if isinstance(value, dict) else lines).append((key, value))
    out = [f"{_key(k)} = {_value(v)}" for k, v in lines]
    for key, table in tables:
        out.append(f"[{_key(key)}]")
        out += [f"{_key(k)} = {_value(v)}" for k, v in table.items()]
    return "\n".join(out) + "\n"


@fuzz(scale=2)
@given(st.binary(max_size=400))
def test_random_bytes_give_a_config_or_one_line(tmp_path_factory, data: bytes):
    path = tmp_path_factory.mktemp("fuzz-config") / "hearth.toml"
    path.write_bytes(data)
    _outcome(path)


@fuzz(scale=3)
@given(documents, st.sampled_from([None, {"button.kind": "keyboard", "button.led": "none"}, {"language": "ko"},
                                   {"models_dir": "~nosuchuser-fuzz/m"}, {"cadence.closeness": 0.8}]))
def test_random_toml_gives_a_config_or_one_line(tmp_path_factory, document: dict[str, Any], overrides: dict[str, Any] | None):
    path = tmp_path_factory.mktemp("fuzz-config") / "hearth.toml"
    path.write_text(toml(document), encoding="utf-8")
    outcome = _outcome(path, overrides)
    if isinstance(outcome, HearthConfig):
        # Every section refuses inf and nan (allow_inf_nan=False): a config that loads holds finite floats only.
        assert [x for x in _floats(outcome.model_dump()) if not math.isfinite(x)] == []
        assert 0.0 <= outcome.llm.temperature <= 2.0
        for value in (outcome.models_dir, outcome.tools.data_dir, outcome.tools.recipes_dir):
            assert value is None or not str(value).startswith("~")


def _floats(value: Any) -> list[float]:
    """Every float in a dumped config, however deep."""
    if isinstance(value, float):
        return [value]
    if isinstance(value, dict):
        return [x for v in value.values() for x in _floats(v)]
    if isinstance(value, list | tuple):
        return [x for v in value for x in _floats(v)]
    return []


FLOAT_SETTINGS = [(section, key) for section, ann in SECTIONS.items()
                  for key, field in getattr(ann, "model_fields", {}).items() if field.annotation is float]


def test_every_float_setting_refuses_infinity_and_nan(tmp_path: Path):
    assert ("llm", "temperature") in FLOAT_SETTINGS and len(FLOAT_SETTINGS) > 20
    path = tmp_path / "hearth.toml"
    for section, key in FLOAT_SETTINGS:
        for text in ("nan", "inf", "-inf"):
            path.write_text(f"[{section}]\n{key} = {text}\n", encoding="utf-8")
            outcome = _outcome(path)  # a config here would hold a setting at infinity or NaN
            assert isinstance(outcome, str) and key in outcome, (section, key, text, outcome)


@fuzz()
@given(st.sampled_from(KEYS), st.sampled_from([k for k, a in SECTIONS.items() if hasattr(a, "model_fields")]), values)
def test_any_section_replaced_by_a_value_gives_one_line_with_every_override(tmp_path_factory, key: str, section: str, value: Any):
    path = tmp_path_factory.mktemp("fuzz-config") / "hearth.toml"
    path.write_text(f"{_key(section)} = {_value(value)}\n", encoding="utf-8")
    _outcome(path, {f"{section}.{key}": 1, "button.kind": "keyboard", "language": "ko"})


def test_the_toml_writer_round_trips_what_it_is_given(tmp_path: Path):
    # The generator above is only useful if its files parse: check it on one document.
    import tomllib

    document = {"language": "ko", "llm": {"temperature": 0.5, "model": "a\nb"}, "x": [1, 2.5, "c"]}
    assert tomllib.loads(toml(document)) == document


def _default_document() -> dict[str, Any]:
    dumped = HearthConfig().model_dump(mode="json")
    return {k: ({kk: vv for kk, vv in v.items() if vv is not None} if isinstance(v, dict) else v) for k, v in dumped.items() if v is not None}


@fuzz(scale=2)
@given(st.lists(st.tuples(st.sampled_from([k for k, a in SECTIONS.items() if hasattr(a, "model_fields")]), st.sampled_from(KEYS), values), max_size=4))
def test_a_full_config_with_a_few_values_changed_gives_a_config_or_one_line(tmp_path_factory, changes: list[tuple[str, str, Any]]):
    document = _default_document()
    for section, key, value in changes:
        if isinstance(document.get(section), dict):
            document[section][key] = value
    path = tmp_path_factory.mktemp("fuzz-config") / "hearth.toml"
    path.write_text(toml(document), encoding="utf-8")
    outcome = _outcome(path)
    if not changes:
        assert outcome == HearthConfig()
