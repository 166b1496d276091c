"""Text from outside made safe to keep and to show.

Words reach hearth from other programs (Home Assistant over Wyoming, the companion page, the
configuration file).  Terminal control sequences in them would clear or retitle the terminal of
whoever reads ``hearth history``, bidirectional overrides would show "milk\u202eevil" as
"milklive" on the page, and invisible characters (a BOM, a zero-width space) would make
"\ufeffcumin" an item that looks exactly like "cumin" and is not it, on the page, in speech and in
the history.  :func:`clean` takes such characters out where text comes in; :func:`printable`
escapes whatever is left (older records, other sources) where text is printed.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator

_BIDI_CONTROLS = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
"""Marks, embeddings, overrides and isolates: each reorders or redirects the text around it."""

_BLANK_LETTERS = "\u115f\u1160\u3164\uffa0"
"""Hangul fillers: letters by category, yet blank on their own; Korean as typed or heard is whole
syllables and has no use for them, while "\u3164" alone makes an item nobody can see."""

_ZWJ = "\u200d"
_BLACK_FLAG = "\U0001f3f4"
_TAGS = range(0xE0020, 0xE0080)
_CANCEL_TAG = "\U000e007f"

_SPACES = re.compile(r"[\t\n\r\v\f\x1c-\x1f\x85\u2028\u2029]+")
"""Line and field breaks: in a one-line request or item they are a space."""


def _pictographic(ch: str) -> bool:
    """A character an emoji sequence is built from: a symbol, a skin tone, the emoji presentation."""
    return unicodedata.category(ch) == "So" or "\U0001f3fb" <= ch <= "\U0001f3ff" or ch == "\ufe0f"


def _unsafe(text: str) -> Iterator[bool]:
    """For each character of ``text``, whether it is to be taken out (or escaped).

    Controls (C0, DEL, C1) and format characters (category Cf: bidirectional controls, the BOM,
    zero-width spaces and joiners, soft hyphens, tags) all go, with the two uses an emoji has for
    them: a zero-width joiner between two pictographs ("👩\u200d🍳") and the tags that spell a
    subdivision's flag after the black flag.  Anywhere else they only hide or reorder text.
    """
    flag_tags = False  # inside the tag run of a flag sequence
    for i, ch in enumerate(text):
        if ord(ch) in _TAGS:
            flag_tags = flag_tags or (i > 0 and text[i - 1] == _BLACK_FLAG)
            yield not flag_tags
            if ch == _CANCEL_TAG:
                flag_tags = False
            continue
        flag_tags = False
        if ch == _ZWJ:
            joins = 0 < i < len(text) - 1 and _pictographic(text[i - 1]) and _pictographic(text[i + 1])
            yield not joins
            continue
        yield ch in _BIDI_CONTROLS or ch in _BLANK_LETTERS or unicodedata.category(ch) in ("Cc", "Cf")


def clean(text: str) -> str:
    """``text`` with control characters (C0, DEL, C1), bidirectional controls and invisible ones
    (BOMs, zero-width spaces and joiners, soft hyphens, tags, Hangul fillers) taken out, but for
    the joiners and tags inside an emoji; line breaks and tabs become one space each run.  Nothing
    else changes."""
    text = _SPACES.sub(" ", text)
    if text.isascii() and text.isprintable():
        return text
    return "".join(ch for ch, out in zip(text, _unsafe(text)) if not out)


def printable(text: str) -> str:
    """``text`` safe to print on a terminal: each character :func:`clean` would take out shown as
    its escape (``\\x1b``, ``\\u202e``, ``\\ufeff``), everything else as it is."""
    if text.isascii() and text.isprintable():
        return text
    return "".join(_escape(ch) if out else ch for ch, out in zip(text, _unsafe(text)))


def _escape(ch: str) -> str:
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"
