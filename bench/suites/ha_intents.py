"""Home Assistant's intent test sentences as hearth scenarios: the virtual suites ``ha-en`` and ``ha-ko``.

The data is Home Assistant intents (github.com/home-assistant/intents), CC BY 4.0: ``tests/<language>/*.yaml``
copied unchanged into ``bench/data/ha-intents/<language>/`` (see ``bench/data/README.md``).  To score another
copy (a newer commit of Home Assistant's tests), set ``$HEARTH_EVALS_DIR`` to the folder holding its
``ha-intents/``.  Each test sentence becomes one scenario; the intent and its slots become the hearth tool call
that should happen:

==============================  =====================================================================
HassStartTimer                  timer_start {duration_s: hours+minutes+seconds, label: name}
HassCancelTimer                 timer_cancel {all: false, label: name}
HassCancelAllTimers             timer_cancel {all: true}
HassIncreaseTimer / Decrease    timer_adjust {delta_s: ±(hours+minutes+seconds), label: name}
HassPauseTimer / Unpause        timer_pause / timer_resume {label: name}
HassTimerStatus                 timer_status {label: name}
HassGetCurrentTime / Date       time_now / date_today
HassNevermind                   no tool
HassShoppingListAddItem         shopping_add {item}
HassShoppingListCompleteItem    shopping_complete {item}
==============================  =====================================================================

An existing timer named by its area or by its starting length (``area``, ``start_hours``, ``start_minutes``)
has no counterpart among hearth's arguments, so the label is then left unchecked.  A slot value that is a
list is a set of alternatives; Home Assistant's trailing spaces are trimmed.  A HassStartTimer case with a
``conversation_command`` ("open the garage door in 5 minutes") is a delayed command, which hearth has no
tool for, so it is left out, and so is a sentence that writes a fraction as ``1/2`` (a voice reads it "one
slash two"; the same case always says it with "half" in another sentence).
"""

from __future__ import annotations

import itertools
import logging
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from bench.suites.schema import ExpectedCall, Scenario, Suite, SuiteError

logger = logging.getLogger(__name__)

EVALS_ENV = "HEARTH_EVALS_DIR"
DATA_DIR = Path(__file__).resolve().parents[1] / "data"
"""The evaluation data kept with the bench (``bench/data``)."""
CREDIT = "Home Assistant intents (github.com/home-assistant/intents), CC BY 4.0"

Slots = dict[str, Any]
# "set a timer for 1/2 an hour" is text for a text matcher; spoken it is "half an hour", which the same
# test case already has as another sentence.
_WRITTEN_FRACTION = re.compile(r"\d\s*/\s*\d")
Mapper = Callable[[Slots], list[ExpectedCall]]


class Skip(Exception):
    """A test case hearth cannot be scored on; the message says why."""


def evals_dir() -> Path:
    """``$HEARTH_EVALS_DIR``, else the bench's own copy (``bench/data``)."""
    env = os.environ.get(EVALS_ENV)
    return Path(env).expanduser() if env else DATA_DIR


def ha_intents_dir() -> Path:
    return evals_dir() / "ha-intents"


def _options(value: Any) -> list[Any]:
    """A slot's accepted values, trimmed and without repeats."""
    values = value if isinstance(value, list) else [value]
    out: list[Any] = []
    for item in values:
        item = item.strip() if isinstance(item, str) else item
        if item not in out:
            out.append(item)
    return out


def _one_or_list(values: list[Any]) -> Any:
    return values[0] if len(values) == 1 else values


def _seconds(slots: Slots) -> list[int]:
    """Every total the hours/minutes/seconds slots allow (one, unless a slot lists alternatives)."""
    parts = [
        [float(v) * factor for v in _options(slots[key])]
        for key, factor in (("hours", 3600), ("minutes", 60), ("seconds", 1))
        if key in slots
    ]
    if not parts:
        raise Skip("no hours, minutes or seconds slot")
    return sorted({int(round(sum(combo))) for combo in itertools.product(*parts)})


def _label(slots: Slots) -> dict[str, Any]:
    return {"label": _one_or_list(_options(slots["name"]))} if "name" in slots else {}


def _call(tool: str, args: dict[str, Any]) -> list[ExpectedCall]:
    return [ExpectedCall(tool=tool, args=args)]


def _start(slots: Slots) -> list[ExpectedCall]:
    if "conversation_command" in slots:
        raise Skip("a delayed command (conversation_command), which hearth has no tool for")
    return _call("timer_start", {"duration_s": _one_or_list(_seconds(slots)), **_label(slots)})


