"""Text from outside: control and bidirectional characters out where it comes in, escaped where printed."""

from __future__ import annotations

from firmware_py.safe_text import clean, printable


def test_terminal_sequences_and_bidi_overrides_are_taken_out():
    assert clean("hello \x1b[2J\x1b]0;pwned\x07 there") == "hello [2J]0;pwned there"
    assert clean("eggs\u001b[31mRED") == "eggs[31mRED"
    assert clean("milk\u202eevil") == "milkevil"
    assert clean("a\u0085b\x9bc\x7fd") == "a bcd"
    assert clean("two\nlines\tand a tab") == "two lines and a tab"


def test_ordinary_text_is_left_as_it_is():
    for text in ("Set a timer for ten minutes.", "우유 추가해 줘", "👩‍🍳 chef's kiss", "½ cup", "café"):
        assert clean(text) == text
        assert printable(text) == text


def test_printing_escapes_what_was_stored_raw():
    assert printable("hello \x1b[2J there") == "hello \\x1b[2J there"
    assert printable("milk\u202eevil") == "milk\\u202eevil"
    assert printable("bell\x07") == "bell\\x07"
