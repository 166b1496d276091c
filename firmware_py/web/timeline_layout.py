"""A turn's timeline as lanes of spans and ticks: the picture's content, before any drawing.

``build_layout`` reads ``Timeline.to_dict()`` marks and decides what goes in which
lane, what each bar is labelled and which intervals are bracketed;
:mod:`firmware_py.web.timeline_view` draws it as PNG and HTML.
"""

from __future__ import annotations

import logging
import math
import re
from dataclasses import dataclass, replace
from typing import Any

log = logging.getLogger(__name__)

# Pixel geometry shared by both renderers.  Label fitting is done by counting
# characters at an estimated width, so both pictures cut labels identically.
WIDTH_PX = 1600
LEFT_PX = 118  # lane titles
RIGHT_PX = 24
FONT_PX = 12
LABEL_PX = 11  # text on bars and beside ticks
CHAR_PX = 6.2  # DejaVu Sans at LABEL_PX, averaged over mixed text; errs wide
TITLE_PX = 17
HEADER_LINE_PX = 18
ROW_PX = 16  # one row of tick labels
BAR_PX = 24
LANE_PAD_PX = 7
BRACKET_ROW_PX = 19
AXIS_PX = 52
MAX_LABEL_ROWS = 5
MAX_TICK_CHARS = 30
_FALLBACK_FONTS = ("Noto Sans CJK KR", "Noto Sans KR", "NanumGothic", "Noto Sans CJK JP", "UnDotum")
PAUSE_MIN_S = 0.03  # shorter silences between units are scheduling noise, not pauses

# Fill colour and the text colour that reads on it, per kind of span or tick.
COLOURS: dict[str, tuple[str, str]] = {
    "speech": ("#4c78a8", "#ffffff"),
    "speech_unsure": ("#a9c1dc", "#1a1a1a"),
    "pause": ("#e4e4e4", "#555555"),
    "partial": ("#2f8f89", "#1a1a1a"),
    "decode": ("#54a24b", "#ffffff"),
    "decode_abandoned": ("#b8dcb0", "#1a1a1a"),
    "final": ("#2d6a27", "#1a1a1a"),
    "endpoint": ("#333333", "#1a1a1a"),
    "llm": ("#f58518", "#1a1a1a"),
    "first_token": ("#b34700", "#1a1a1a"),
    "speculative": ("#bab0ac", "#1a1a1a"),
    "tool": ("#b279a2", "#ffffff"),
    "tool_failed": ("#e45756", "#ffffff"),
    "pretool": ("#7a4f6f", "#1a1a1a"),
    "tts": ("#eeca3b", "#1a1a1a"),
    "audio": ("#2a9d8f", "#ffffff"),
    "audio_filler": ("#92d3ca", "#1a1a1a"),
    "capped": ("#9c2b2b", "#1a1a1a"),
    "other": ("#777777", "#1a1a1a"),
    "interrupted": ("#d62728", "#d62728"),
}

# Marks drawn by a lane of their own; anything else lands on "other".
_KNOWN = {
    "speech_start", "speech_end", "speech_resumed", "utterance_capped",
    "partial_transcript", "final_decode_started", "endpoint", "final_from_partial", "final_transcript",
    "llm_start", "first_token", "llm_end",
    "tool_start", "tool_end", "pretool_line",
    "tts_start", "tts_end",
    "unit_audio_out", "first_audio_out", "last_audio_out", "pause_start", "pause_end",
    "interrupted",
}  # fmt: skip


@dataclass(frozen=True)
class Span:
    """A stretch of time on a lane: something was spoken, decoded, generated, synthesized or heard."""

    start: float
    """Seconds since the turn began (the button press, or the words arriving for a text turn)."""
    end: float
    kind: str
    """Style key in ``COLOURS``."""
    label: str = ""
    """Text drawn on the bar, already cut to fit it (empty when nothing readable fits)."""
    detail: str = ""
    """Full description, shown on hover."""
    open: bool = False
    """The end was never recorded; the bar stops where the turn did."""
    track: int = 0
    """Bar row within the lane; only bars that overlap (parallel tools) need more than one."""

    @property
    def seconds(self) -> float:
        return self.end - self.start


