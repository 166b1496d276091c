"""``hearth bench`` on a tiny suite: the refusal of an unknown feature, and Cadence's figures read off the speaker's clock."""

from __future__ import annotations

from pathlib import Path

import pytest

from firmware_py.cli import main

TINY = """
suite: tiny
language: en
description: two requests for testing the harness
scenarios:
  - id: timer
    text: Set a timer for ten minutes.
    category: timer
    expect: [{tool: timer_start, args: {duration_s: 600}}]
  - id: thanks
    text: Thank you.
    category: chitchat
    expect: []
    followups:
      - text: What time is it?
        expect: [{tool: time_now, args: {}}]
"""


@pytest.fixture
def tiny_suite(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.yaml"
    path.write_text(TINY)
    return path


def test_unknown_feature_is_refused_in_one_line(capsys, tiny_suite: Path, tmp_path: Path):
    code = main(["bench", "--suite", str(tiny_suite), "--ablate", "telepathy", "--out", str(tmp_path)])
    assert code == 2
    assert "unknown feature telepathy" in capsys.readouterr().err


def test_cadence_figures_read_the_silence_between_units_off_the_speakers_clock():
    from agent.timeline import Timeline
    from bench.loop.metrics import cadence_figures

    tl = Timeline(origin=0.0)
    tl.mark("tts_end", 0.1, unit=0, audio_s=1.0)
    tl.mark("unit_audio_out", 0.5, unit=0)
    tl.mark("tts_end", 0.9, unit=1, audio_s=2.0)
    tl.mark("unit_audio_out", 1.8, unit=1)  # 0.3 s after unit 0 ended at 1.5
    tl.mark("tts_end", 2.0, unit=2, audio_s=0.5)
    tl.mark("unit_audio_out", 3.9, unit=2)  # 0.1 s after unit 1 ended at 3.8
    assert cadence_figures(tl) == {"units": 3, "pause_heard_s": 0.2}
    tl.mark("pause", 3.8, unit=2, voice_edges_s=0.2)  # the voice's own quiet at the edges is heard too
    assert cadence_figures(tl) == {"units": 3, "pause_heard_s": 0.3}
    assert cadence_figures(Timeline(origin=0.0)) == {"units": 0, "pause_heard_s": None}


def test_text_turns_have_no_button_to_hold(capsys, tiny_suite: Path, tmp_path: Path):
    assert main(["bench", "--suite", str(tiny_suite), "--out", str(tmp_path / "o"), "--text", "--press", "hold"]) == 2
    assert "leave out --press" in capsys.readouterr().err


def test_each_press_is_an_arm_named_only_when_the_run_has_more_than_the_tap(tmp_path: Path):
    from bench.loop.runner import BenchSettings, SuiteRun, parse_kitchen
    from firmware_py.config import parse_config

    def arms(**settings) -> list[tuple[str, str, str | None, str]]:
        run = SuiteRun(parse_config({}), BenchSettings(suite="tiny", out=tmp_path, progress=False, **settings))
        return [(a.name, a.features, a.condition.name if a.condition else None, a.press) for a in run.arms]

    assert arms() == [("baseline", "baseline", None, "tap")]
    assert arms(presses=("hold", "tap")) == [("hold", "baseline", None, "hold"), ("tap", "baseline", None, "tap")]
    assert arms(presses=("hold",), ablate=("speculative-final",)) == [
        ("hold", "baseline", None, "hold"), ("no-speculative-final hold", "no-speculative-final", None, "hold")]
    kitchen = parse_kitchen(["clean", "fan@10"], "kitchen-a")
    assert [a[0] for a in arms(kitchen=kitchen)] == ["clean", "fan@10"]
    assert [a[0] for a in arms(kitchen=kitchen, presses=("hold", "tap"))] == [
        "clean hold", "clean tap", "fan@10 hold", "fan@10 tap"]


def test_the_summary_names_each_press_and_times_the_held_one_from_its_release(monkeypatch, capsys, tiny_suite: Path, tmp_path: Path):
    from bench.loop.runner import SuiteRun

    def figures(first_audio: float, released: float | None) -> dict:
        median = lambda value: {"median": value}  # noqa: E731
        return {"turns": 3, "endpoint_s": median(0.03), "first_audio_s": median(first_audio),
                "release_first_audio_s": median(released), "cut_off_turns": 0, "dropped_tail_turns": 0,
                "tool_accuracy": {"share": 1.0}, "tool_args_accuracy": {"share": 1.0}, "pretool_coverage": {"share": None}}

    async def run(self) -> dict:
        return {"suite": "tiny", "audio": "synthetic speech", "variants": {"hold": figures(0.9, 0.8), "tap": figures(1.2, None)}}

    monkeypatch.setattr(SuiteRun, "run", run)
    assert main(["bench", "--suite", str(tiny_suite), "--out", str(tmp_path / "o"), "--press", "hold", "tap"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert any(line.startswith("tiny [hold]:") and "release → first audio median 0.8 s" in line for line in lines)
    assert any(line.startswith("tiny [tap]:") and "release" not in line for line in lines)
