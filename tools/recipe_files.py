"""Reading one recipe file: Markdown or JSON, written by hand or exported from elsewhere.

Markdown::

    ---
    title: Pancakes
    aliases: hotcakes, 팬케이크
    minutes: 20
    servings: 4
    tags: breakfast, sweet
    ---
    A line or two about the dish.

    ## Ingredients
    - 200 g flour

    ## Steps
    1. Whisk everything together.

The front matter is optional (a ``# Title`` heading, or else the file name, gives the title; lines
such as "Time: 10 minutes" or "Serves: 2" before the first section give the rest) and is read as
plain ``key: value`` lines, not YAML, so that no YAML library is needed on the speaker.
Ingredient sections are headed "Ingredients" or "재료"; step sections "Steps", "Method",
"Directions", "Instructions", "만드는 법" or "조리 순서".  JSON files hold one object with the same
keys (``title`` required; ``ingredients`` and ``steps`` as lists of strings).
"""

from __future__ import annotations

import json
import logging
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

MAX_FILE_BYTES = 256 * 1024
"""Larger files are not recipes (or are broken) and would cost a small board too much memory."""

RECIPE_SUFFIXES = (".md", ".markdown", ".json")

MAX_MINUTES = 30 * 24 * 60
"""The longest total time taken from a file (a month: kimchi, cured meat).  More is a typo or
junk, said as "unknown" rather than as "166666 hours"."""
MAX_SERVINGS = 1000
"""The most servings taken from a file; more is read as unknown."""
_MAX_NUMBER_DIGITS = 9
"""Digits read as one number; a longer run is no time or count, and int() of thousands of digits fails."""

_INGREDIENT_HEADINGS = ("ingredients", "ingredient", "재료", "준비물")
_STEP_HEADINGS = ("steps", "method", "directions", "instructions", "preparation", "만드는 법", "만드는법", "조리 순서",
                  "조리순서", "조리법", "순서")
# "Time: 10 minutes" or "**Serves:** 2" lines in a file without front matter.
_META_LINE = re.compile(r"^\**\s*(time|total time|minutes|serves|servings|yield|조리 ?시간|시간|분량)\s*:\s*\**\s*(.+)$", re.I)
_META_KEYS = {"time": "minutes", "total time": "minutes", "minutes": "minutes", "serves": "servings", "servings": "servings",
              "yield": "servings", "조리시간": "minutes", "조리 시간": "minutes", "시간": "minutes", "분량": "servings"}
_LIST_ITEM = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+(.*)$")
_NUMBER = re.compile(r"\d+")


@dataclass(frozen=True)
class Recipe:
    """One recipe as read from its file."""

    title: str
    """The dish, as it is spoken ("Banana bread", "김치찌개")."""
    path: str
    """Where it came from, relative to the recipe folder."""
    minutes: int | None = None
    """Total time, when the file says."""
    servings: int | None = None
    """How many it feeds, when the file says."""
    ingredients: tuple[str, ...] = ()
    """One line per ingredient, amounts included."""
    steps: tuple[str, ...] = ()
    """One entry per step."""
    aliases: tuple[str, ...] = ()
    """Other names for the dish (another language, a romanisation); searched like the title."""
    tags: tuple[str, ...] = ()
    """Free words ("breakfast", "vegetarian") that searches also match."""
    description: str = ""
    """Any other text in the file."""


class RecipeFormatError(ValueError):
    """A file that cannot be read as a recipe; the message says why in one line."""


def confined_path(folder: Path, relative: str) -> Path:
    """``folder / relative`` when it is a file inside ``folder`` once every symlink is followed;
    RecipeFormatError otherwise ("../", an absolute path, a link pointing out of the folder).

    Recipes are read from one folder only: a link to /etc/shadow named shadow.md is not a recipe.
    """
    root = folder.resolve()
    try:
        target = (root / relative).resolve(strict=True)
    except (OSError, RuntimeError, ValueError) as exc:  # missing, a symlink loop, a NUL in the name
        raise RecipeFormatError(f"cannot read: {getattr(exc, 'strerror', None) or exc}") from exc
    if not target.is_relative_to(root):
        raise RecipeFormatError("points outside the recipe folder")
    return target


def read_recipe(path: Path, relative: str) -> Recipe:
    """Parse ``path``; raises RecipeFormatError (never anything else for bad content)."""
    try:
        st = path.stat()
        # Only a regular file: reading a FIFO or a device named *.md would wait or never end.
        if not stat.S_ISREG(st.st_mode):
            raise RecipeFormatError("not a regular file")
        if st.st_size > MAX_FILE_BYTES:
            raise RecipeFormatError(f"{st.st_size} bytes is larger than {MAX_FILE_BYTES}")
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise RecipeFormatError(f"not UTF-8 text ({exc.reason})") from exc
    except OSError as exc:
        raise RecipeFormatError(f"cannot read: {exc.strerror or exc}") from exc
    if len(text) > MAX_FILE_BYTES:  # it grew between the stat and the read
        raise RecipeFormatError(f"larger than {MAX_FILE_BYTES} bytes")
    if path.suffix.lower() == ".json":
        return _from_json(text, relative)
    return _from_markdown(text, relative, fallback_title=_title_from_name(path))