@dataclass(frozen=True)
class Tick:
    """A moment on a lane, flagged by a line with its label on one of the rows above the bars."""

    t: float
    kind: str
    label: str = ""
    detail: str = ""
    row: int = 0
    """Label row, 0 nearest the bars; neighbouring labels go on different rows."""
    left: bool = False
    """The label sits left of the line (near the right edge, where there is no room after it)."""


@dataclass(frozen=True)
class Lane:
    """One row of the chart: its spans and ticks."""

    key: str
    title: str
    spans: tuple[Span, ...] = ()
    ticks: tuple[Tick, ...] = ()

    @property
    def tracks(self) -> int:
        return 1 + max((s.track for s in self.spans), default=0)

    @property
    def rows(self) -> int:
        return 1 + max((t.row for t in self.ticks if t.label), default=-1)


@dataclass(frozen=True)
class Bracket:
    """A key interval, from the end of speech to a milestone, drawn under the lanes with its seconds."""

    start: float
    end: float
    label: str
    row: int

    @property
    def seconds(self) -> float:
        return self.end - self.start


AXIS_PRESS = "seconds since the button press"
AXIS_WORDS = "seconds since the words arrived"
"""A text turn (Home Assistant's ``handle``) had no press and no speech: its time starts with its words."""


@dataclass(frozen=True)
class Layout:
    """Everything the renderers draw; times are seconds since the turn began (:attr:`axis`)."""

    title: str
    header: tuple[str, ...]
    lanes: tuple[Lane, ...]
    brackets: tuple[Bracket, ...]
    markers: tuple[Tick, ...]
    """Moments drawn through every lane (an interruption)."""
    t_end: float
    """Right end of the time axis."""
    width_px: int = WIDTH_PX
    axis: str = AXIS_PRESS
    """What the time axis counts from, as written under it."""

    def lane(self, key: str) -> Lane | None:
        return next((lane for lane in self.lanes if lane.key == key), None)


@dataclass(frozen=True)
class _Mark:
    name: str
    t: float
    detail: dict[str, Any]


# -- marks to lanes ---------------------------------------------------------------------------


def build_layout(timeline: dict[str, Any], title: str = "", width_px: int = WIDTH_PX) -> Layout:
    """Lay out one turn: lanes of spans and ticks, key intervals, and labels fitted to ``width_px``."""
    marks = sorted(
        (_Mark(str(m["name"]), float(m["t"]), dict(m.get("detail") or {})) for m in timeline.get("marks", [])),
        key=lambda m: m.t,
    )
    # A mark stamped before the turn's origin (work begun a moment before it) is drawn at 0: the
    # axis starts at the origin, and nothing may be drawn left of it, over the lane titles.
    marks = [replace(m, t=max(0.0, m.t)) for m in marks]
    last_t = max((m.t for m in marks), default=0.0)
    interrupted = next((m.t for m in marks if m.name == "interrupted"), None)
    stop = interrupted if interrupted is not None else last_t

    speaker = _speaker(marks, stop)
    t_end = max([last_t, *(s.end for s in speaker)], default=0.0)
    t_end = max(1.0, t_end * 1.015 + 0.05)  # room for the last bar's edge
    s_per_px = t_end / (width_px - LEFT_PX - RIGHT_PX)

    lanes = [
        Lane("speech", "user speech", *_speech(marks, stop)),
        Lane("recognizer", "recognizer", *_recognizer(marks, stop)),
        Lane("llm", "LLM", *_llm(marks, stop)),
        Lane("speculative", "speculative", *_speculative(marks, stop)),
        Lane("tools", "tools", *_tools(marks, stop)),
        Lane("synthesis", "synthesis", *_synthesis(marks, stop)),
        Lane("speaker", "speaker", tuple(speaker), ()),
        Lane("other", "other", (), tuple(Tick(m.t, "other", m.name, _describe(m)) for m in marks if _is_other(m))),
    ]
    typed = _typed(marks)
    if typed:
        # Words sent as text were neither spoken nor recognized: rows for them would only show
        # the words' arrival as a "final transcript", which the header already says.
        lanes = [lane for lane in lanes if lane.key not in ("speech", "recognizer")]
    always = {"llm", "synthesis", "speaker"} | (set() if typed else {"speech", "recognizer"})
    lanes = [_fit(_within(lane, t_end), s_per_px, t_end) for lane in lanes if lane.key in always or lane.spans or lane.ticks]
    markers = tuple(Tick(m.t, "interrupted", "interrupted", "the turn was interrupted") for m in marks if m.name == "interrupted")
    return Layout(title, _header(timeline, width_px), tuple(lanes), _brackets(marks), markers, t_end, width_px,
                  AXIS_WORDS if typed else AXIS_PRESS)


