"""Text from outside made safe to keep and to show.

Words reach hearth from other programs (Home Assistant over Wyoming, the companion page, the
configuration file).  Terminal control sequences in them would clear or retitle the terminal of
whoever reads ``hearth history``, and bidirectional overrides would show "milk\u202eevil" as
"milklive" on the page.  :func:`clean` takes such characters out where text comes in;
:func:`printable` escapes whatever is left (older records, other sources) where text is printed.
"""

from __future__ import annotations

import re
import unicodedata

_BIDI_CONTROLS = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
"""Marks, embeddings, overrides and isolates: each reorders or redirects the text around it."""

_SPACES = re.compile(r"[\t\n\r\v\f\x1c-\x1f\x85\u2028\u2029]+")
"""Line and field breaks: in a one-line request or item they are a space."""


def _unsafe(ch: str) -> bool:
    return ch in _BIDI_CONTROLS or unicodedata.category(ch) == "Cc"


def clean(text: str) -> str:
    """``text`` with control characters (C0, DEL, C1) and bidirectional controls taken out; line
    breaks and tabs become one space each run.  Nothing else changes: emoji joiners stay."""
    text = _SPACES.sub(" ", text)
    if not any(_unsafe(ch) for ch in text):
        return text
    return "".join(ch for ch in text if not _unsafe(ch))


def printable(text: str) -> str:
    """``text`` safe to print on a terminal: each control or bidirectional character shown as its
    escape (``\\x1b``, ``\\u202e``), everything else as it is."""
    if not any(_unsafe(ch) for ch in text):
        return text
    return "".join(_escape(ch) if _unsafe(ch) else ch for ch in text)


def _escape(ch: str) -> str:
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
