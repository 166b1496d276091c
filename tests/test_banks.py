"""The bank files (agent/deciding/data): every example a valid call of a tool hearth offers, every
fact usable, both languages there, the files shipped, and a bad file reported in one line."""

from __future__ import annotations

import fnmatch
import re
import subprocess
import sys
import tomllib
import unicodedata
from collections import Counter
from pathlib import Path

import pytest

from agent.deciding import banks
from agent.deciding.banks import NONE, BankError, example_bank, read_examples, read_reference, reference_bank
from firmware_py.config import parse_config
from firmware_py.home_tools import open_home_tools
from tools.registry import ToolRegistry

ROOT = Path(__file__).resolve().parent.parent
LANGUAGES = {"en", "ko"}


async def offered_tools(language: str, folder: Path) -> ToolRegistry:
    """The tools hearth offers the model in ``language``, built as a device builds them (over empty stores)."""
    home = await open_home_tools(parse_config({"language": language, "tools": {"data_dir": str(folder)}}))
    try:
        return home.registry.for_model()
    finally:
        await home.close()


def _said(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def test_both_banks_hold_both_languages() -> None:
    for bank in (example_bank(), reference_bank()):
        assert set(bank) == LANGUAGES
        assert all(len(entries) >= 50 for entries in bank.values())


@pytest.mark.parametrize("language", sorted(LANGUAGES))
async def test_every_example_calls_a_tool_hearth_offers_with_its_arguments(language: str, tmp_path: Path) -> None:
    registry = await offered_tools(language, tmp_path)
    assert len(registry) >= 10
    wrong: list[str] = []
    for request, say, tool, args in example_bank()[language]:
        if not say.strip():
            wrong.append(f"{request!r}: nothing to say")
        if tool == NONE:
            if args:
                wrong.append(f"{request!r}: calls no tool but has arguments {sorted(args)}")
            continue
        spec = registry.get(tool)
        if spec is None:
            wrong.append(f"{request!r}: {tool!r} is not a tool hearth offers")
            continue
        unknown = set(args) - set(spec.args.model_fields)
        if unknown:
            wrong.append(f"{request!r}: {tool} takes no {sorted(unknown)}")
            continue
        try:
            # Strict: a number written as a string, or a decimal for a count, is wrong here even
            # where a model's reply would be coerced.
            validated = spec.args.model_validate(args, strict=True)
        except ValueError as exc:
            wrong.append(f"{request!r}: {' '.join(str(exc).split())}")
            continue
        if validated.model_dump(exclude_unset=True) != args:  # e.g. spaces the tool would trim
            wrong.append(f"{request!r}: {tool} reads {args} as {validated.model_dump(exclude_unset=True)}")
    assert wrong == []


@pytest.mark.parametrize("language", sorted(LANGUAGES))
def test_no_request_is_in_a_language_twice(language: str) -> None:
    counts = Counter(_said(request) for request, *_ in example_bank()[language])
    assert [request for request, n in counts.items() if n > 1] == []


@pytest.mark.parametrize("language", sorted(LANGUAGES))
def test_every_fact_has_words_to_be_found_by_and_no_fact_is_there_twice(language: str) -> None:
    facts = reference_bank()[language]
    assert [keys for keys, fact in facts if not keys.split() or not fact.strip()] == []
    counts = Counter(_said(fact) for _, fact in facts)
    assert [fact for fact, n in counts.items() if n > 1] == []
    hangul = [fact for _, fact in facts if re.search(r"[가-힣]", fact)]
    assert len(hangul) == len(facts) if language == "ko" else hangul == []


def test_the_loaders_read_once_and_give_what_the_files_hold() -> None:
    assert example_bank() is example_bank() and reference_bank() is reference_bank()
    assert read_examples(banks.data_file(banks.EXAMPLES_FILE)) == example_bank()
    assert read_reference(banks.data_file(banks.REFERENCE_FILE)) == reference_bank()
    request, say, tool, args = example_bank()["en"][0]
    assert (request, tool, type(args["duration_s"])) == ("start a timer for twelve minutes", "timer_start", int)


def test_the_files_are_shipped_with_the_package() -> None:
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["package-data"]["agent"]
    files = sorted(p.relative_to(ROOT / "agent").as_posix() for p in (ROOT / "agent" / "deciding" / "data").iterdir())
    assert files and [f for f in files if not any(fnmatch.fnmatch(f, pattern) for pattern in patterns)] == []


GOOD = '{ request = "set a 3 minute timer", say = "Three minutes.", tool = "timer_start", args = { duration_s = 180 } }'


@pytest.mark.parametrize(
    ("text", "where"),
    [
        (f'en = [\n  {GOOD},\n  {{ request = "two minutes", say = "Two.", tool = "timer_start", args = {{ duration_s = [120] }} }},\n]',
         "en entry 2 ('two minutes'): args.duration_s: must be a string, number or boolean, not list"),
        (f'en = [ {GOOD} ]\nko = [ {{ request = "타이머 꺼 줘", tool = "timer_cancel" }} ]', "ko entry 1 ('타이머 꺼 줘'): say: Field required"),
        (f'en = [ {GOOD}, {{ request = "hi", say = "Hi!", tool = "none", arg = {{}} }} ]', "en entry 2 ('hi'): arg: Extra inputs are not permitted"),
        (f'en = [ {GOOD}, {{ request = " ", say = "Hi!", tool = "none" }} ]', "en entry 2 (' '): request: must not be blank"),
        ('en = [ "hi" ]', "en entry 1: should be a table"),
        ('en = { request = "hi" }', "en: should be an array"),
    ],
)
def test_a_bad_example_file_is_one_line_naming_the_file_the_entry_and_the_field(text: str, where: str, tmp_path: Path) -> None:
    path = tmp_path / "examples.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(BankError) as caught:
        read_examples(path)
    message = str(caught.value)
    assert "\n" not in message
    assert message == f"{path}: {where}"


def test_a_file_that_is_not_toml_is_one_line_naming_the_file_and_the_line(tmp_path: Path) -> None:
    path = tmp_path / "examples.toml"
    path.write_text(f"en = [\n  {GOOD}\n  {GOOD},\n]\n", encoding="utf-8")  # a comma missing
    with pytest.raises(BankError) as caught:
        read_examples(path)
    assert re.fullmatch(re.escape(f"{path}: not valid TOML (") + r".*\(at line 3, column \d+\)\)", str(caught.value))


def test_a_bad_reference_file_is_one_line_naming_the_file_the_entry_and_the_field(tmp_path: Path) -> None:
    path = tmp_path / "reference.toml"
    path.write_text('en = [\n  { keywords = "boil egg", fact = "Six minutes." },\n  { keywords = "rice", fact = "" },\n]\n', encoding="utf-8")
    with pytest.raises(BankError) as caught:
        read_reference(path)
    assert str(caught.value) == f"{path}: en entry 2 ('rice'): fact: must not be blank"


def test_nothing_is_read_when_the_users_are_imported() -> None:
    code = (
        "import agent.deciding.reference, agent.deciding.tool_examples\n"
        "from agent.deciding.banks import example_bank, reference_bank\n"
        "assert example_bank.cache_info().currsize == reference_bank.cache_info().currsize == 0\n"
    )
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, timeout=60)
