"""The commented default configuration (firmware_py/assets/hearth.toml, installed as
/etc/hearth/hearth.toml) says exactly what firmware_py/config.py does."""

from __future__ import annotations

import re
import tomllib

from pydantic import BaseModel

from firmware_py.config import HearthConfig, load_config, parse_config
from firmware_py.default_config import DEFAULT_FILE, first_sentence, main, render

KEY_LINE = re.compile(r"^#(\w+) = (.*)$")


def uncommented(text: str) -> str:
    """The file with every key line that has a value made live (unset keys stay comments)."""
    lines = []
    for line in text.splitlines():
        match = KEY_LINE.match(line)
        lines.append(f"{match.group(1)} = {match.group(2)}" if match and match.group(2) != "(unset)" else line)
    return "\n".join(lines)


def listed_keys(text: str) -> set[str]:
    """Every key the file lists, live or commented, as section.key."""
    keys, section = set(), ""
    for line in text.splitlines():
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1] + "."
        elif match := KEY_LINE.match(line):
            keys.add(section + match.group(1))
    return keys


def all_keys(model: type[BaseModel] = HearthConfig, prefix: str = "") -> set[str]:
    keys = set()
    for name, field in model.model_fields.items():
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            keys |= all_keys(annotation, f"{name}.")
        else:
            keys.add(prefix + name)
    return keys


def test_the_shipped_file_is_what_the_configuration_code_writes_now():
    assert DEFAULT_FILE.read_text(encoding="utf-8") == render(), (
        "firmware_py/assets/hearth.toml is out of date: python -m firmware_py.default_config > firmware_py/assets/hearth.toml"
    )
    assert main(["--check", str(DEFAULT_FILE)]) == 0


def test_every_value_uncommented_is_the_default():
    data = tomllib.loads(uncommented(DEFAULT_FILE.read_text(encoding="utf-8")))
    assert parse_config(data, "hearth.toml") == HearthConfig()
    assert data["llm"]["model"] == HearthConfig().llm.model  # the values did go live


def test_every_key_is_listed_in_its_section():
    assert listed_keys(DEFAULT_FILE.read_text(encoding="utf-8")) == all_keys()


def test_as_shipped_it_loads_as_the_defaults(tmp_path):
    assert load_config(DEFAULT_FILE) == HearthConfig()


def test_a_changed_default_makes_the_check_fail(tmp_path):
    stale = tmp_path / "hearth.toml"
    stale.write_text(DEFAULT_FILE.read_text(encoding="utf-8").replace("#history_turns = 4", "#history_turns = 5"))
    assert main(["--check", str(stale)]) == 1


def test_the_explanation_is_the_first_sentence():
    assert first_sentence("Longest reply, in tokens. More here.") == "Longest reply, in tokens."
    assert first_sentence('The root, e.g. "http://x:8080" (see. this). Then more.') == 'The root, e.g. "http://x:8080" (see. this).'
    assert first_sentence("No full stop") == "No full stop"
