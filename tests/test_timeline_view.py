"""The turn chart: marks to lanes, and the PNG and HTML drawn from them."""

from __future__ import annotations

import json
import re
import struct
import subprocess
import sys
from xml.etree import ElementTree
from pathlib import Path
from typing import Any

import pytest

from firmware_py.web import timeline_layout, timeline_view as tv
from firmware_py.web.timeline_view import CHAR_PX, LEFT_PX, RIGHT_PX, build_layout, render_html, render_png


def mark(name: str, t: float, /, **detail: Any) -> dict[str, Any]:
    return {"name": name, "t": t, "detail": detail}


UNIT_TEXTS = ["One moment.", "Your timer is set for ten minutes.", "Anything else?"]

# A turn with a pause in the speech (the speculative final decode is dropped when speech
# resumes), a tool call, an explicit pause and a late unit on the speaker, speculative
# work and a mark nobody draws yet.
TURN: dict[str, Any] = {
    "marks": [
        mark("speech_start", 0.30),
        mark("partial_transcript", 0.90, text="set a timer", stable_chars=0, audio_s=0.6),
        mark("speech_end", 1.20),
        mark("final_decode_started", 1.25),
        mark("speech_resumed", 1.60),
        mark("partial_transcript", 1.90, text="set a timer for ten", stable_chars=11, audio_s=1.5),
        mark("speech_end", 2.40),
        mark("final_decode_started", 2.45),
        mark("endpoint", 2.70),
        mark("final_transcript", 2.90, text="set a timer for ten minutes"),
        mark("llm_start", 2.91),
        mark("heartbeat_draft_start", 3.00),
        mark("first_token", 3.10, text="One"),
        mark("pretool_line", 3.20, text=UNIT_TEXTS[0]),
        mark("tts_start", 3.21, unit=0, text=UNIT_TEXTS[0], kind="pretool"),
        mark("tool_start", 3.30, name="timer", args={"minutes": 10}),
        mark("tts_end", 3.40, unit=0, audio_s=0.8),
        mark("heartbeat_draft_end", 3.40),
        mark("unit_audio_out", 3.50, unit=0),
        mark("first_audio_out", 3.50),
        mark("tool_end", 3.90, name="timer", ok=True),
        mark("tts_start", 4.00, unit=1, text=UNIT_TEXTS[1]),
        mark("llm_end", 4.20),
        mark("pause_start", 4.30),
        mark("tts_start", 4.50, unit=2, text=UNIT_TEXTS[2]),
        mark("tts_end", 4.50, unit=1, audio_s=2.0),
        mark("pause_end", 4.60),
        mark("unit_audio_out", 4.60, unit=1),
        mark("tts_end", 4.80, unit=2, audio_s=1.0),
        mark("mystery_mark", 5.00, x=1),
        mark("unit_audio_out", 6.90, unit=2),
        mark("last_audio_out", 7.90),
    ],
    "summary": {},
    "transcript": "set a timer for ten minutes",
    "reply": " ".join(UNIT_TEXTS),
    "outcome": "answered",
}


def interrupted_turn() -> dict[str, Any]:
    """TURN cut off by the button at 5.5 s: unit 1 is playing, unit 2 still being synthesized."""
    keep = [m for m in TURN["marks"] if m["t"] < 4.5 and m["name"] != "llm_end"]
    keep += [mark("tts_start", 4.50, unit=2, text=UNIT_TEXTS[2]), mark("tts_end", 4.50, unit=1, audio_s=2.0),
             mark("unit_audio_out", 4.60, unit=1), mark("interrupted", 5.50)]
    return {"marks": keep, "outcome": "interrupted"}


NO_SPEECH: dict[str, Any] = {
    "marks": [
        mark("endpoint", 8.00),
        mark("tts_start", 8.05, unit=0, text="I didn't hear anything."),
        mark("tts_end", 8.30, unit=0, audio_s=1.5),
        mark("unit_audio_out", 8.40, unit=0),
        mark("first_audio_out", 8.40),
        mark("last_audio_out", 9.90),
    ],
    "transcript": "",
    "outcome": "no_speech",
}