def _adjust(sign: int) -> Mapper:
    def mapper(slots: Slots) -> list[ExpectedCall]:
        return _call("timer_adjust", {"delta_s": _one_or_list([sign * s for s in _seconds(slots)]), **_label(slots)})

    return mapper


def _labelled(tool: str, **fixed: Any) -> Mapper:
    return lambda slots: _call(tool, {**fixed, **_label(slots)})


def _item(tool: str) -> Mapper:
    return lambda slots: _call(tool, {"item": _one_or_list(_options(slots["item"]))})


INTENTS: dict[str, tuple[str, Mapper]] = {
    "HassStartTimer": ("timer", _start),
    "HassCancelTimer": ("timer", _labelled("timer_cancel", all=False)),
    "HassCancelAllTimers": ("timer", lambda slots: _call("timer_cancel", {"all": True})),
    "HassIncreaseTimer": ("timer", _adjust(+1)),
    "HassDecreaseTimer": ("timer", _adjust(-1)),
    "HassPauseTimer": ("timer", _labelled("timer_pause")),
    "HassUnpauseTimer": ("timer", _labelled("timer_resume")),
    "HassTimerStatus": ("timer", _labelled("timer_status")),
    "HassGetCurrentTime": ("time", lambda slots: _call("time_now", {})),
    "HassGetCurrentDate": ("date", lambda slots: _call("date_today", {})),
    "HassNevermind": ("nevermind", lambda slots: []),
    "HassShoppingListAddItem": ("shopping", _item("shopping_add")),
    "HassShoppingListCompleteItem": ("shopping", _item("shopping_complete")),
}
"""Each Home Assistant intent hearth is scored on: its scenario category and how its slots become calls."""


def _kebab(intent: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "-", intent.removeprefix("Hass")).lower()


def scenarios_from_file(path: Path, skipped: list[str]) -> list[Scenario]:
    """The scenarios of one Home Assistant test file; cases left out are described in ``skipped``."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise SuiteError(f"{path}: cannot read Home Assistant tests ({str(exc).splitlines()[0]})") from None
    scenarios: list[Scenario] = []
    for case_number, case in enumerate((data or {}).get("tests") or [], 1):
        intent = (case.get("intent") or {}).get("name", "")
        slots = (case.get("intent") or {}).get("slots") or {}
        sentences = [s.strip() for s in case.get("sentences") or [] if isinstance(s, str) and s.strip()]
        where = f"{path.name} case {case_number} ({intent})"
        if intent not in INTENTS:
            skipped.append(f"{where}: intent not mapped onto hearth's tools")
            continue
        category, mapper = INTENTS[intent]
        try:
            expect = mapper(slots)
        except Skip as reason:
            skipped.append(f"{where}: {reason}")
            continue
        except (ValidationError, KeyError, TypeError, ValueError) as exc:
            raise SuiteError(f"{path}: case {case_number} ({intent}): cannot map slots {slots!r} ({exc})") from None
        for sentence_number, sentence in enumerate(sentences, 1):
            if _WRITTEN_FRACTION.search(sentence):
                skipped.append(f"{where}: {sentence!r} (a written fraction, which a voice reads as 'one slash two')")
                continue
            scenarios.append(
                Scenario(
                    id=f"{_kebab(intent)}-{case_number:02d}-{sentence_number:02d}",
                    text=sentence,
                    category=category,  # type: ignore[arg-type]
                    expect=expect,
                )
            )
    return scenarios


def load_ha_suite(language: str) -> Suite:
    """The virtual suite ``ha-<language>``; raises :class:`SuiteError` when the data is not there."""
    folder = ha_intents_dir() / language
    if not folder.is_dir():
        raise SuiteError(
            f"Home Assistant intent tests not found at {folder}: they come with the bench in bench/data/ha-intents/; "
            f"{EVALS_ENV}, when set, names the folder holding ha-intents/"
        )
    files = sorted(p for p in folder.glob("*.yaml") if not p.name.startswith("_"))
    skipped: list[str] = []
    scenarios = [s for path in files for s in scenarios_from_file(path, skipped)]
    if not scenarios:
        raise SuiteError(f"{folder}: no Home Assistant test sentences hearth can be scored on")
    for reason in skipped:
        logger.info("ha-%s: left out %s", language, reason)
    left_out = f" Left out: {'; '.join(skipped)}." if skipped else ""
    description = (
        f"Home Assistant's intent test sentences ({language}) mapped onto hearth's tools: {len(scenarios)} "
        f"sentences from {len(files)} file{'s' if len(files) != 1 else ''}, unchanged; intents and slots converted to tool calls.{left_out} "
        f"Source: {CREDIT}."
    )
    return Suite(suite=f"ha-{language}", language=language, description=description, scenarios=scenarios)  # type: ignore[arg-type]
