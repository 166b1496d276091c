"""The commented default configuration file, written from :mod:`firmware_py.config` itself.

``firmware_py/assets/hearth.toml`` is this module's output (the installer copies it to
``/etc/hearth/hearth.toml``); a test regenerates it and compares, so it cannot drift from the
code.  Every key is there, commented out, with its default and the first sentence of its
docstring; a section header stays a real header, so uncommenting one key under it is enough.

    python -m firmware_py.default_config > firmware_py/assets/hearth.toml
    python -m firmware_py.default_config --check firmware_py/assets/hearth.toml
"""

from __future__ import annotations

import argparse
import ast
import inspect
import json
import sys
import textwrap
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

import annotated_types
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from firmware_py.config import HearthConfig

DEFAULT_FILE = Path(__file__).parent / "assets" / "hearth.toml"
UNSET = "(unset)"
"""What an unset key's line shows: TOML has no null, so such a key is never written uncommented."""

HEADER = """\
# hearth's configuration (/etc/hearth/hearth.toml, or ~/.config/hearth/hearth.toml).
#
# Every key is listed, commented out, with its default: uncomment a line and change its value.
# "(unset)" means hearth decides by itself, as the line above it says.  A bad value stops hearth
# with one line naming the key (`journalctl -u hearth`).  Each key is documented in full in
# firmware_py/config.py.  This file is written by `python -m firmware_py.default_config`.
#
# As a service (systemd/hearth.service) hearth writes only under /var/lib/hearth and has no
# network: a reasoner on another machine (reasoner.where = "remote") also needs the drop-in
# systemd/hearth-remote-reasoner.conf.
"""


def attribute_docs(model: type[BaseModel]) -> dict[str, str]:
    """The docstring under each field of ``model`` (read from its source; pydantic keeps none)."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(model)))
    body = tree.body[0].body  # type: ignore[attr-defined]
    docs: dict[str, str] = {}
    for statement, following in zip(body, body[1:]):
        if (
            isinstance(statement, ast.AnnAssign)
            and isinstance(statement.target, ast.Name)
            and isinstance(following, ast.Expr)
            and isinstance(following.value, ast.Constant)
            and isinstance(following.value.value, str)
        ):
            docs[statement.target.id] = " ".join(following.value.value.split())
    return docs


def first_sentence(text: str) -> str:
    """Up to the first full stop outside brackets that ends a sentence ("e.g." does not)."""
    depth = 0
    for i, char in enumerate(text):
        if char in "([":
            depth += 1
        elif char in ")]":
            depth = max(0, depth - 1)
        elif char == "." and depth == 0 and (i + 1 == len(text) or text[i + 1] == " "):
            if not text[max(0, i - 3) : i + 1].endswith(("e.g.", "i.e.")):
                return text[: i + 1]
    return text


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (str, Path)):
        return json.dumps(str(value), ensure_ascii=False)  # a JSON string is a TOML basic string
    if isinstance(value, (tuple, list)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    raise TypeError(f"no TOML form for {value!r}")


def _choices(annotation: Any) -> tuple[Any, ...]:
    """The allowed values of a Literal (also inside ``X | None``), else ()."""
    if get_origin(annotation) is Literal:
        return get_args(annotation)
    for arg in get_args(annotation):
        if get_origin(arg) is Literal:
            return get_args(arg)
    return ()


def _bounds(field: FieldInfo) -> str:
    low = high = ""
    for rule in field.metadata:
        if isinstance(rule, annotated_types.Ge):
            low = f"{rule.ge}"
        elif isinstance(rule, annotated_types.Gt):
            low = f"above {rule.gt}"
        elif isinstance(rule, annotated_types.Le):
            high = f"{rule.le}"
        elif isinstance(rule, annotated_types.Lt):
            high = f"below {rule.lt}"
    if low and high:
        return f"{low} to {high}" if not (low.startswith("above") or high.startswith("below")) else f"{low}, {high}"
    return f"from {low}" if low else f"up to {high}" if high else ""


def _explanation(doc: str, field: FieldInfo) -> str:
    text = first_sentence(doc).replace("``", "`") if doc else ""
    choices = _choices(field.annotation)
    if choices:
        text += f" One of {', '.join(toml_value(c) for c in choices)}."
    bounds = _bounds(field)
    if bounds:
        text += f" Range: {bounds}."
    return text.strip()


def _comment(text: str) -> list[str]:
    return textwrap.wrap(text, width=98, initial_indent="# ", subsequent_indent="# ") if text else []


def _section_lines(model: type[BaseModel], instance: BaseModel) -> tuple[list[str], list[tuple[str, type[BaseModel]]]]:
    """The lines of ``model``'s plain keys, and its sub-sections (name, model) in order."""
    docs = attribute_docs(model)
    lines: list[str] = []
    sections: list[tuple[str, type[BaseModel]]] = []
    for name, field in model.model_fields.items():
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            sections.append((name, annotation))
            continue
        value = getattr(instance, name)
        lines += _comment(_explanation(docs.get(name, ""), field))
        lines.append(f"#{name} = {UNSET if value is None else toml_value(value)}")
        lines.append("")
    return lines, sections


def render(model: type[BaseModel] = HearthConfig) -> str:
    """The whole commented file for ``model``'s defaults."""
    instance = model()
    lines, sections = _section_lines(model, instance)
    out = [HEADER, *lines]
    for name, section in sections:
        doc = inspect.cleandoc(section.__doc__ or "") if section.__doc__ and section.__doc__ != BaseModel.__doc__ else ""
        out.append(f"[{name}]")
        out += _comment(doc)
        out += _section_lines(section, getattr(instance, name))[0]
    return "\n".join(out).rstrip("\n") + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m firmware_py.default_config", description=__doc__.splitlines()[0])
    parser.add_argument("--check", type=Path, metavar="FILE", help="exit 1 if FILE is not what would be written now")
    args = parser.parse_args(argv)
    text = render()
    if args.check is not None:
        if args.check.read_text(encoding="utf-8") != text:
            print(f"{args.check} is out of date: python -m firmware_py.default_config > {args.check}", file=sys.stderr)
            return 1
        return 0
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
