"""The lexicons: what the shipped files hold, and a clear one-line error for a file that is wrong."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agent.deciding.lexicon import LANGUAGES, LexiconError, lexicon, parse_lexicon

DECIDING = Path(__file__).resolve().parent.parent / "agent" / "deciding"


def _asked_for() -> set[str]:
    """Every class the deciding code asks a lexicon for by a literal name."""
    names: set[str] = set()
    for path in DECIDING.glob("*.py"):
        text = path.read_text(encoding="utf-8")
        names |= set(re.findall(r"\.(?:phrases|alternation|has)\(\s*[\"']([a-z_]*[a-z])[\"']\s*[,)]", text))
    return names


SHARED = ("lead", "pronoun", "not_home", "yes", "no", "no_lead", "negation", "home_weak_verbs",
          *(f"home_{action}" for action in ("on", "off", "open", "close", "lock", "unlock", "set")),
          *(f"small_talk_{kind}" for kind in ("lead", "thanks", "greeting", "never_mind")))
"""Classes read the same way in both languages: each lexicon must have them."""


@pytest.mark.parametrize("language", LANGUAGES)
def test_each_language_has_the_classes_read_in_both(language):
    lex = lexicon(language)
    for name in SHARED:
        assert lex.phrases(name), (language, name)


def test_every_class_the_code_names_is_in_a_lexicon():
    asked = _asked_for()
    assert {"lead", "question_open", "home_state_question", "yes"} <= asked  # the scan finds what the code reads
    for name in asked:
        assert any(name in lexicon(language).classes for language in LANGUAGES), f"no lexicon has [{name}]"


def test_phrases_are_normalised_and_longest_first():
    lex = parse_lexicon("x.toml", '[a]\nwhat = "w"\nphrases = ["Turn", "turn  on", "on"]\n')
    assert lex.phrases("a") == ("turn on", "turn", "on")
    assert re.fullmatch(lex.alternation("a"), "turn   on")
    assert lex.has("a", "turn on") and not lex.has("a", "turn off")


@pytest.mark.parametrize(("text", "message"), [
    ("[a\n", "x.toml: not TOML"),
    ('[a]\nphrases = ["x"]\n', "x.toml: [a] needs a 'what' sentence"),
    ('[a]\nwhat = "w"\n', "x.toml: [a] needs a non-empty 'phrases' list"),
    ('[a]\nwhat = "w"\nphrases = []\n', "x.toml: [a] needs a non-empty 'phrases' list"),
    ('[a]\nwhat = "w"\nphrases = ["x", " "]\n', "x.toml: [a] has a blank or non-text phrase"),
    ('[a]\nwhat = "w"\nphrases = ["x", 3]\n', "x.toml: [a] has a blank or non-text phrase"),
    ('[a]\nwhat = "w"\nphrases = ["x", "X"]\n', "x.toml: [a] repeats 'X'"),
    ('[a]\nwhat = "w"\nphrases = ["x"]\nwhy = "y"\n', "x.toml: [a] has unknown keys"),
    ('a = 1\n', "x.toml: [a] must be a table"),
])
def test_a_wrong_lexicon_is_one_line_naming_the_file_and_the_class(text, message):
    with pytest.raises(LexiconError) as caught:
        parse_lexicon("x.toml", text)
    assert str(caught.value).startswith(message) and "\n" not in str(caught.value)


def test_a_class_the_file_lacks_and_a_language_without_a_lexicon_are_named():
    with pytest.raises(LexiconError, match=r"lexicon-en.toml: no class 'no_such_class'"):
        lexicon("en").phrases("no_such_class")
    with pytest.raises(LexiconError, match="no lexicon for language 'fr'"):
        lexicon("fr")