def spans(layout: tv.Layout, lane: str, kind: str | None = None) -> list[tuple[float, float]]:
    found = layout.lane(lane)
    assert found is not None, f"no {lane} lane"
    return [(round(s.start, 3), round(s.end, 3)) for s in found.spans if kind is None or s.kind == kind]


def test_lanes_run_top_to_bottom_and_optional_lanes_appear_only_when_used():
    assert [lane.key for lane in build_layout(TURN).lanes] == [
        "speech", "recognizer", "llm", "speculative", "tools", "synthesis", "speaker", "other"]  # fmt: skip
    assert [lane.key for lane in build_layout(NO_SPEECH).lanes] == ["speech", "recognizer", "llm", "synthesis", "speaker"]


def test_speech_is_drawn_with_its_pause():
    layout = build_layout(TURN)
    assert spans(layout, "speech", "speech") == [(0.3, 1.2), (1.6, 2.4)]
    assert spans(layout, "speech", "pause") == [(1.2, 1.6)]


def test_speech_that_resumed_without_a_mark_is_drawn_as_unsure():
    timeline = {"marks": [mark("speech_start", 0.2), mark("speech_end", 1.0), mark("speech_end", 2.0)]}
    layout = build_layout(timeline)
    assert spans(layout, "speech", "speech") == [(0.2, 1.0)]
    assert spans(layout, "speech", "speech_unsure") == [(1.0, 2.0)]


def test_recognizer_shows_partials_the_dropped_and_the_final_decode_and_the_endpoint():
    layout = build_layout(TURN)
    assert spans(layout, "recognizer", "decode_abandoned") == [(1.25, 1.6)]
    assert spans(layout, "recognizer", "decode") == [(2.45, 2.9)]
    ticks = layout.lane("recognizer").ticks
    partials = [t for t in ticks if t.kind == "partial"]
    assert [(t.t, t.label) for t in partials] == [(0.9, "set a timer"), (1.9, "set a timer for ten")]
    assert [t.t for t in ticks if t.kind == "endpoint"] == [2.7]
    assert any(t.kind == "final" and "ten minutes" in t.detail for t in ticks)


def test_llm_tools_and_speculative_work():
    layout = build_layout(TURN)
    assert spans(layout, "llm") == [(2.91, 4.2)]
    assert [t.t for t in layout.lane("llm").ticks if t.kind == "first_token"] == [3.1]
    tools = layout.lane("tools")
    assert [(s.start, s.end, s.kind, s.label.split()[0]) for s in tools.spans] == [(3.3, 3.9, "tool", "timer")]
    assert [t.kind for t in tools.ticks] == ["pretool"]
    assert spans(layout, "speculative") == [(3.0, 3.4)]
    assert layout.lane("speculative").spans[0].detail.startswith("draft ")


def test_a_units_audio_lasts_as_long_as_the_audio_synthesized_for_it():
    layout = build_layout(TURN)
    assert spans(layout, "synthesis") == [(3.21, 3.4), (4.0, 4.5), (4.5, 4.8)]
    assert spans(layout, "speaker", "audio_filler") == [(3.5, 4.3)]  # the pre-tool line
    assert spans(layout, "speaker", "audio") == [(4.6, 6.6), (6.9, 7.9)]
    audio = [s for s in layout.lane("speaker").spans if s.kind.startswith("audio")]
    assert [s.detail.split(": ", 1)[1] for s in audio] == [repr(t) for t in UNIT_TEXTS]


def test_pauses_between_units_come_from_pause_marks_or_from_the_silence_between_them():
    layout = build_layout(TURN)
    # 4.3-4.6 is marked; 6.6-6.9 is silence nobody marked (unit 2 came late). Neither twice.
    assert spans(layout, "speaker", "pause") == [(4.3, 4.6), (6.6, 6.9)]


