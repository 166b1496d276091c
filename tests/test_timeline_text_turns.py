"""A text turn's timeline card: the record's turn number, no speech rows, an axis from the words."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest

from agent.assistant import Assistant
from agent.record import RecordEntry
from agent.results import Outcome, TurnResult
from agent.text_turns import TextTurns
from agent.timeline import Timeline
from firmware_py.web.timeline_layout import build_layout
from firmware_py.web.timeline_view import LEFT_PX, RIGHT_PX, WIDTH_PX, _Rect, _scene, render_svg
from tests.fakes import ToneSynthesizer
from tests.test_turn import make_deps
from tests.test_web_page import Rig, open_rig

SVG = "{http://www.w3.org/2000/svg}"


def mark(name: str, t: float, /, **detail: Any) -> dict[str, Any]:
    return {"name": name, "t": t, "detail": detail}


TYPED: dict[str, Any] = {
    "marks": [
        mark("final_transcript", 0.0, text="what can I cook with leeks", typed=True),
        mark("llm_start", 0.01),
        mark("first_token", 0.4),
        mark("llm_end", 2.9),
        mark("tts_start", 2.9, unit=0, text="Leek and potato soup.", kind="answer"),
        mark("tts_end", 2.9, unit=0, audio_s=0.0),
        mark("unit_audio_out", 2.9, unit=0),
    ],
    "transcript": "what can I cook with leeks", "reply": "Leek and potato soup.", "outcome": "answered",
}


def _texts(svg: str) -> list[str]:
    return [node.text or "" for node in ElementTree.fromstring(svg).iter(f"{SVG}text")]


def test_a_text_turn_has_no_speech_or_recognizer_rows_and_no_button_press_axis() -> None:
    layout = build_layout(TYPED, "turn 13")
    assert [lane.key for lane in layout.lanes] == ["llm", "synthesis", "speaker"]
    texts = _texts(render_svg(TYPED, "turn 13"))
    assert "user speech" not in texts and "recognizer" not in texts
    assert not any("button press" in t for t in texts)
    assert "seconds since the words arrived" in texts


def test_a_spoken_turn_keeps_its_rows_and_its_button_press_axis() -> None:
    spoken = {"marks": [mark("speech_start", 0.2), mark("speech_end", 1.0), mark("final_transcript", 1.2, text="hi"),
                        mark("llm_start", 1.3), mark("llm_end", 1.6)]}
    assert [lane.key for lane in build_layout(spoken).lanes][:3] == ["speech", "recognizer", "llm"]
    assert "seconds since the button press" in _texts(render_svg(spoken, "turn 1"))


@pytest.mark.parametrize("marks", [
    TYPED["marks"],
    [*TYPED["marks"][:2], mark("first_token", 0.4)],  # the talker never marked its end
    [mark("llm_start", -0.3), mark("final_transcript", 0.0, text="x", typed=True), mark("llm_end", 0.8)],
    [mark("final_transcript", 0.0, text="x", typed=True), mark("llm_start", 0.1), mark("interrupted", 0.5),
     mark("llm_end", 3.0)],
])
def test_every_bar_lies_inside_the_axis(marks: list[dict[str, Any]]) -> None:
    layout = build_layout({"marks": marks}, "t")
    for lane in layout.lanes:
        for span in lane.spans:
            assert 0.0 <= span.start <= span.end <= layout.t_end, (lane.key, span)
    _, shapes = _scene(layout)
    for rect in (s for s in shapes if isinstance(s, _Rect) and s.fill != "#ffffff" and s.fill != "#f6f6f6"):
        assert LEFT_PX - 0.01 <= rect.x and rect.x + rect.w <= WIDTH_PX - RIGHT_PX + 0.01, rect


async def test_a_text_turns_result_carries_its_number_in_the_record() -> None:
    assistant = Assistant(make_deps(reply="Leek soup.", synthesizer=ToneSynthesizer(seconds_per_char=0.001)))
    for _ in range(12):  # turns before it: spoken ones, page changes
        number = assistant.record.begin_turn()
        assistant.record.append([RecordEntry(number, "turn", "", "page")])
    [_ async for _ in TextTurns(assistant).answer_text("what can I cook with leeks")]
    result = assistant.results[-1]
    assert result.record_turn == 13
    assert {e.turn for e in assistant.record.entries() if e.text == "what can I cook with leeks"} == {13}


async def test_the_card_is_titled_with_the_records_number(tmp_path: Path) -> None:
    rig: Rig
    rig, _app = await open_rig(tmp_path)
    try:
        timeline = Timeline(origin=0.0)
        timeline.mark("final_transcript", at=0.0, text="what can I cook with leeks", typed=True)
        rig.assistant.results.append(TurnResult(Outcome.ANSWERED, timeline, transcript="what can I cook with leeks",
                                                reply="Leek soup.", record_turn=13))
        (turn,) = (await rig.client.get("/api/turns")).json()
        assert turn["turn"] == 13
        svg = (await rig.client.get(f"/api/turns/{turn['n']}/timeline.svg")).text
        assert "turn 13" in _texts(svg)
    finally:
        await rig.close()
