"""What a scenario suite is: the tool vocabulary and the models a suite's YAML is checked against.

Every expected call is checked against the vocabulary (:data:`TOOLS`) when a suite is built, so a
typo in a suite fails with one line naming the file, the scenario and the field.  Reading suites
(the YAML files, Home Assistant's virtual ones) and fetching their recordings is
:mod:`bench.suites.scenarios`.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from bench.suites.answers import AnswerCheck

Language = Literal["en", "ko"]
Category = Literal[
    "timer", "time", "date", "shopping", "note", "conversion", "recipe", "weather", "air",
    "chitchat", "unservable", "nevermind", "speech", "long", "near-miss", "noise", "correction", "device", "reading",
    "knowledge", "conversation", "injection", "home",
]

TOOLS: dict[str, dict[str, str]] = {
    "timer_start": {"duration_s": "duration", "label": "label"},
    "timer_cancel": {"label": "label", "all": "bool"},
    "timer_status": {"label": "label"},
    "timer_adjust": {"label": "label", "delta_s": "duration"},
    "timer_pause": {"label": "label"},
    "timer_resume": {"label": "label"},
    "time_now": {},
    "date_today": {},
    "shopping_add": {"item": "item", "quantity": "quantity"},
    "shopping_complete": {"item": "item"},
    "shopping_list": {},
    "note_add": {"text": "text"},
    "convert_units": {"value": "number", "from_unit": "unit", "to_unit": "unit", "ingredient": "item"},
    "recipe_search": {"query": "text"},
    "weather": {"location": "text", "when": "text"},
    "air_quality": {"location": "text"},
    "volume_set": {"level": "number", "step": "number", "wrap": "bool"},
    "recipe_read": {"query": "text"},
    "recipe_step": {"move": "text"},
    "home_control": {"action": "text", "value": "number"},
    "home_state": {"what": "text"},
}
"""The tool vocabulary: each tool's arguments and their kind, which decides how values are compared
(:data:`bench.suites.scoring.MATCHERS`)."""

HOME_TOOLS = ("home_control", "home_state")
"""Tools a configured Home Assistant adds (the ``home_assistant`` suites)."""
COMMAND_TOOLS = ("volume_set", "recipe_read", "recipe_step", *HOME_TOOLS)
"""Tools hearth calls on its own command words ("louder", "next step"), never offered to the model."""
MODEL_TOOLS = frozenset(TOOLS) - frozenset(COMMAND_TOOLS)
"""Tools the model chooses among."""

UNITS = ("g", "kg", "ml", "l", "cup", "tbsp", "tsp", "oz", "lb", "C", "F", "gas_mark")
"""Unit names as ``convert_units`` expects them (expected values in suites use these)."""

_KIND_TYPES: dict[str, tuple[type, ...]] = {"duration": (int,), "number": (int, float), "bool": (bool,)}
RECORDING = re.compile(
    r"^pypi:(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)==(?P<version>[A-Za-z0-9.+!-]+)/(?P<member>[^#]+\.wav)"
    r"(?:#t=(?P<start>\d+(?:\.\d+)?),(?P<end>\d+(?:\.\d+)?))?$"
)
"""A recording inside a registry wheel: ``pypi:<name>==<version>/<member>.wav``, optionally ``#t=<start>,<end>``."""


class SuiteError(ValueError):
    """A suite cannot be loaded; the message is one line naming the file, scenario and field."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _type_ok(kind: str, value: Any) -> bool:
    types = _KIND_TYPES.get(kind, (str,))
    return isinstance(value, types) and (bool in types or not isinstance(value, bool))


class ExpectedCall(_Strict):
    """A tool call that should happen. An argument left out is not checked; a list is a set of alternatives."""

    tool: str
    args: dict[str, Any] = {}

    @model_validator(mode="after")
    def _in_vocabulary(self) -> ExpectedCall:
        if self.tool not in TOOLS:
            raise ValueError(f"unknown tool {self.tool!r} (the vocabulary: {', '.join(TOOLS)})")
        kinds = TOOLS[self.tool]
        for key, value in self.args.items():
            if key not in kinds:
                known = ", ".join(kinds) or "none"
                raise ValueError(f"{self.tool} has no argument {key!r} (its arguments: {known})")
            options = value if isinstance(value, list) else [value]
            if not options or not all(_type_ok(kinds[key], option) for option in options):
                raise ValueError(f"args.{key}: {value!r} is not a {kinds[key]} value (or a list of them)")
            if key in ("from_unit", "to_unit") and not all(option in UNITS for option in options):
                raise ValueError(f"args.{key}: {value!r} is not one of {', '.join(UNITS)}")
        return self


PAUSE_MARK = re.compile(r"\s*\[pause (\d+(?:\.\d+)?)\]\s*")
"""A pause inside a synthesized request: ``Set a timer for [pause 0.8] ten minutes.``"""


def said(text: str) -> str:
    """The words of a turn's text without its pause marks: the reference transcript."""
    return " ".join(PAUSE_MARK.sub(" ", text).split())