def _typed(marks: list[_Mark]) -> bool:
    """The turn's words were sent as text (Home Assistant's ``handle``), not heard."""
    return any(m.name == "final_transcript" and m.detail.get("typed") for m in marks)


def _within(lane: Lane, t_end: float) -> Lane:
    """``lane`` with every bar and tick inside the axis, 0 to ``t_end``, whatever the marks said."""
    spans = tuple(replace(s, start=min(max(0.0, s.start), t_end), end=min(max(0.0, s.start, s.end), t_end)) for s in lane.spans)
    ticks = tuple(replace(t, t=min(max(0.0, t.t), t_end)) for t in lane.ticks)
    return replace(lane, spans=spans, ticks=ticks)


def _is_other(m: _Mark) -> bool:
    return m.name not in _KNOWN and not m.name.startswith("heartbeat")


def _describe(m: _Mark) -> str:
    extra = ", ".join(f"{k}={v!r}" for k, v in m.detail.items())
    return f"{m.name} at {m.t:.3f} s" + (f": {extra}" if extra else "")


def _speech(marks: list[_Mark], stop: float) -> tuple[tuple[Span, ...], tuple[Tick, ...]]:
    spans: list[Span] = []
    ticks: list[Tick] = []
    start: float | None = None
    for m in marks:
        if m.name in ("speech_start", "speech_resumed") and start is None:
            start = m.t
        elif m.name == "speech_end" and start is not None:
            spans.append(Span(start, m.t, "speech", f"speech {m.t - start:.2f} s", f"speech {start:.2f}–{m.t:.2f} s ({m.t - start:.2f} s)"))
            start = None
        elif m.name == "speech_end" and spans:
            # Speech came back without a speech_resumed mark: when it resumed is unknown.
            prev = spans[-1].end
            spans.append(Span(prev, m.t, "speech_unsure", "pause, then speech",
                              f"speech paused at {prev:.2f} s, resumed at an unmarked moment, ended at {m.t:.2f} s"))
        elif m.name == "utterance_capped":
            ticks.append(Tick(m.t, "capped", "capped", f"the utterance reached its length cap at {m.t:.2f} s"))
    if start is not None:
        spans.append(Span(start, max(start, stop), "speech", "speech", f"speech from {start:.2f} s, end not marked", open=True))
    pauses = [
        Span(a.end, b.start, "pause", f"pause {b.start - a.end:.2f} s", f"pause {a.end:.2f}–{b.start:.2f} s ({b.start - a.end:.2f} s)")
        for a, b in zip(spans, spans[1:])
        if b.start - a.end > 0
    ]
    return tuple(sorted(spans + pauses, key=lambda s: s.start)), tuple(ticks)


