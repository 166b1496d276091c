"""The sealed held-out suites (bench/suites/held-out/): they load, they are big enough, and none of
their sentences has leaked into the code or the tests.

A held-out turn's text, normalised, or any run of five consecutive words of it, must not appear in
a source, configuration or documentation file under agent/ or tests/: a phrase found there was
either tuned on or copied from, and the suite would no longer say how hearth does on requests it
was not built for.
"""

from __future__ import annotations

import hashlib
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
SHORT_ENGLISH_WORDS = 3
"""An English text of fewer than :data:`RUN` words is looked for whole only from this many words: a
word or two ("Thanks.", "Next step.") is any kitchen's, and copies nothing."""

FOUND_BEFORE_SEALING: frozenset[tuple[str, str]] = frozenset({
    ("agent/deciding/commands.py", "13e41816451f8ad6"),
    ("agent/deciding/commands.py", "6c6d63411e810f37"),
    ("agent/deciding/commands.py", "8e135eb5f183962d"),
    ("agent/deciding/commands.py", "b2a21283a61a1e51"),
    ("agent/deciding/commands.py", "b7130085d3190551"),
    ("agent/deciding/commands.py", "c2c36dc9d66e5179"),
    ("agent/deciding/confirm.py", "3106987d1754ecd8"),
    ("agent/deciding/confirm.py", "780f94dcf198f04a"),
    ("agent/deciding/confirm.py", "e8aa56dc9e6f4f52"),
    ("agent/deciding/confirm.py", "fa09aca538224bf8"),
    ("agent/deciding/corrections.py", "11b820ee64988264"),
    ("agent/deciding/corrections.py", "7ad51212ea06cb6b"),
    ("agent/deciding/corrections.py", "8ccbc045ffc48e42"),
    ("agent/deciding/data/examples.toml", "0a61207381b5ae9a"),
    ("agent/deciding/data/examples.toml", "1a75f7abefe2eaeb"),
    ("agent/deciding/data/examples.toml", "46efce553ff63754"),
    ("agent/deciding/data/examples.toml", "49352967757d3cf1"),
    ("agent/deciding/data/examples.toml", "62714be4a62a6bda"),
    ("agent/deciding/data/examples.toml", "6d8a4890aedc11e1"),
    ("agent/deciding/data/examples.toml", "781e6a913376de46"),
    ("agent/deciding/data/examples.toml", "7f26529f4af4d14f"),
    ("agent/deciding/data/examples.toml", "a6e97236d69bcb99"),
    ("agent/deciding/data/examples.toml", "b48f43826779ec69"),
    ("agent/deciding/data/examples.toml", "b63dbc5a914f5335"),
    ("agent/deciding/data/examples.toml", "b93ae3ca7cc5cad6"),
    ("agent/deciding/data/examples.toml", "bdb7474d88df61bc"),
    ("agent/deciding/data/examples.toml", "c56ad3ca7b6141ee"),
    ("agent/deciding/data/examples.toml", "cd40c4c85665b8ad"),
    ("agent/deciding/data/examples.toml", "e3fff6aa477638ec"),
    ("agent/deciding/data/examples.toml", "fe8efbea6f240d6b"),
    ("agent/deciding/data/examples.toml", "fe8f6d029bccc38d"),
    ("agent/deciding/data/lexicon-en.toml", "10df65996e17ebbf"),
    ("agent/deciding/data/lexicon-en.toml", "780f94dcf198f04a"),
    ("agent/deciding/data/lexicon-en.toml", "81d8a9aa2d4c008e"),
    ("agent/deciding/data/lexicon-en.toml", "c06fc555902938b4"),
    ("agent/deciding/data/lexicon-en.toml", "fa4ab9cd94b98724"),
    ("agent/deciding/data/lexicon-ko.toml", "fa4ab9cd94b98724"),
    ("agent/deciding/data/reference.toml", "4d9b07edb1d9dfae"),
    ("agent/deciding/data/reference.toml", "5102f35a06bd7667"),
    ("agent/deciding/data/reference.toml", "5bc16bf3080532ee"),
    ("agent/deciding/data/reference.toml", "b93ae3ca7cc5cad6"),
    ("agent/deciding/extract.py", "547ac2132bd28f43"),
    ("agent/deciding/extract_units.py", "1b1ea1449a2f42be"),
    ("agent/deciding/extract_units.py", "d893108459c15e81"),
    ("agent/deciding/home_commands.py", "7abc7f1edf05b5db"),
    ("agent/deciding/home_commands.py", "933be057e91ccc33"),
    ("agent/deciding/home_commands.py", "fa09aca538224bf8"),
    ("agent/deciding/home_commands.py", "ff236e5da92600cb"),
    ("agent/deciding/reasoner.py", "9f98af05e2545779"),
    ("agent/deciding/reasoner.py", "fc7f83f76d87eb0f"),
    ("agent/deciding/several.py", "5102f35a06bd7667"),
    ("agent/deciding/tool_examples.py", "1fe04e9ba8170281"),
    ("agent/deciding/tool_examples.py", "54174b0858d3e04c"),
    ("agent/results.py", "3106987d1754ecd8"),
    ("tests/data/README.md", "930b49b6b3056705"),
    ("tests/test_arguments.py", "0fdc68d587cbb2fc"),
    ("tests/test_arguments.py", "1b1ea1449a2f42be"),
    ("tests/test_arguments.py", "52d1161c17ade5a0"),
    ("tests/test_arguments.py", "54174b0858d3e04c"),
    ("tests/test_arguments.py", "930b49b6b3056705"),
    ("tests/test_arguments.py", "b93ae3ca7cc5cad6"),
    ("tests/test_arguments.py", "f28dacba7409a84d"),
    ("tests/test_bench_scenarios.py", "3106987d1754ecd8"),
    ("tests/test_bench_scenarios.py", "94cd30e5a750696e"),
    ("tests/test_bench_scoring.py", "930b49b6b3056705"),
    ("tests/test_bench_scoring.py", "edf6050fcd25726f"),
    ("tests/test_corrections.py", "6d8a4890aedc11e1"),
    ("tests/test_corrections.py", "87a35d0537623738"),
    ("tests/test_follow_ups.py", "052ca1089cf4255b"),
    ("tests/test_follow_ups.py", "1a75f7abefe2eaeb"),
    ("tests/test_follow_ups.py", "800b1a42f24d847b"),
    ("tests/test_follow_ups.py", "9df4ba659f96510c"),
    ("tests/test_follow_ups.py", "e10956448bf09f13"),
    ("tests/test_grammar_sampling.py", "71a35152475fe68e"),
    ("tests/test_grammar_sampling.py", "8c328ba30172000a"),
    ("tests/test_grammar_sampling.py", "91617eb9e530574e"),
    ("tests/test_grammar_sampling.py", "d724f66f6d118d40"),
    ("tests/test_hearing_integration.py", "930b49b6b3056705"),
    ("tests/test_heartbeat.py", "0fdc68d587cbb2fc"),
    ("tests/test_home_assistant_core.py", "708602ac8bce9ce8"),
    ("tests/test_home_assistant_core.py", "76082f1ae94d9027"),
    ("tests/test_home_assistant_core.py", "fa09aca538224bf8"),
    ("tests/test_home_assistant_tools.py", "01dc3ee36ecb7d78"),
    ("tests/test_home_assistant_tools.py", "2e35fe209b5c1785"),
    ("tests/test_home_assistant_tools.py", "3106987d1754ecd8"),
    ("tests/test_home_assistant_tools.py", "5ac80138c6f15b01"),
    ("tests/test_home_assistant_tools.py", "7abc7f1edf05b5db"),
    ("tests/test_home_assistant_tools.py", "c10a4cccae1c2e1d"),
    ("tests/test_home_assistant_tools.py", "f4b1598993d36834"),
    ("tests/test_home_assistant_tools.py", "fa09aca538224bf8"),
    ("tests/test_home_assistant_tools.py", "ff236e5da92600cb"),
    ("tests/test_home_understanding.py", "1cfe21183f28a6aa"),
    ("tests/test_home_understanding.py", "6b97230a0a6a25b7"),
    ("tests/test_home_understanding.py", "6c812e40ceab1b96"),
    ("tests/test_home_understanding.py", "8e01fc956534ce5a"),
    ("tests/test_home_understanding.py", "93d321ec5539d6ab"),
    ("tests/test_home_understanding.py", "f7784d4f2ee87957"),
    ("tests/test_home_understanding.py", "fa09aca538224bf8"),
    ("tests/test_injection.py", "76082f1ae94d9027"),
    ("tests/test_intents.py", "0c38b263353b04c7"),
    ("tests/test_intents.py", "dd15a115f0e875d1"),
    ("tests/test_live_view.py", "11b820ee64988264"),
    ("tests/test_live_view.py", "7ad51212ea06cb6b"),
    ("tests/test_meal_ideas.py", "d036f16e3271d651"),
    ("tests/test_mic_check_integration.py", "930b49b6b3056705"),
    ("tests/test_moonshine_asr_integration.py", "930b49b6b3056705"),
    ("tests/test_origins.py", "76082f1ae94d9027"),
    ("tests/test_reasoner.py", "1b1ea1449a2f42be"),
    ("tests/test_recipe_reading.py", "6c6d63411e810f37"),
    ("tests/test_recipe_reading.py", "780f94dcf198f04a"),
    ("tests/test_recipe_reading.py", "8e135eb5f183962d"),
    ("tests/test_recipe_reading.py", "c94d412d954b0c00"),
    ("tests/test_recipe_reading.py", "ee784a836a1aab24"),
    ("tests/test_record_before_store.py", "3989d69f3381466d"),
    ("tests/test_record_before_store.py", "76082f1ae94d9027"),
    ("tests/test_remote_model.py", "1a75f7abefe2eaeb"),
    ("tests/test_request_classes.py", "6ff24dc4f509a9bd"),
    ("tests/test_rule_count.py", "c06fc555902938b4"),
    ("tests/test_several_things.py", "9334397efb949168"),
    ("tests/test_shared_list.py", "76082f1ae94d9027"),
    ("tests/test_tool_calls.py", "2c9aff69adc44271"),
    ("tests/test_tool_calls.py", "65d2bbf2570d051a"),
    ("tests/test_tool_calls.py", "8c328ba30172000a"),
    ("tests/test_tool_calls.py", "bade59bfe39d9519"),
    ("tests/test_tool_calls_integration.py", "94cd30e5a750696e"),
    ("tests/test_tools_integration.py", "76082f1ae94d9027"),
    ("tests/test_tools_integration.py", "930b49b6b3056705"),
    ("tests/test_turn.py", "930b49b6b3056705"),
    ("tests/test_turn_end.py", "930b49b6b3056705"),
    ("tests/test_turn_tools.py", "76082f1ae94d9027"),
    ("tests/test_turn_tools.py", "780f94dcf198f04a"),
    ("tests/test_volume.py", "826df4b651bfb6a9"),
    ("tests/test_whisper_asr.py", "930b49b6b3056705"),
    ("tests/test_whisper_rescore.py", "76082f1ae94d9027"),
})
"""Phrases of held-out-2, held-out-6, held-out-7 and held-out-8 that were already in a file when the set was written apart
from the code (common kitchen words such as a bare yes or a plain timer request): ``(file, digest
of the phrase)``. They are no leak, and only their digests are kept so that no held-out words are
written here. Any other phrase found is one."""


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
    if len(words) >= RUN or (language == "ko" and len("".join(words)) >= SHORT_KOREAN_CHARS) or (
            language != "ko" and len(words) >= SHORT_ENGLISH_WORDS):
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


