"""The bench's breakdown of the time to first audio into steps that add up to it."""

from __future__ import annotations

import pytest

from agent.timeline import Timeline
from bench.loop.first_audio_steps import STEPS, first_audio_steps, summarize, table, turn_kind
from bench.loop.metrics import turn_figures


def _timeline(marks: list[tuple[str, float]]) -> Timeline:
    tl = Timeline(origin=0.0)
    for name, t in marks:
        tl.mark(name, t)
    return tl


def test_the_steps_add_up_to_the_first_audio_in_order() -> None:
    tl = _timeline([
        ("speech_end", 2.0), ("endpoint", 2.3), ("final_transcript", 2.8), ("llm_start", 2.8), ("llm_end", 3.0),
        ("tts_start", 3.4), ("first_audio_out", 3.6),
    ])
    steps = first_audio_steps(tl)
    assert steps == pytest.approx({"listening": 0.3, "final decode": 0.5, "decision": 0.2, "wait and tool": 0.4, "voice": 0.2})
    assert sum(steps.values()) == pytest.approx(1.6)


def test_a_decision_taken_from_the_thinker_costs_nothing_after_the_final() -> None:
    # The Thinker's decision was taken right after the final; a tts_start of an earlier turn is ignored.
    tl = _timeline([
        ("tts_start", 0.5), ("speech_end", 2.0), ("endpoint", 2.25), ("final_transcript", 2.7),
        ("heartbeat_decision_reused", 2.7), ("tts_start", 2.75), ("first_audio_out", 2.95),
    ])
    steps = first_audio_steps(tl)
    assert steps["decision"] == 0.0 and steps["wait and tool"] == pytest.approx(0.05)
    assert sum(steps.values()) == pytest.approx(0.95)


def test_a_held_press_is_timed_from_its_release() -> None:
    # The voice detector put the end of speech before the thumb came up; the user's end is the release.
    tl = _timeline([
        ("speech_end", 1.9), ("released", 2.0), ("endpoint", 2.03), ("final_transcript", 2.15),
        ("heartbeat_decision_reused", 2.15), ("tts_start", 2.2), ("first_audio_out", 2.4),
    ])
    steps = first_audio_steps(tl)
    assert steps == pytest.approx({"listening": 0.03, "final decode": 0.12, "decision": 0.0, "wait and tool": 0.05, "voice": 0.2})
    figures = turn_figures(tl)
    assert figures["release_first_audio_s"] == pytest.approx(0.4)
    assert figures["release_final_transcript_s"] == pytest.approx(0.15)
    assert figures["first_audio_s"] == pytest.approx(0.5)  # from the detector's end, as for a tap


def test_a_tapped_turn_has_no_release_figures() -> None:
    tl = _timeline([("speech_end", 2.0), ("endpoint", 2.3), ("final_transcript", 2.8), ("tts_start", 3.0),
                    ("first_audio_out", 3.2)])
    figures = turn_figures(tl)
    assert figures["release_first_audio_s"] is None and figures["release_final_transcript_s"] is None
    assert first_audio_steps(tl)["listening"] == pytest.approx(0.3)


def test_a_turn_without_first_audio_has_no_steps() -> None:
    assert first_audio_steps(_timeline([("speech_end", 1.0), ("endpoint", 1.2)])) is None


def test_turn_kinds_and_means_per_kind() -> None:
    assert turn_kind([], {"timer_start"}) == "no tool"
    assert turn_kind(["timer_start"], {"timer_start"}) == "act"
    assert turn_kind(["weather"], {"timer_start"}) == "look-up"
    rows = [
        {"turn_kind": "act", "first_audio_steps": dict.fromkeys(STEPS, 0.1)},
        {"turn_kind": "act", "first_audio_steps": dict.fromkeys(STEPS, 0.3)},
        {"turn_kind": "act", "first_audio_steps": dict.fromkeys(STEPS, 0.2)},
        {"turn_kind": "look-up", "first_audio_steps": None},
    ]
    summary = summarize(rows)
    assert list(summary) == ["act"] and summary["act"]["n"] == 3 and summary["act"]["voice"] == 0.2
    assert "| on | act (3) | 0.20 | 0.20 | 0.20 | 0.20 | 0.20 | 1.00 |" in table({"on": summary})


def test_the_reuse_check_compares_taken_decisions_with_fresh_ones_on_the_same_words() -> None:
    from bench.loop.reuse_check import compare

    def row(variant, scenario, transcript, reused, calls):
        return {"variant": variant, "scenario": scenario, "turn": 0, "round": 0, "transcript": transcript,
                "decision_reused": reused, "tool_calls": [{"name": n, "args": a} for n, a in calls]}

    ten = [("timer_start", {"duration_s": 600})]
    report = {"scenarios": [
        row("baseline", "a", "Set a timer for 10 minutes.", True, ten),
        row("no-finish-newest", "a", "set a timer for 10 minutes", False, ten),
        row("baseline", "b", "Add milk.", True, [("shopping_add", {"item": "milk"})]),
        row("no-finish-newest", "b", "Add milk.", False, [("shopping_add", {"item": "oat milk"})]),
        row("baseline", "c", "Add eggs.", True, []),
        row("no-finish-newest", "c", "Add legs.", False, []),  # other words: not compared
    ]}
    result = compare(report)
    assert result["decision_taken"] == 3 and result["compared"] == 2 and result["same_call"] == 1
    assert [d["transcript"] for d in result["different"]] == ["Add milk."]


def test_a_first_unit_made_ahead_is_told_from_one_made_when_asked() -> None:
    from bench.loop.metrics import heartbeat_figures

    def turn(ahead: list[str], first: str) -> bool:
        tl = Timeline()
        for text in ahead:
            tl.mark("voice_ahead", tool="timer_start", text=text)
        tl.mark("tts_start", unit=0, text=first, kind="answer")
        return heartbeat_figures(tl, set())["voice_ready"]

    assert turn(["Pasta timer set for 11 minutes."], "Pasta timer set for 11 minutes.")
    assert not turn(["Added milk to the shopping list."], "Milk is already on the shopping list.")
    assert not turn([], "Noted.")