def _recognizer(marks: list[_Mark], stop: float) -> tuple[tuple[Span, ...], tuple[Tick, ...]]:
    spans: list[Span] = []
    ticks: list[Tick] = []
    decode: float | None = None
    from_partial = False
    for m in marks:
        d = m.detail
        if m.name == "partial_transcript":
            text = str(d.get("text", ""))
            audio = f", {d['audio_s']:.2f} s of audio" if isinstance(d.get("audio_s"), (int, float)) else ""
            ticks.append(Tick(m.t, "partial", _tail(text, MAX_TICK_CHARS), f"partial at {m.t:.2f} s{audio}, "
                              f"{d.get('stable_chars', '?')} chars stable: {text!r}"))
        elif m.name == "final_decode_started":
            if decode is not None:
                spans.append(Span(decode, m.t, "decode_abandoned", "decode", f"final decode {decode:.2f}–{m.t:.2f} s, restarted"))
            decode = m.t
        elif m.name == "speech_resumed" and decode is not None:
            spans.append(Span(decode, m.t, "decode_abandoned", "speculative decode",
                              f"final decode started at a pause ({decode:.2f} s), dropped when speech resumed at {m.t:.2f} s"))
            decode = None
        elif m.name == "endpoint":
            ticks.append(Tick(m.t, "endpoint", "endpoint", f"end of the utterance decided at {m.t:.2f} s"))
        elif m.name == "final_from_partial":
            from_partial = True
            ticks.append(Tick(m.t, "final", "partial used as final", _describe(m)))
        elif m.name == "final_transcript":
            text = str(d.get("text", ""))
            if decode is not None:
                how = "dropped, a partial covered the speech" if from_partial else "done"
                spans.append(Span(decode, m.t, "decode", f"final decode {m.t - decode:.2f} s",
                                  f"final decode {decode:.2f}–{m.t:.2f} s ({m.t - decode:.2f} s), {how}: {text!r}"))
                decode = None
            ticks.append(Tick(m.t, "final", "final: " + _tail(text, MAX_TICK_CHARS - 7), f"final transcript at {m.t:.2f} s: {text!r}"))
    if decode is not None:
        spans.append(Span(decode, max(decode, stop), "decode", "final decode", f"final decode from {decode:.2f} s, never finished", open=True))
    return tuple(spans), tuple(ticks)


def _llm(marks: list[_Mark], stop: float) -> tuple[tuple[Span, ...], tuple[Tick, ...]]:
    spans: list[Span] = []
    ticks: list[Tick] = []
    start: float | None = None
    for m in marks:
        if m.name == "llm_start":
            start = m.t
        elif m.name == "llm_end" and start is not None:
            spans.append(Span(start, m.t, "llm", f"LLM {m.t - start:.2f} s", f"LLM generating {start:.2f}–{m.t:.2f} s ({m.t - start:.2f} s)"))
            start = None
        elif m.name == "first_token":
            text = str(m.detail.get("text", ""))
            ticks.append(Tick(m.t, "first_token", f"first token {text.strip()[:12]!r}", f"first token at {m.t:.2f} s: {text!r}"))
    if start is not None:
        spans.append(Span(start, max(start, stop), "llm", "LLM", f"LLM generating from {start:.2f} s, end not marked", open=True))
    return tuple(spans), tuple(ticks)


def _tools(marks: list[_Mark], stop: float) -> tuple[tuple[Span, ...], tuple[Tick, ...]]:
    spans: list[Span] = []
    ticks: list[Tick] = []
    running: dict[str, list[_Mark]] = {}
    for m in marks:
        name = str(m.detail.get("name", "tool"))
        if m.name == "tool_start":
            running.setdefault(name, []).append(m)
        elif m.name == "tool_end" and running.get(name):
            begun = running[name].pop(0)
            ok = m.detail.get("ok", True)
            spans.append(Span(begun.t, m.t, "tool" if ok is not False else "tool_failed", f"{name} {m.t - begun.t:.2f} s",
                              f"{name}({begun.detail.get('args', '')}) {begun.t:.2f}–{m.t:.2f} s"
                              f" ({m.t - begun.t:.2f} s), ok={ok}"))
        elif m.name == "tool_end":
            ticks.append(Tick(m.t, "tool_failed", f"{name} ended", _describe(m)))
        elif m.name == "pretool_line":
            text = str(m.detail.get("text", ""))
            ticks.append(Tick(m.t, "pretool", f"says {text!r}" if text else "pre-tool line", _describe(m)))
    for name, begun_list in running.items():
        spans += [Span(b.t, max(b.t, stop), "tool", name, f"{name}({b.detail.get('args', '')}) from {b.t:.2f} s, never ended", open=True)
                  for b in begun_list]
    return _tracks(spans), tuple(ticks)


