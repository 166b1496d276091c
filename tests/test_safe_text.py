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


INVISIBLE = ["\ufeff", "\u200b", "\u200c", "\u200d", "\u2060", "\u00ad", "\u180e", "\u3164", "\U000e0041"]
"""A BOM, zero-width space, non-joiner and joiner, word joiner, soft hyphen, Mongolian vowel separator,
Hangul filler, a tag character: each invisible, so "\\ufeffcumin" would look exactly like "cumin"."""


def test_zero_width_characters_and_boms_are_taken_out_like_the_controls():
    for ch in INVISIBLE:
        assert clean(f"{ch}cumin") == "cumin", repr(ch)
        assert clean(f"cu{ch}min{ch}") == "cumin", repr(ch)
        code = ord(ch)
        escape = f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"
        assert printable(f"{ch}cumin") == f"{escape}cumin", repr(ch)
    assert clean("\ufeff우유 추가해 줘\u200b") == "우유 추가해 줘"


def test_joiners_that_build_an_emoji_stay():
    for text in ("👩\u200d🍳", "👨\u200d👩\u200d👧", "🏳\ufe0f\u200d🌈", "👍🏽", "🏴\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f"):
        assert clean(text) == text and printable(text) == text, repr(text)
    # Beside a letter a joiner builds nothing: it only makes two words that look the same differ.
    assert clean("milk\u200d🍳") == "milk🍳" and clean("🍳\u200dmilk") == "🍳milk"
    # Tags outside a flag's sequence carry hidden words ("ASCII smuggling"): out.
    assert clean("pasta\U000e0069\U000e0067\U000e006e\U000e006f\U000e0072\U000e0065") == "pasta"
