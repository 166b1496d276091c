"""Fuzzing every tool's arguments through the real executor and the real stores (in a tmp folder).

Each call gets arguments as a model might write them, and as it never should: huge and negative
integers, NaN and infinity, blank and overlong text, wrong types, unknown keys.  The answer is
either a clear refusal at validation ("invalid_arguments", never a tool that failed inside) or an
answer a speaker can say: no infinity, no NaN, no exponent, no number of more than ten digits
(the arguments' own text, echoed back, is not held to that).  In English and in Korean.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from firmware_py.config import parse_config
from firmware_py.home_tools import HomeTools, open_home_tools
from tests.fuzzing import fuzz, speakable_problems
from tools.convert import UNIT_ALIASES

LANGUAGES = ("en", "ko")


def _forecast(path: Path) -> None:
    now = datetime.now(timezone.utc).replace(minute=0, second=0, microsecond=0)
    hours = [now + timedelta(hours=i) for i in range(-3, 72)]
    place = {
        "name": "Ilsan", "aliases": ["일산"], "utc_offset_s": 9 * 3600,
        "hourly": [{"time": h.isoformat(), "temperature_c": -3.5 + h.hour, "humidity_pct": 40, "precipitation_probability_pct": 20,
                    "condition": "rain", "wind_kmh": 9} for h in hours],
        "daily": [{"date": (now.date() + timedelta(days=d)).isoformat(), "temp_min_c": -12, "temp_max_c": 31,
                   "precipitation_probability_pct": 90, "condition": "snow"} for d in range(4)],
        "air_quality": [{"time": h.isoformat(), "pm2_5": 4000, "pm10": 0} for h in hours],
    }
    path.write_text(json.dumps({"version": 1, "fetched_at": now.isoformat(), "locations": {"ilsan": place}}), encoding="utf-8")


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[asyncio.AbstractEventLoop, dict[str, HomeTools]]]:
    loop = asyncio.new_event_loop()
    opened: dict[str, HomeTools] = {}
    for language in LANGUAGES:
        folder = tmp_path_factory.mktemp(f"fuzz-tools-{language}")
        _forecast(folder / "forecast.json")
        config = parse_config({"language": language, "tools": {"data_dir": str(folder), "home": "Ilsan"}})
        opened[language] = loop.run_until_complete(open_home_tools(config))
    yield loop, opened
    for tools in opened.values():
        loop.run_until_complete(tools.close())
    loop.close()


_WORDS = ["pasta", "milk", "oat milk", "flour", "butter", "honey", "banana bread", "김치찌개", "파스타", "우유", "Ilsan", "일산",
          "tomorrow", "내일", "tonight", "friday", "next", "back", "repeat", "first", "ingredients", "second", "last", "the 5 minute"]
_UNITS = sorted(set(UNIT_ALIASES) | set(UNIT_ALIASES.values()))

wild = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=-(10**400), max_value=10**400),
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(min_value=-20_000, max_value=20_000),
    st.text(max_size=40),
    st.text(alphabet=" \t\n\u3000", max_size=8),
    st.text(min_size=50, max_size=1200),
    st.sampled_from(_WORDS + _UNITS),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
    st.sampled_from(["NaN", "inf", "-Infinity", "1e308", "10" * 200, "", " "]),
)
"""Any value a model could put in an argument, sensible or not."""

plausible = st.one_of(
    st.integers(min_value=-100_000, max_value=200_000),
    st.floats(min_value=-0.01, max_value=12_000, allow_nan=False),
    st.sampled_from(_WORDS + _UNITS),
    st.booleans(),
)
"""Values near what a kitchen asks for, so that calls also get past validation."""


@st.composite
def calls(draw: st.DrawFn, names: list[str], schemas: dict[str, dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    name = draw(st.sampled_from(names))
    properties = list(schemas[name].get("properties", {}))
    chosen = draw(st.lists(st.sampled_from(properties), unique=True)) if properties else []
    args = {key: draw(st.one_of(plausible, wild)) for key in chosen}
    if draw(st.integers(0, 9)) == 0:
        args[draw(st.text(max_size=6))] = draw(wild)
    return name, args


_ECHOES: set[str] = set()
"""The words of every text argument given so far, folded: a tool may say them back, now or later
(a list item is read out with the list).  They are the user's words, not the tool's numbers."""
_WORD = re.compile(r"\w+")


def _remember(args: dict[str, Any]) -> None:
    for value in args.values():
        if isinstance(value, str):
            _ECHOES.update(word.casefold() for word in _WORD.findall(value))


_PARTICLE = re.compile(r"[\uac00-\ud7a3]+$")


def _own_words(text: str) -> str:
    """``text`` with the words it echoes blanked out, a Korean particle written onto one included
    ("0E0은": the item "0E0" said back, not an exponent of hearth's)."""

    def echoed(word: str) -> bool:
        folded = word.casefold()
        return folded in _ECHOES or _PARTICLE.sub("", folded) in _ECHOES

    return _WORD.sub(lambda m: " " if echoed(m.group()) else m.group(), text)


def _check(tools: HomeTools, loop: asyncio.AbstractEventLoop, name: str, args: dict[str, Any]) -> bool:
    """Call ``name``; True when it answered (False: refused at validation)."""
    _remember(args)
    result = loop.run_until_complete(tools.executor.call(name, args))
    if not result.ok:
        assert result.error is not None
        assert result.error.kind == "invalid_arguments", f"{name}({args!r}) -> {result.error}"
        assert "\n" not in result.error.message
        return False
    assert result.output is not None
    text = result.output.text
    assert text.strip(), f"{name}({args!r}) said nothing"
    problems = speakable_problems(_own_words(text))
    assert not problems, f"{name}({args!r}) -> {result.output.text!r}: {problems}"
    return True


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_tool_answers_arbitrary_arguments_with_a_refusal_or_a_sayable_answer(home, language: str):
    loop, opened = home
    tools = opened[language]
    names = tools.registry.names
    schemas = {spec.name: spec.schema() for spec in tools.registry.specs}
    assert {"timer_adjust", "convert_units", "shopping_add", "note_add", "recipe_search", "weather", "volume_set"} <= set(names)

    answered: set[str] = set()

    @fuzz(scale=2)
    @given(calls(names, schemas))
    def one(call: tuple[str, dict[str, Any]]) -> None:
        if _check(tools, loop, *call):
            answered.add(call[0])

    one()
    # Not only refusals: most tools got past validation and answered at least once.
    assert len(answered) >= len(names) // 2, sorted(answered)


@pytest.mark.parametrize("language", LANGUAGES)
def test_timers_adjusted_again_and_again_never_run_past_a_day(home, language: str):
    """A sequence of starts and adjustments, not one call: totals must stay bounded too."""
    loop, opened = home
    tools = opened[language]

    @fuzz()
    @given(st.lists(st.tuples(st.sampled_from(["timer_start", "timer_adjust", "timer_pause", "timer_resume", "timer_status"]),
                              st.integers(-100_000, 100_000)), max_size=12))
    def sequence(steps: list[tuple[str, int]]) -> None:
        loop.run_until_complete(tools.executor.call("timer_cancel", {"all": True}))
        for name, seconds in steps:
            args = {"duration_s": seconds} if name == "timer_start" else {"delta_s": seconds} if name == "timer_adjust" else {}
            _check(tools, loop, name, args)
        for timer in tools.timers.active():
            assert timer.remaining_s(tools.timers.clock()) <= 24 * 3600 + 1

    sequence()