def test_back_to_back_units_have_no_pause_between_them():
    timeline = {"marks": [
        mark("tts_start", 0.1, unit=0, text="a"), mark("tts_end", 0.2, unit=0, audio_s=1.0),
        mark("tts_start", 0.2, unit=1, text="b"), mark("tts_end", 0.3, unit=1, audio_s=1.0),
        mark("unit_audio_out", 0.5, unit=0), mark("unit_audio_out", 1.5001, unit=1)]}  # fmt: skip
    assert spans(build_layout(timeline), "speaker", "pause") == []


def test_unknown_marks_land_on_other_and_heartbeats_do_not():
    other = build_layout(TURN).lane("other")
    assert [(t.t, t.label) for t in other.ticks] == [(5.0, "mystery_mark")]
    assert "x=1" in other.ticks[0].detail


def test_key_intervals_are_measured_from_the_last_end_of_speech():
    brackets = build_layout(TURN).brackets
    assert [(b.start, b.end) for b in brackets] == [(2.4, 2.9), (2.4, 3.1), (2.4, 3.5), (2.4, 4.6)]
    assert [round(b.seconds, 2) for b in brackets] == [0.5, 0.7, 1.1, 2.2]
    assert "first audio: 1.10 s" in brackets[2].label
    assert "first answer audio: 2.20 s" in brackets[3].label  # the pre-tool line came first
    assert [b.row for b in brackets] == [0, 1, 2, 3]


def test_an_interrupted_turn_stops_everything_at_the_interruption():
    layout = build_layout(interrupted_turn())
    assert [(m.t, m.kind) for m in layout.markers] == [(5.5, "interrupted")]
    (llm,) = layout.lane("llm").spans
    assert (llm.start, llm.end, llm.open) == (2.91, 5.5, True)
    audio = [s for s in layout.lane("speaker").spans if s.kind.startswith("audio")]
    assert [(s.start, s.end, s.open) for s in audio] == [(3.5, 4.3, False), (4.6, 5.5, True)]
    assert "cut off" in audio[1].detail
    unfinished = [s for s in layout.lane("synthesis").spans if s.open]
    assert [(s.start, s.end) for s in unfinished] == [(4.5, 5.5)]
    # pause_end was never marked; the pause still ended when unit 1 was heard.
    assert spans(layout, "speaker", "pause") == [(4.3, 4.6)]


def test_a_turn_without_speech_still_shows_what_was_said():
    layout = build_layout(NO_SPEECH)
    assert layout.lane("speech").spans == ()
    assert layout.brackets == ()
    assert spans(layout, "speaker", "audio") == [(8.4, 9.9)]
    assert [t.kind for t in layout.lane("recognizer").ticks] == ["endpoint"]


def test_a_timeline_without_per_unit_audio_marks_shows_audio_from_first_to_last_sample():
    timeline = {"marks": [mark("first_audio_out", 1.0), mark("last_audio_out", 3.0)]}
    assert spans(build_layout(timeline), "speaker", "audio") == [(1.0, 3.0)]


def test_a_bar_too_short_for_its_label_keeps_its_seconds():
    assert timeline_layout._fit_bar("final decode 0.45 s", 8) == "0.45 s"
    assert timeline_layout._fit_bar("final decode 0.45 s", 30) == "final decode 0.45 s"
    assert timeline_layout._fit_bar("speculative decode", 8) == "specula…"
    assert timeline_layout._fit_bar("speculative decode", 3) == ""


