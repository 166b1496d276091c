"""What a kitchen run is scored by: acts on arguments nobody said (``wrong_acts``), latency from the
real end of speech, and the figures per condition, on scripted turns (no models, no real time)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from agent.results import Outcome, ToolCallRecord, TurnResult
from agent.timeline import Timeline
from bench.kitchen.loop import condition_figures, from_real_end, render_kitchen, snr_series
from bench.loop.runner import BenchSettings, SuiteRun, _score_turn, parse_kitchen
from bench.suites.schema import ExpectedCall
from bench.suites.scoring import ToolCall, incomplete_acts, wrong_acts
from firmware_py.config import HearthConfig

TIMER_10 = ExpectedCall(tool="timer_start", args={"duration_s": 600})
MILK = ExpectedCall(tool="shopping_add", args={"item": "milk"})


def test_an_act_on_the_right_arguments_is_not_wrong():
    assert wrong_acts([TIMER_10], [ToolCall("timer_start", {"duration_s": "ten minutes"})]) == []
    assert wrong_acts([TIMER_10, MILK], [ToolCall("shopping_add", {"item": "Milk"}), ToolCall("timer_start", {"duration_s": 600})]) == []
    assert wrong_acts([], []) == [] and wrong_acts([TIMER_10], []) == []  # nothing done is not a wrong act


def test_the_right_tool_on_a_misheard_argument_is_a_wrong_act():
    assert wrong_acts([TIMER_10], [ToolCall("timer_start", {"duration_s": 300})]) == ["timer_start(duration_s=300)"]
    assert wrong_acts([MILK], [ToolCall("shopping_add", {"item": "silk"})]) == ["shopping_add(item='silk')"]


def test_an_acting_tool_nobody_asked_for_is_a_wrong_act():
    assert wrong_acts([], [ToolCall("note_add", {"text": "fan noise"})]) == ["note_add(text='fan noise')"]
    assert wrong_acts([TIMER_10], [ToolCall("timer_start", {"duration_s": 600}), ToolCall("shopping_add", {"item": "ten"})]) \
        == ["shopping_add(item='ten')"]


def test_an_act_that_left_out_a_said_argument_is_incomplete_not_wrong():
    pasta = ExpectedCall(tool="timer_start", args={"duration_s": 660, "label": "pasta"})
    unlabelled = ToolCall("timer_start", {"duration_s": 660})
    assert wrong_acts([pasta], [unlabelled]) == []
    assert incomplete_acts([pasta], [unlabelled]) == ["timer_start(duration_s=660)"]
    # Given but different is wrong, not incomplete.
    soup = ToolCall("timer_start", {"duration_s": 660, "label": "soup"})
    assert wrong_acts([pasta], [soup]) == ["timer_start(duration_s=660, label='soup')"]
    assert incomplete_acts([pasta], [soup]) == []
    assert incomplete_acts([pasta], [ToolCall("timer_start", {"duration_s": 660, "label": "pasta"})]) == []


def _result(*calls: ToolCallRecord, heard: bool = True, transcript: str = "") -> TurnResult:
    tl = Timeline(origin=0.0)
    if heard:
        tl.mark("speech_start", 0.4)
        tl.mark("speech_end", 2.0)
    tl.mark("endpoint", 2.3, audio_s=2.3, by="finished")
    tl.mark("final_transcript", 2.8, text=transcript)
    tl.mark("first_audio_out", 3.9)
    return TurnResult(Outcome.ANSWERED, tl, transcript=transcript, tool_calls=list(calls))


def _act(name: str, ok: bool = True, ran: bool = True, **args) -> ToolCallRecord:
    return ToolCallRecord(name, dict(args), ran=ran, acts=True, ok=ok)


ROWS = [  # (condition, expected, result): scripted turns of a kitchen run
    ("clean", [TIMER_10], _result(_act("timer_start", duration_s=600), transcript="set a timer for ten minutes")),
    ("clean", [MILK], _result(_act("shopping_add", item="milk"), transcript="add milk")),
    ("fan@10", [TIMER_10], _result(_act("timer_start", duration_s=900), transcript="set a timer for fifteen minutes")),
    ("fan@10", [MILK], _result(_act("shopping_add", item="milk"), transcript="add milk")),
    ("fan@10", [], _result(_act("note_add", text="hello"), transcript="note hello")),
    # Refused by the tool (changed nothing) or asked back (not made): not acts.
    ("fan@10", [MILK], _result(_act("shopping_add", ok=False, item="silk"), transcript="add silk")),
    ("fan@10", [TIMER_10], _result(_act("timer_start", ran=False, duration_s=60), transcript="set a timer for one minute")),
    ("noise-only:fan@10", [], _result(heard=False)),
    ("noise-only:fan@10", [], _result(_act("timer_start", duration_s=60), transcript="one minute")),
]


def test_wrong_acts_are_counted_per_condition_on_scripted_turns(tmp_path: Path):
    conditions = parse_kitchen(["clean", "fan@10", "noise-only:fan@10"], "kitchen-a")
    run = SuiteRun(HearthConfig(), BenchSettings(suite="tiny", out=tmp_path, kitchen=conditions))
    assert [arm.name for arm in run.arms] == ["clean", "fan@10", "noise-only:fan@10"]
    for index, (condition, expected, result) in enumerate(ROWS):
        row = {"scenario": f"s{index}", "turn": 0, "variant": condition, "condition": condition, "round": 0, "synthetic": True,
               "pause": False, "text": "x"}
        row |= _score_turn(result, expected, "x", "en", None, acting={"timer_start", "shopping_add", "note_add"})
        run.rows.append(row)
    report = run._summarize(SimpleNamespace(suite="tiny", language="en"), HearthConfig(), 0.0)
    figures = report["kitchen"]["conditions"]
    assert figures["clean"]["wrong_acts"] == 0 and figures["clean"]["acting_without_request"] == 0
    # The fifteen-minute timer (misheard) and the note nobody asked for; not the refused or the asked-back call.
    assert figures["fan@10"]["wrong_acts"] == 2 and figures["fan@10"]["acting_without_request"] == 1
    assert figures["fan@10"]["acts"] == 3
    alone = figures["noise-only:fan@10"]
    assert (alone["turns"], alone["turns_started"], alone["acts"], alone["wrong_acts"]) == (2, 1, 1, 1)
    assert alone["speech"] is False and figures["fan@10"]["snr_db"] == 10.0 and figures["fan@10"]["noise"] == "fan"
    text = render_kitchen(report["kitchen"])
    assert "### `fan@10`" in text and "| `clean` | `fan@10` |" in text
    assert "| acts on arguments not asked for (`wrong_acts`, turns) | 0 | 2 |" in text
    assert "| turns started (the loop heard speech) | 1 |" in text


def test_latency_counts_from_the_real_end_of_speech_not_the_detectors():
    tl = Timeline(origin=100.0)
    tl.mark("speech_start", 100.4)
    tl.mark("speech_end", 101.2)  # a pause the detector took for an end
    tl.mark("speech_end", 102.6)  # the noise held it in "speech" past the real end at 102.0
    tl.mark("endpoint", 102.9, audio_s=2.9)
    tl.mark("final_transcript", 103.4)
    tl.mark("first_audio_out", 104.5)
    figures = from_real_end(tl, 2.0)
    assert figures["first_audio_s"] == pytest.approx(2.5)
    assert figures["final_transcript_s"] == pytest.approx(1.4)
    assert figures["endpoint_s"] == pytest.approx(0.9)
    assert figures["vad_end_offset_s"] == pytest.approx(0.6)
    early = from_real_end(tl, 3.2)  # listening ended before the user finished: negative, not missing
    assert early["endpoint_s"] == pytest.approx(-0.3)


def test_figures_line_up_against_snr_per_kind():
    conditions = {
        "clean": {"noise": None, "speech": True, "tool_args_accuracy": 0.9},
        "room": {"noise": None, "speech": True, "tool_args_accuracy": 0.85},
        "fan@10": {"noise": "fan", "snr_db": 10.0, "speech": True, "tool_args_accuracy": 0.8},
        "fan@0": {"noise": "fan", "snr_db": 0.0, "speech": True, "tool_args_accuracy": 0.5},
        "noise-only:fan@10": {"noise": "fan", "snr_db": 10.0, "speech": False},
    }
    series, refs = snr_series(conditions, "tool_args_accuracy")
    assert series == {"fan": [(0.0, 50.0), (10.0, 80.0)]} and refs == {"clean": 90.0, "room": 85.0}
    assert condition_figures({"turns": 3, "tool_args_accuracy": {"share": 0.5}}, parse_kitchen(["tap@5"], "kitchen-a")[0])["tool_args_accuracy"] == 0.5


def test_the_picture_is_drawn_when_there_is_a_sound_at_some_snr(tmp_path: Path):
    from bench.kitchen.loop import draw_accuracy

    conditions = {
        "clean": {"noise": None, "speech": True, "tool_args_accuracy": 0.9, "transcript_error": 0.04},
        "fan@10": {"noise": "fan", "snr_db": 10.0, "speech": True, "tool_args_accuracy": 0.8, "transcript_error": 0.15},
    }
    assert draw_accuracy(conditions, tmp_path / "snr.png", "test")
    assert (tmp_path / "snr.png").read_bytes()[:4] == b"\x89PNG"
    assert not draw_accuracy({"clean": conditions["clean"]}, tmp_path / "none.png", "test")


def test_the_hearing_bench_sums_up_a_condition_and_noise_alone():
    from bench.kitchen.hear import render, summarize

    fan, alone = parse_kitchen(["fan@10", "noise-only:fan@10"], "kitchen-a")
    rows = [
        {"speech_found": True, "transcript": "set a timer", "transcript_error": 0.0, "start_error_s": 0.02, "end_error_s": 0.1,
         "turn_end_p": 0.9, "turn_end_heard": True, "decode_s": 0.5},
        {"speech_found": True, "transcript": "set it time", "transcript_error": 0.5, "start_error_s": 0.04, "end_error_s": 0.9,
         "turn_end_p": 0.3, "turn_end_heard": False, "decode_s": 0.7},
        {"speech_found": False, "transcript": "", "transcript_error": 1.0},
    ]
    figures = summarize(rows, fan)
    assert figures["transcript_error"] == 0.5 and figures["speech_found"] == pytest.approx(0.6667)
    assert figures["late_end_takes"] == 1 and figures["turn_end_heard"] == 0.5 and figures["end_error_s"] == 0.5
    noise = summarize([{"speech_found": True, "transcript": "Thank you."}, {"speech_found": False, "transcript": ""}], alone)
    assert noise == {"takes": 2, "false_starts": 1, "phantom_words": 1}
    table = render({"suite": "tiny", "turns": 3, "room": "kitchen-a", "seed": 0, "git_commit": "abcdef0123",
                    "conditions": {"fan@10": {"none": figures}, "noise-only:fan@10": {"none": noise}},
                    "front_ends": {"none": {"cpu_s_per_audio_s": 0.0}}})
    assert "| fan@10 | none | 50.0 % |" in table and "1 / 1 of 2" in table