def digest(phrase: str) -> str:
    return hashlib.sha256(phrase.encode()).hexdigest()[:16]


def test_no_held_out_sentence_appears_in_the_code_or_the_tests() -> None:
    wanted: dict[str, str] = {}
    for path, suite in _suites():
        for text in _turns(suite):
            for phrase in _phrases(text, suite.language):
                wanted.setdefault(phrase, path.name)
    if not wanted:
        pytest.fail("no held-out phrases to look for")
    leaks = []
    for path in _files():
        try:
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
        body = f" {normalise(chr(10).join(lines))} "
        name = str(path.relative_to(ROOT))
        for phrase, suite_file in wanted.items():
            if f" {phrase} " in body and (name, digest(phrase)) not in FOUND_BEFORE_SEALING:
                # The held-out words are not printed (reading them would unseal the suite): the
                # place is named, and what is there must be reworded or removed.
                first = phrase.split()[0]
                at = next((i + 1 for i, line in enumerate(lines) if first in normalise(line).split()), 0)
                leaks.append(f"{name} (near line {at}) holds {len(phrase.split())} words of {suite_file}, digest {digest(phrase)}")
    assert not leaks, "held-out phrases found outside the held-out suites:\n" + "\n".join(leaks)


def test_normalising_drops_case_punctuation_and_spacing() -> None:
    assert normalise("  Hey,   TURN it off!  ") == "hey turn it off"
    assert normalise("거실 불 좀 꺼 줄래?") == "거실 불 좀 꺼 줄래"
    assert _phrases("응.", "ko") == []
    assert _phrases("a b c d e f", "en") == ["a b c d e", "b c d e f", "a b c d e f"]
    assert _phrases("Next step.", "en") == [] and _phrases("Go on then.", "en") == ["go on then"]
    assert re.fullmatch(r"[a-z ]+", normalise("It's twenty-two."))