def test_labels_fit_their_bars_and_tick_labels_do_not_overlap():
    for timeline in (TURN, interrupted_turn(), NO_SPEECH, json.loads(DEMO.read_text()) if DEMO.exists() else TURN):
        layout = build_layout(timeline)
        s_per_px = layout.t_end / (layout.width_px - LEFT_PX - RIGHT_PX)
        for lane in layout.lanes:
            for s in lane.spans:
                assert len(s.label) * CHAR_PX <= s.seconds / s_per_px, (lane.key, s.label)
            extents: dict[int, list[tuple[float, float]]] = {}
            for t in lane.ticks:
                width = len(t.label) * CHAR_PX * s_per_px
                extents.setdefault(t.row, []).append((t.t - width, t.t) if t.left else (t.t, t.t + width))
            for row in extents.values():
                row.sort()
                assert all(a[1] <= b[0] for a, b in zip(row, row[1:])), (lane.key, row)


DEMO = Path(__file__).resolve().parent.parent / "out" / "demo-timeline.json"


def test_html_is_one_offline_file_with_an_svg_and_the_unit_texts(tmp_path):
    path = tmp_path / "turn.html"
    render_html(TURN, path, "a timer")
    page = path.read_text(encoding="utf-8")
    assert page.count("<svg") == 1 and "</svg>" in page and "</html>" in page
    assert re.findall(r"https?://[^\s\"'<>]*", page) == ["http://www.w3.org/2000/svg"]
    assert "<script" not in page and "<link" not in page and "url(" not in page
    for text in UNIT_TEXTS:
        assert text in page
    assert "<title>unit 1 heard 4.60–6.60 s" in page  # hover detail on the bar
    svg = ElementTree.fromstring(page[page.index("<svg") : page.index("</svg>") + len("</svg>")])
    rects = svg.findall("{http://www.w3.org/2000/svg}rect")
    assert sum(1 for r in rects if r.find("{http://www.w3.org/2000/svg}title") is not None) >= 12


def test_html_escapes_what_the_user_said(tmp_path):
    timeline = {"marks": [mark("speech_start", 0.1), mark("speech_end", 0.5),
                          mark("final_transcript", 0.7, text="<b>salt & pepper</b>")]}  # fmt: skip
    path = tmp_path / "turn.html"
    render_html(timeline, path, "escape")
    page = path.read_text(encoding="utf-8")
    assert "<b>salt" not in page and "&lt;b&gt;salt &amp; pepper" in page


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    assert data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


@pytest.mark.parametrize("timeline", [TURN, interrupted_turn(), NO_SPEECH], ids=["answered", "interrupted", "no-speech"])
def test_png_is_a_png_of_the_scene_size(tmp_path, timeline):
    path = tmp_path / "turn.png"
    render_png(timeline, path, "a turn")
    height, _ = tv._scene(build_layout(timeline, "a turn"))
    assert png_size(path) == (1600, height)
    assert 300 <= height <= 800


def test_the_layout_and_the_html_need_no_matplotlib():
    code = "import sys, firmware_py.web.timeline_view; sys.exit('matplotlib' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).resolve().parent.parent).returncode == 0


def test_command_line_draws_a_turn_of_a_benchmark_report(tmp_path):
    report = tmp_path / "bench.json"
    report.write_text(json.dumps({"turns": [{"id": "en/a", "round": 0, **NO_SPEECH}, {"id": "en/b", "round": 0, **TURN}]}))
    png, page = tmp_path / "b.png", tmp_path / "b.html"
    tv.main([str(report), "--turn", "1", "--png", str(png), "--html", str(page)])
    assert png_size(png)[0] == 1600
    assert "en/b" in page.read_text(encoding="utf-8") and UNIT_TEXTS[1] in page.read_text(encoding="utf-8")


def test_the_header_says_whether_the_words_were_heard_or_sent_as_text():
    spoken = {**TURN, "transcript": "set a timer for ten minutes"}
    assert build_layout(spoken).header[0].startswith("heard: 'set a timer for ten minutes'")
    typed = {"marks": [mark("final_transcript", 0.0, text="what time is it", typed=True)], "transcript": "what time is it"}
    assert build_layout(typed).header[0].startswith("sent as text: 'what time is it'")