def _speculative(marks: list[_Mark], stop: float) -> tuple[tuple[Span, ...], tuple[Tick, ...]]:
    """``heartbeat_*`` work: ``X_start``/``X_end`` pairs become bars, anything else a tick."""
    spans: list[Span] = []
    ticks: list[Tick] = []
    running: dict[str, list[_Mark]] = {}
    for m in marks:
        if not m.name.startswith("heartbeat"):
            continue
        base, _, edge = m.name.rpartition("_")
        base = base.removeprefix("heartbeat_")
        if edge == "start":
            running.setdefault(base, []).append(m)
        elif edge == "end" and running.get(base):
            begun = running[base].pop(0)
            spans.append(Span(begun.t, m.t, "speculative", base, f"{base} {begun.t:.2f}–{m.t:.2f} s; {_describe(m)}"))
        else:
            ticks.append(Tick(m.t, "speculative", m.name, _describe(m)))
    for base, begun_list in running.items():
        spans += [Span(b.t, max(b.t, stop), "speculative", base, f"{base} from {b.t:.2f} s, never ended", open=True) for b in begun_list]
    return _tracks(spans), tuple(ticks)


def _synthesis(marks: list[_Mark], stop: float) -> tuple[tuple[Span, ...], tuple[Tick, ...]]:
    spans: list[Span] = []
    started: dict[Any, _Mark] = {}
    for i, m in enumerate(marks):
        if m.name == "tts_start":
            started[m.detail.get("unit", f"?{i}")] = m
        elif m.name == "tts_end" and m.detail.get("unit") in started:
            unit = m.detail["unit"]
            begun = started.pop(unit)
            audio = m.detail.get("audio_s")
            made = f"{audio:.2f} s of audio" if isinstance(audio, (int, float)) else "audio"
            spans.append(Span(begun.t, m.t, "tts", f"#{unit}", f"unit {unit}: {made} in {m.t - begun.t:.2f} s "
                              f"({begun.t:.2f}–{m.t:.2f} s): {begun.detail.get('text', '')!r}"))
    for unit, begun in started.items():
        spans.append(Span(begun.t, max(begun.t, stop), "tts", f"#{unit}",
                          f"unit {unit}: synthesis from {begun.t:.2f} s, never finished: {begun.detail.get('text', '')!r}", open=True))
    return _tracks(spans), ()