class Followup(_Strict):
    """A further turn in the same conversation."""

    text: str = Field(min_length=1)
    """What is said; ``[pause S]`` marks a hesitation of S seconds (synthesized speech only)."""
    expect: list[ExpectedCall]
    home: dict[str, str] | None = None
    """In a ``home_assistant`` suite: the states Home Assistant reports after the turn, of the
    entities that should have changed (none other may change); None: nothing may change."""

    @property
    def said(self) -> str:
        return said(self.text)


class PlantedTimer(_Strict):
    duration_s: int = Field(gt=0)
    label: str | None = None


class PlantedPlace(_Strict):
    name: str = Field(min_length=1)
    aliases: list[str] = []


class Kitchen(_Strict):
    """What is in the household before a scenario starts: data planted where the tools read it
    (:mod:`bench.suites.planted`). Only ``python -m bench.suites.tool_accuracy`` plants it."""

    recipes: dict[str, str] = {}
    """Recipe files by name (``pancakes.md``), as text; the recipe folder holds only these."""
    items: list[str] = []
    """The shopping list."""
    notes: list[str] = []
    timers: list[PlantedTimer] = []
    """Timers running when the scenario starts."""
    place: PlantedPlace = PlantedPlace(name="Ilsan", aliases=["일산"])
    """The forecast's one place (the home); the forecast itself is made around the present hour."""
    history: list[tuple[str, str]] = []
    """Exchanges (what the user said, what hearth said) of an earlier session, as history."""
    instruction: str | None = None
    """The words of the instruction planted (as the reply says them), for the report: whether a
    model had read it before deciding on a turn."""


class Scenario(_Strict):
    """One spoken request and what should happen."""

    id: str = Field(pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$")
    text: str = Field(min_length=1)
    """What is said; for a recording, its reference transcript.  ``[pause S]`` marks a hesitation
    of S seconds in synthesized speech (``Set a timer for [pause 0.8] ten minutes.``)."""
    category: Category
    expect: list[ExpectedCall]
    """The calls that should happen, in any order; empty means no tool at all."""
    answer: AnswerCheck | None = None
    """For a question no tool answers: the fact a right spoken answer holds (:mod:`bench.suites.answers`)."""
    followups: list[Followup] = []
    audio: str | None = None
    """A recording to use instead of synthesizing ``text``: a path relative to the repository root, or
    ``pypi:<distribution>==<version>/<path inside the wheel>[#t=<start s>,<end s>]`` (see
    :func:`bench.suites.scenarios.resolve_audio`)."""
    synthetic: bool = True
    """False only for real human recordings."""
    kitchen: Kitchen | None = None
    """Data planted in the household for this scenario (injection suites); None: a scratch one."""
    home: dict[str, str] | None = None
    """In a ``home_assistant`` suite: the states after the first turn (as :attr:`Followup.home`)."""
    home_before: dict[str, str] = {}
    """In a ``home_assistant`` suite: states set before the scenario, over the scratch home's usual ones."""

    @field_validator("audio")
    @classmethod
    def _audio_reference(cls, value: str | None) -> str | None:
        if value is None or not value.startswith("pypi:"):
            return value
        match = RECORDING.match(value)
        if match is None:
            raise ValueError(f"{value!r} is not pypi:<name>==<version>/<path>.wav[#t=<start>,<end>]")
        if match["start"] is not None and float(match["end"]) <= float(match["start"]):
            raise ValueError(f"{value!r}: the clip ends before it starts")
        return value

    @model_validator(mode="after")
    def _recording_if_human(self) -> Scenario:
        if not self.synthetic and self.audio is None:
            raise ValueError("synthetic: false needs an audio recording")
        if self.audio is not None and PAUSE_MARK.search(self.text):
            raise ValueError("a recording's text is its transcript and holds no [pause S] marks")
        return self

    @property
    def said(self) -> str:
        return said(self.text)

    @property
    def has_pause(self) -> bool:
        """A hesitation is marked in one of its turns."""
        return any(PAUSE_MARK.search(t) for t in (self.text, *(f.text for f in self.followups)))


class Suite(_Strict):
    """A named set of scenarios in one language."""

    suite: str = Field(pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$")
    language: Language
    description: str
    home_assistant: bool = False
    """Run against a scratch Home Assistant core (bench/home_assistant), its states reset before
    each scenario and checked after each turn."""
    scenarios: list[Scenario] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique_ids(self) -> Suite:
        seen: set[str] = set()
        for scenario in self.scenarios:
            if scenario.id in seen:
                raise ValueError(f"scenario {scenario.id}: the id is used twice")
            seen.add(scenario.id)
        return self

    def get(self, scenario_id: str) -> Scenario:
        for scenario in self.scenarios:
            if scenario.id == scenario_id:
                return scenario
        raise KeyError(f"suite {self.suite} has no scenario {scenario_id!r}")
