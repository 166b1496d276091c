"""Grammar sampling: JSON strings under the grammar refuse raw control characters."""

from __future__ import annotations



from agent.model.llm import json_gbnf


def test_json_strings_in_the_grammar_refuse_raw_control_characters() -> None:
    grammar = json_gbnf({"type": "object", "properties": {"say": {"type": "string"}}, "required": ["say"]})
    char_rule = next(line for line in grammar.splitlines() if line.startswith("char ::="))
    assert "\\x00-\\x1F" in char_rule and "\\x7F" in char_rule


REQUESTS = [
    ("en", "could you put a timer on for eight minutes"),
    ("en", "what's the weather doing in Lisbon"),
    ("en", "add cherry tomatoes to the shopping list"),
    ("en", "how many grams is a third of a cup of sugar"),
    ("en", "cheers!"),
    ("ko", "떡볶이 레시피 알려 줘"),
    ("ko", "타이머 2분 늘려 줘"),
]