def _speaker(marks: list[_Mark], stop: float) -> list[Span]:
    """Each unit's audio as heard: from its first sample for as long as the audio synthesized for it."""
    texts = {m.detail.get("unit"): str(m.detail.get("text", "")) for m in marks if m.name == "tts_start"}
    kinds = _unit_kinds(marks)
    lengths = {m.detail.get("unit"): m.detail.get("audio_s") for m in marks if m.name == "tts_end"}
    drained = next((m.t for m in reversed(marks) if m.name == "last_audio_out"), None)
    interrupted = any(m.name == "interrupted" for m in marks)
    heard = [m for m in marks if m.name == "unit_audio_out"]
    spans: list[Span] = []
    for m in heard:
        unit = m.detail.get("unit")
        text = texts.get(unit, "")
        length = lengths.get(unit)
        if isinstance(length, (int, float)):
            end, open_ = m.t + length, False
        else:  # still being synthesized when the turn stopped
            end, open_ = max(m.t, drained if drained is not None and drained > m.t else stop), True
        cut = interrupted and end > stop
        if cut:
            end = max(m.t, stop)
        note = " (cut off)" if cut else ""
        kind = f", {kinds[unit]}" if unit in kinds else ""
        spans.append(Span(m.t, end, "audio_filler" if unit in kinds else "audio", text or f"unit {unit}",
                          f"unit {unit}{kind} heard {m.t:.2f}–{end:.2f} s ({end - m.t:.2f} s){note}: {text!r}", open=open_ or cut))
    if not heard:  # timelines from before per-unit audio marks
        first = next((m.t for m in marks if m.name == "first_audio_out"), None)
        if first is not None:
            end = drained if drained is not None and drained >= first else max(first, stop)
            spans.append(Span(first, end, "audio", "audio", f"audio heard {first:.2f}–{end:.2f} s"))
    spans.sort(key=lambda s: s.start)

    # A pause still open when the turn stopped ended, at the latest, when the next unit was heard.
    pauses = [
        replace(p, end=min([p.end, *(s.start for s in spans if s.start >= p.start)])) if p.open else p
        for p in _pairs(marks, "pause_start", "pause_end", stop)
    ]
    for a, b in zip(spans, spans[1:]):
        gap = b.start - a.end
        if gap > PAUSE_MIN_S and not any(p.start < b.start and p.end > a.end for p in pauses):
            pauses.append(Span(a.end, b.start, "pause", f"silence {gap:.2f} s", f"nothing heard {a.end:.2f}–{b.start:.2f} s ({gap:.2f} s)"))
    return sorted(spans + pauses, key=lambda s: s.start)


def _unit_kinds(marks: list[_Mark]) -> dict[Any, str]:
    """Units that are not the answer itself: a line said before a tool runs, or a filler."""
    return {
        m.detail.get("unit"): str(m.detail["kind"])
        for m in marks
        if m.name == "tts_start" and m.detail.get("kind") in ("pretool", "filler")
    }


def _pairs(marks: list[_Mark], start_name: str, end_name: str, stop: float) -> list[Span]:
    """Explicit pauses between spoken units."""
    spans: list[Span] = []
    start: float | None = None
    for m in marks:
        if m.name == start_name:
            start = m.t
        elif m.name == end_name and start is not None:
            spans.append(Span(start, m.t, "pause", f"pause {m.t - start:.2f} s", f"pause {start:.2f}–{m.t:.2f} s ({m.t - start:.2f} s)"))
            start = None
    if start is not None:
        spans.append(Span(start, max(start, stop), "pause", "pause", f"pause from {start:.2f} s", open=True))
    return spans


def _tracks(spans: list[Span]) -> tuple[Span, ...]:
    """Put overlapping bars (parallel tools) on separate tracks, first free track first."""
    ends: list[float] = []
    placed: list[Span] = []
    for s in sorted(spans, key=lambda s: s.start):
        track = next((i for i, e in enumerate(ends) if e <= s.start), len(ends))
        if track == len(ends):
            ends.append(s.end)
        ends[track] = s.end
        placed.append(replace(s, track=track))
    return tuple(placed)


def _brackets(marks: list[_Mark]) -> tuple[Bracket, ...]:
    """End of speech to the final transcript, the first token, the first audio heard and the answer's first audio."""
    final = next((m.t for m in marks if m.name == "final_transcript"), math.inf)
    # The last speech_end before the transcript: earlier ones were pauses inside the utterance.
    ends = [m.t for m in marks if m.name == "speech_end" and m.t <= final]
    if not ends:
        return ()
    anchor = ends[-1]
    brackets: list[Bracket] = []
    moments = [(what, next((m.t for m in marks if m.name == name), None)) for name, what in (
        ("final_transcript", "final transcript"), ("first_token", "first token"), ("first_audio_out", "first audio"))]
    # When a pre-tool line or a filler was heard first, the answer's own first audio matters too.
    fillers = _unit_kinds(marks)
    answer = next((m.t for m in marks if m.name == "unit_audio_out" and m.detail.get("unit") not in fillers), None)
    if fillers and answer is not None:
        moments.append(("first answer audio", answer))
    for what, t in moments:
        if t is not None and t >= anchor:
            brackets.append(Bracket(anchor, t, f"end of speech → {what}: {t - anchor:.2f} s", len(brackets)))
    return tuple(brackets)