def _title_from_name(path: Path) -> str:
    return " ".join(re.split(r"[-_\s]+", path.stem)).strip().capitalize() or path.stem


def _from_json(text: str, relative: str) -> Recipe:
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RecipeFormatError(f"invalid JSON at line {exc.lineno}: {exc.msg}") from exc
    except (RecursionError, ValueError) as exc:  # nested thousands deep; an integer of thousands of digits
        raise RecipeFormatError(f"invalid JSON: {type(exc).__name__}") from exc
    if not isinstance(raw, dict):
        raise RecipeFormatError("the JSON is not an object")
    title = raw.get("title") or raw.get("name")
    if not isinstance(title, str) or not title.strip():
        raise RecipeFormatError("no title")
    return Recipe(
        title=" ".join(title.split()),
        path=relative,
        minutes=_int_or_none(raw.get("minutes", raw.get("time")), MAX_MINUTES),
        servings=_int_or_none(raw.get("servings", raw.get("serves")), MAX_SERVINGS),
        ingredients=_strings(raw.get("ingredients"), "ingredients"),
        steps=_strings(raw.get("steps", raw.get("instructions")), "steps"),
        aliases=_strings(raw.get("aliases"), "aliases"),
        tags=_strings(raw.get("tags"), "tags"),
        description=raw.get("description") if isinstance(raw.get("description"), str) else "",
    )


def _strings(value: Any, key: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return _split_list(value)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise RecipeFormatError(f"{key} is not a list of strings")
    return tuple(" ".join(v.split()) for v in value if v.strip())


def _int_or_none(value: Any, most: int) -> int | None:
    """A positive whole number of at most ``most`` from a JSON value or "45 minutes"; else None."""
    number: float | None = None
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        number = value
    elif isinstance(value, str):
        match = _NUMBER.search(value)
        if match is None or len(match.group()) > _MAX_NUMBER_DIGITS:
            return None
        number = int(match.group())
        # "1 hour", "1시간": the common spoken ways of writing an hour or more.
        if re.search(r"hour|hr|시간", value) and not re.search(r"min|분", value):
            number *= 60
    # NaN and infinity fail the comparison too (json reads "NaN" and "1e999").
    if number is None or not 0 < number <= most:
        return None
    return int(number) or None


def _split_list(value: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in value.split(",") if part.strip())


def _from_markdown(text: str, relative: str, fallback_title: str) -> Recipe:
    lines = text.splitlines()
    meta: dict[str, str] = {}
    if lines and lines[0].strip() == "---":
        try:
            end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
        except StopIteration as exc:
            raise RecipeFormatError("front matter is not closed with ---") from exc
        for line in lines[1:end]:
            key, sep, value = line.partition(":")
            if sep and key.strip():
                meta[key.strip().lower()] = value.strip().strip("\"'")
        lines = lines[end + 1:]

    title = meta.get("title") or meta.get("name") or ""
    sections: dict[str, list[str]] = {"ingredients": [], "steps": [], "other": []}
    current = "other"
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("#"):
            heading = stripped.lstrip("#").strip()
            level = len(stripped) - len(stripped.lstrip("#"))
            if level == 1 and not title:
                title = heading
                current = "other"
                continue
            section = _section_of(heading)
            # "### For the sauce" inside the ingredients is still ingredients.
            if section != "other" or level < 3:
                current = section
            continue
        if not stripped:
            continue
        meta_line = _META_LINE.match(stripped) if current == "other" else None
        if meta_line:
            meta.setdefault(_META_KEYS[meta_line.group(1).lower()], meta_line.group(2).strip("* "))
            continue
        item = _LIST_ITEM.match(stripped)
        body = " ".join((item.group(1) if item else stripped).split())
        if current != "other" and not item and sections[current]:
            # A wrapped line continues the item above it.
            sections[current][-1] = f"{sections[current][-1]} {body}"
        else:
            sections[current].append(body)

    if not sections["ingredients"] and not sections["steps"] and not title:
        raise RecipeFormatError("no title, ingredients or steps")
    return Recipe(
        title=" ".join((title or fallback_title).split()),
        path=relative,
        minutes=_int_or_none(meta.get("minutes") or meta.get("time"), MAX_MINUTES),
        servings=_int_or_none(meta.get("servings") or meta.get("serves"), MAX_SERVINGS),
        ingredients=tuple(sections["ingredients"]),
        steps=tuple(sections["steps"]),
        aliases=_split_list(meta.get("aliases", "")),
        tags=_split_list(meta.get("tags", "")),
        description=" ".join(sections["other"]),
    )


def _section_of(heading: str) -> str:
    key = heading.lower().rstrip(":").strip()
    if key in _INGREDIENT_HEADINGS:
        return "ingredients"
    if key in _STEP_HEADINGS:
        return "steps"
    return "other"
