"""The sealed held-out suites (bench/suites/held-out/): they load, they are big enough, and none of
their sentences has leaked into the code or the tests.

A held-out turn's text, normalised, or any run of five consecutive words of it, must not appear in
a source, configuration or documentation file under agent/ or tests/: a phrase found there was
either tuned on or copied from, and the suite would no longer say how hearth does on requests it
was not built for.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest

from bench.suites.scenarios import suite_from_yaml
from bench.suites.schema import Suite

ROOT = Path(__file__).resolve().parents[1]
HELD_OUT = ROOT / "bench" / "suites" / "held-out"
SEARCHED = ("agent", "tests")
SUFFIXES = {".py", ".toml", ".yaml", ".json", ".md"}
RUN = 5
"""Words in a run that must not appear elsewhere."""
SHORT_KOREAN_CHARS = 8
"""A Korean text of fewer than :data:`RUN` words is looked for whole only from this many letters."""


def normalise(text: str) -> str:
    """Lowercased, punctuation (and symbols) dropped, whitespace collapsed."""
    text = unicodedata.normalize("NFKC", text).lower()
    text = "".join(" " if unicodedata.category(c)[0] in "PSZC" else c for c in text)
    return " ".join(text.split())


def _files() -> list[Path]:
    here = Path(__file__).resolve()
    found = []
    for top in SEARCHED:
        for path in sorted((ROOT / top).rglob("*")):
            if path.suffix not in SUFFIXES or not path.is_file() or path.resolve() == here:
                continue
            if (ROOT / "bench") in path.resolve().parents:
                continue
            found.append(path)
    return found


def _suites() -> list[tuple[Path, Suite]]:
    return [(path, suite_from_yaml(path)) for path in sorted(HELD_OUT.glob("*.yaml"))]


def _turns(suite: Suite) -> list[str]:
    return [text for s in suite.scenarios for text in (s.said, *(f.said for f in s.followups))]


def _phrases(text: str, language: str) -> list[str]:
    """What of one turn must not appear elsewhere: the whole text, and each run of five words."""
    words = normalise(text).split()
    if not words:
        return []
    phrases = [" ".join(words[i:i + RUN]) for i in range(len(words) - RUN + 1)]
    if len(words) >= RUN or language != "ko" or len("".join(words)) >= SHORT_KOREAN_CHARS:
        phrases.append(" ".join(words))
    return phrases


def test_the_held_out_suites_load_and_are_big_enough() -> None:
    suites = _suites()
    assert suites, f"no suites in {HELD_OUT}"
    turns = {"en": 0, "ko": 0}
    for path, suite in suites:
        assert suite.suite == path.stem
        assert "Sealed held-out suite" in suite.description
        turns[suite.language] += len(_turns(suite))
    assert turns["en"] >= 40, turns
    assert turns["ko"] >= 30, turns


def test_no_held_out_sentence_appears_in_the_code_or_the_tests() -> None:
    wanted: dict[str, str] = {}
    for path, suite in _suites():
        for text in _turns(suite):
            for phrase in _phrases(text, suite.language):
                wanted.setdefault(phrase, f"{path.name}: {text!r}")
    if not wanted:
        pytest.fail("no held-out phrases to look for")
    leaks = []
    for path in _files():
        try:
            body = f" {normalise(path.read_text(encoding='utf-8', errors='replace'))} "
        except OSError:
            continue
        for phrase, where in wanted.items():
            if f" {phrase} " in body:
                leaks.append(f"{path.relative_to(ROOT)} holds {phrase!r} (from {where})")
    assert not leaks, "held-out phrases found outside the held-out suites:\n" + "\n".join(leaks)


def test_normalising_drops_case_punctuation_and_spacing() -> None:
    assert normalise("  Hey,   TURN it off!  ") == "hey turn it off"
    assert normalise("거실 불 좀 꺼 줄래?") == "거실 불 좀 꺼 줄래"
    assert _phrases("응.", "ko") == []
    assert _phrases("a b c d e f", "en") == ["a b c d e", "b c d e f", "a b c d e f"]
    assert re.fullmatch(r"[a-z ]+", normalise("It's twenty-two."))
