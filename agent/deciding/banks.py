"""The example bank and the kitchen reference, read from the TOML files in ``agent/deciding/data``.

- :func:`example_bank`: worked tool decisions, in English and Korean, that the planner shows the
  model as chat turns (``data/examples.toml``). Each entry is an :data:`Entry`,
  ``(request, say, tool, args)``: a small model copies the shape of the nearest example far more
  reliably than it follows a description, so the bank covers every tool in several wordings and
  the replies that call nothing (:data:`NONE`).
- :func:`reference_bank`: vetted cooking facts the reasoner answers from
  (``data/reference.toml``). Each entry is a :data:`Fact`, ``(keywords, fact)``: the words a cook
  would ask with, and one or two sentences that can be spoken as written.

The files' own headers say more about what belongs in them. Both are read on first use and then
kept (nothing is read when this module is imported); the lists are in the files' order, which the
pickers break ties by, and are shared: treat them as read-only. A file that does not parse, or an
entry that does not fit, is a :class:`BankError` of one line naming the file, the entry and the
field.
"""

from __future__ import annotations

import functools
import tomllib
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Annotated, Any, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, TypeAdapter, ValidationError

Entry = tuple[str, str, str, dict[str, Any]]
"""(request, line to say, tool or "none", arguments)."""

Fact = tuple[str, str]
"""(keywords, fact sentence)."""

NONE = "none"
"""The tool of an example that calls no tool."""

EXAMPLES_FILE = "examples.toml"
REFERENCE_FILE = "reference.toml"


class BankError(ValueError):
    """A bank file that cannot be used; the message is one line naming the file, entry and field."""


def _not_blank(text: str) -> str:
    if not text.strip():
        raise ValueError("must not be blank")
    return text


def _scalar(value: Any) -> Any:
    # Arguments are what a tool call's JSON holds: no dates, lists or tables.
    if not isinstance(value, (bool, int, float, str)):
        raise ValueError(f"must be a string, number or boolean, not {type(value).__name__}")
    return value


Text = Annotated[str, AfterValidator(_not_blank)]
Scalar = Annotated[Any, AfterValidator(_scalar)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class _Example(_Strict):
    request: Text
    say: Text
    tool: Text
    args: dict[str, Scalar] = {}

    def entry(self) -> Entry:
        return (self.request, self.say, self.tool, dict(self.args))


class _Fact(_Strict):
    keywords: Text
    fact: Text

    def entry(self) -> Fact:
        return (self.keywords, self.fact)


M = TypeVar("M", _Example, _Fact)

_EXAMPLES = TypeAdapter(dict[str, list[_Example]])
_FACTS = TypeAdapter(dict[str, list[_Fact]])


def data_file(name: str) -> Traversable:
    """A bank file shipped with hearth."""
    return resources.files("agent.deciding").joinpath("data", name)


def _read(path: Traversable, adapter: TypeAdapter[dict[str, list[M]]]) -> dict[str, list[M]]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise BankError(f"{path}: not UTF-8 text ({exc.reason})") from None
    except ValueError as exc:  # TOMLDecodeError, or an integer of thousands of digits
        raise BankError(f"{path}: not valid TOML ({' '.join(str(exc).split())})") from None
    try:
        return adapter.validate_python(data)
    except ValidationError as exc:
        raise BankError(f"{path}: {_describe(exc, data)}") from None


_TOML_WORDS = {"model_type": "should be a table", "dict_type": "should be a table", "list_type": "should be an array"}
"""Pydantic's words for a wrong shape, in the file's terms."""


def _describe(exc: ValidationError, data: Any) -> str:
    """The first error as "en entry 12 ("set a 3 minute timer"): args.duration_s: ...", on one line."""
    errors = exc.errors()
    first = errors[0]
    loc = list(first["loc"])
    where = ""
    if len(loc) >= 2 and isinstance(loc[1], int):
        language, index, loc = loc[0], loc[1], loc[2:]
        where = f"{language} entry {index + 1}"
        try:
            entry = data[language][index]
        except (KeyError, IndexError, TypeError):
            entry = None
        name = next((entry[key] for key in ("request", "keywords") if isinstance(entry, dict) and isinstance(entry.get(key), str)), None)
        if name is not None:
            where += f" ({name[:60]!r})"
    elif loc:
        where, loc = str(loc[0]), loc[1:]
    field = ".".join(str(part) for part in loc)
    message = _TOML_WORDS.get(first["type"]) or " ".join(first["msg"].removeprefix("Value error, ").split())
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return ": ".join(part for part in (where or "the file", field, message) if part) + more


def read_examples(path: Traversable) -> dict[str, list[Entry]]:
    """The example bank in ``path``, per language, in the file's order; :class:`BankError` if it is bad."""
    return {language: [example.entry() for example in examples] for language, examples in _read(path, _EXAMPLES).items()}


def read_reference(path: Traversable) -> dict[str, list[Fact]]:
    """The reference in ``path``, per language, in the file's order; :class:`BankError` if it is bad."""
    return {language: [fact.entry() for fact in facts] for language, facts in _read(path, _FACTS).items()}


@functools.cache
def example_bank() -> dict[str, list[Entry]]:
    """hearth's example bank, per language ("en", "ko"), read once."""
    return read_examples(data_file(EXAMPLES_FILE))


@functools.cache
def reference_bank() -> dict[str, list[Fact]]:
    """hearth's kitchen reference, per language ("en", "ko"), read once."""
    return read_reference(data_file(REFERENCE_FILE))
