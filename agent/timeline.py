"""A turn's timeline: what happened when, on the listener's side of the speaker.

Marks are ``time.monotonic()`` stamps, stored relative to the turn's origin (the
button press).  Audio marks come from the speaker's own clock (when a sample
reached the output), never from the moment text or audio was handed over.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Mark:
    """One moment in a turn."""

    name: str
    """What happened, e.g. ``speech_start`` or ``first_audio_out``."""
    t: float
    """Seconds since the turn's origin."""
    detail: dict[str, Any] = field(default_factory=dict)
    """Anything that helps reading it (a partial's text, a unit's index)."""


# The marks every turn is expected to have, in the order a listener meets them.
KEY_MARKS = (
    "speech_start",
    "speech_end",
    "endpoint",
    "final_transcript",
    "first_token",
    "first_audio_out",
    "last_audio_out",
)


RESUMED = "listening_resumed"
"""The user spoke again after an end that was only a head start: what follows is a new answer."""


class Timeline:
    """Collects marks for one turn; cheap enough to call from any hot path on the loop."""

    def __init__(self, origin: float | None = None) -> None:
        self.origin = time.monotonic() if origin is None else origin
        self.marks: list[Mark] = []

    def mark(self, name: str, at: float | None = None, **detail: Any) -> Mark:
        """Record ``name`` at monotonic time ``at`` (default: now)."""
        stamp = time.monotonic() if at is None else at
        m = Mark(name, round(stamp - self.origin, 4), detail)
        self.marks.append(m)
        return m

    def mark_once(self, name: str, at: float | None = None, **detail: Any) -> Mark | None:
        """Record ``name`` only if it was not recorded before (first token, first audio), counting
        from the last ``listening_resumed``: the user went on, and the turn's answer starts anew."""
        resumed = self.last(RESUMED)
        if any(m.name == name and (resumed is None or m.t >= resumed.t) for m in self.marks):
            return None
        return self.mark(name, at, **detail)

    def first(self, name: str) -> Mark | None:
        return next((m for m in self.marks if m.name == name), None)

    def last(self, name: str) -> Mark | None:
        return next((m for m in reversed(self.marks) if m.name == name), None)

    def all(self, name: str) -> list[Mark]:
        return [m for m in self.marks if m.name == name]

    def between(self, start: str, end: str) -> float | None:
        """Seconds from the last ``start`` to the first ``end`` mark after it, if both exist.

        The last start: a pause in speech marks ``speech_end`` more than once, and the
        listener waits from the end of the last stretch of speech.
        """
        a = self.last(start)
        b = next((m for m in self.marks if m.name == end and a is not None and m.t >= a.t), None)
        if a is None or b is None:
            return None
        return round(b.t - a.t, 4)

    def summary(self) -> dict[str, float | None]:
        """The figures a person asks about first."""
        return {
            "speech_end_to_first_audio_s": self.between("speech_end", "first_audio_out"),
            "endpoint_to_final_transcript_s": self.between("endpoint", "final_transcript"),
            "final_transcript_to_first_token_s": self.between("final_transcript", "first_token"),
            "first_token_to_first_audio_s": self.between("first_token", "first_audio_out"),
        }

    def to_dict(self) -> dict[str, Any]:
        ordered = sorted(self.marks, key=lambda m: m.t)
        return {
            "marks": [asdict(m) for m in ordered],
            "summary": self.summary(),
        }

    def write_json(self, path: Path) -> None:
        path.write_text(json.dumps(self.to_dict(), ensure_ascii=False, indent=2) + "\n", encoding="utf-8")

    def render(self) -> str:
        """A plain table for a terminal: time, mark, detail."""
        lines = [f"{'t (s)':>8}  event"]
        for m in sorted(self.marks, key=lambda m: m.t):
            detail = ""
            if "text" in m.detail:
                detail = f"  {m.detail['text']!r}"
            elif m.detail:
                detail = "  " + ", ".join(f"{k}={v}" for k, v in m.detail.items())
            lines.append(f"{m.t:8.3f}  {m.name}{detail}")
        for key, value in self.summary().items():
            lines.append(f"{key}: {'-' if value is None else f'{value:.3f}'}")
        return "\n".join(lines)