def _fit(lane: Lane, s_per_px: float, t_end: float) -> Lane:
    """Cut bar labels to their bars and give tick labels rows where they do not overlap."""
    spans = tuple(replace(s, label=_fit_bar(s.label, (s.seconds / s_per_px - 6) / CHAR_PX)) for s in lane.spans)
    # Latest tick first, so earlier ticks climb to higher rows: a flag line then never
    # crosses the label of a later tick, which starts to its right on a lower row.
    row_starts: list[float] = []
    ticks: list[Tick] = []
    for tick in sorted(lane.ticks, key=lambda t: t.t, reverse=True):
        label = _cut(tick.label, MAX_TICK_CHARS)
        if not label:
            ticks.append(tick)
            continue
        width_s = (len(label) * CHAR_PX + 10) * s_per_px
        left = tick.t + width_s > t_end and tick.t - width_s >= 0
        lo, hi = (tick.t - width_s, tick.t) if left else (tick.t, tick.t + width_s)
        row = next((i for i, start in enumerate(row_starts) if start >= hi), len(row_starts))
        if row >= MAX_LABEL_ROWS:  # crowded: share the row whose labels start latest
            row = max(range(len(row_starts)), key=row_starts.__getitem__)
            log.debug("tick label %r overlaps another", label)
        if row == len(row_starts):
            row_starts.append(math.inf)
        row_starts[row] = min(row_starts[row], lo)
        ticks.append(replace(tick, label=label, row=row, left=left))
    return replace(lane, spans=spans, ticks=tuple(sorted(ticks, key=lambda t: t.t)))


def _fit_bar(label: str, chars: float) -> str:
    """A bar's label, or on a short bar just its seconds: "0.40 s" says more than "pau…"."""
    if len(label) <= chars:
        return label
    seconds = re.search(r"\d+\.\d+ s$", label)
    if seconds and len(seconds.group()) <= chars:
        return seconds.group()
    return _cut(label, chars)


def _cut(text: str, chars: float) -> str:
    """``text`` within ``chars`` characters, with an ellipsis when cut; empty when too little fits to read."""
    n = int(chars)
    if len(text) <= n:
        return text
    if n < 4:
        return ""
    head = text[: n - 1]
    if " " in head[n // 2 :]:  # end on a whole word when that costs little
        head = head[: head.rindex(" ")]
    return head.rstrip(" ,;:") + "…"


def _tail(text: str, chars: int) -> str:
    """The end of ``text``: for growing partials the newest words are the news."""
    if len(text) <= chars:
        return text
    tail = text[-(chars - 1):]
    if " " in tail[: len(tail) // 2]:
        tail = tail[tail.index(" ") + 1 :]
    return "…" + tail


def _header(timeline: dict[str, Any], width_px: int) -> tuple[str, ...]:
    chars = (width_px - 24) / (CHAR_PX * FONT_PX / LABEL_PX)
    lines = []
    transcript, outcome = timeline.get("transcript"), timeline.get("outcome")
    # Words given as text (Home Assistant's handle) were sent, not heard in the kitchen.
    typed = any(m.get("name") == "final_transcript" and (m.get("detail") or {}).get("typed") for m in timeline.get("marks", ()))
    said = "sent as text" if typed else "heard"
    parts = []
    if transcript is not None:
        parts.append(f"{said}: {str(transcript)!r}" if str(transcript).strip() else f"{said}: nothing")
    if outcome:
        parts.append(f"outcome: {outcome}")
    if parts:
        lines.append(_cut(parts[0], chars - sum(len(p) + 6 for p in parts[1:])) + "".join("      " + p for p in parts[1:]))
    if timeline.get("reply"):
        lines.append(_cut(f"replied: {str(timeline['reply'])!r}", chars))
    return tuple(lines)


