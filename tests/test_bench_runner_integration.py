"""``hearth bench`` on a tiny suite with the real piper voice: the three outputs, ablation pairs, and a failure that is recorded, not fatal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.deps import TurnDeps
from bench.loop.runner import BenchSettings, SuiteRun
from firmware_py.config import parse_config
from tests.fakes import EnergyVad, ScriptedChatModel, ScriptedRecognizer, ToneSynthesizer
from tests.test_bench_runner import TINY

pytestmark = pytest.mark.integration


@pytest.fixture
def tiny_suite(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.yaml"
    path.write_text(TINY)
    return path


async def fake_deps(config, speaker) -> TurnDeps:
    return TurnDeps(
        vad=EnergyVad(threshold=0.01),
        recognizer=ScriptedRecognizer("set a timer for ten minutes"),
        chat=ScriptedChatModel("Okay. Done."),
        synthesizer=ToneSynthesizer(seconds_per_char=0.005),
        speaker=speaker,
        language="en",
        system_prompt="be brief",
    )


async def test_three_outputs_with_an_ablation_pair_per_turn(tiny_suite: Path, tmp_path: Path):
    out = tmp_path / "run"
    settings = BenchSettings(suite=str(tiny_suite), out=out, ablate=("speculative-final",), progress=False)
    report = await SuiteRun(parse_config({}), settings, build=fake_deps).run()

    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics == json.loads(json.dumps(report, ensure_ascii=False))
    assert set(metrics["variants"]) == {"baseline", "no-speculative-final"}
    assert metrics["audio"] == "synthetic speech"
    # What wrote it: the runner (``hearth bench`` names firmware_py.cli), the commit, a clean tree or not.
    assert metrics["written_by"]["module"] == "bench.loop.runner"
    assert metrics["written_by"]["commit"] == metrics["git_commit"]
    assert isinstance(metrics["written_by"]["dirty"], bool)
    rows = metrics["scenarios"]
    # 3 turns (one follow-up) x 2 variants, interleaved scenario by scenario.
    assert [(r["scenario"], r["turn"], r["variant"]) for r in rows] == [
        ("timer", 0, "baseline"), ("timer", 0, "no-speculative-final"),
        ("thanks", 0, "no-speculative-final"), ("thanks", 1, "no-speculative-final"),
        ("thanks", 0, "baseline"), ("thanks", 1, "baseline"),
    ]  # fmt: skip
    base = metrics["variants"]["baseline"]
    assert base["turns"] == 3 and base["failures"] == 0
    assert base["first_audio_s"]["median"] is not None
    # No tools exist yet: the timer turn is wrong, "thank you" (no tool) is right.
    by_turn = {(r["scenario"], r["turn"]): r for r in rows if r["variant"] == "baseline"}
    assert by_turn[("timer", 0)]["right_tool"] is False
    assert by_turn[("thanks", 0)]["right_tool"] is True
    assert metrics["ratios_vs_baseline"]["no-speculative-final"]["first_audio_s"] is not None
    for name in ("timer", "thanks", "thanks-t1", "timer--no-speculative-final"):
        for suffix in (".json", ".png", ".html"):
            assert (out / "timelines" / (name + suffix)).is_file(), name + suffix
        assert json.loads((out / "timelines" / (name + ".json")).read_text())["written_by"] == metrics["written_by"]
    report_md = (out / "report.md").read_text()
    assert "| figure | baseline | no-speculative-final |" in report_md
    assert "synthetic speech" in report_md


async def test_a_failing_scenario_is_recorded_and_the_run_goes_on(tmp_path: Path):
    suite = tmp_path / "tiny.yaml"
    suite.write_text(TINY.replace("    category: chitchat", "    category: chitchat\n    audio: missing/recording.wav\n    synthetic: false"))
    out = tmp_path / "run"
    settings = BenchSettings(suite=str(suite), out=out, progress=False, pictures=False)
    report = await SuiteRun(parse_config({}), settings, build=fake_deps).run()
    rows = report["scenarios"]
    assert [r["scenario"] for r in rows] == ["timer", "thanks"]
    assert "error" not in rows[0] and "recording.wav" in rows[1]["error"]
    assert report["variants"]["baseline"]["failures"] == 1
    assert report["audio"] == "mixed"
    assert "## Failures" in (out / "report.md").read_text()


async def test_both_presses_interleaved_the_held_one_timed_from_its_release(tiny_suite: Path, tmp_path: Path):
    out = tmp_path / "run"
    settings = BenchSettings(suite=str(tiny_suite), out=out, progress=False, pictures=False, presses=("hold", "tap"))
    report = await SuiteRun(parse_config({}), settings, build=fake_deps).run()
    rows = report["scenarios"]
    assert [(r["scenario"], r["turn"], r["variant"]) for r in rows][:2] == [("timer", 0, "hold"), ("timer", 0, "tap")]
    held = [r for r in rows if r["variant"] == "hold"]
    tapped = [r for r in rows if r["variant"] == "tap"]
    # A held press ends the utterance with the button, and its figures count from the release.
    assert all(r["ended_by"] == "button" for r in held)
    assert all(r["release_first_audio_s"] is not None and r["release_first_audio_s"] > 0 for r in held)
    assert all(r["ended_by"] != "button" and r["release_first_audio_s"] is None for r in tapped)
    assert report["variants"]["hold"]["release_first_audio_s"]["n"] == 3
    assert report["variants"]["tap"]["release_first_audio_s"]["n"] == 0
    assert "held press: release → first audio (s)" in (out / "report.md").read_text()


async def test_a_kitchen_heard_by_an_array_is_played_through_each_front_end(tiny_suite: Path, tmp_path: Path):
    from bench.loop.runner import parse_kitchen

    out = tmp_path / "array"
    settings = BenchSettings(suite=str(tiny_suite), out=out, progress=False, pictures=False, limit=1,
                             kitchen=parse_kitchen(["fan@10"], "kitchen-small"), room="kitchen-small",
                             array="respeaker-4mic", array_front_ends=("first", "mvdr"))
    report = await SuiteRun(parse_config({}), settings, build=fake_deps).run()
    kitchen = report["kitchen"]
    assert kitchen["array"]["name"] == "respeaker-4mic"
    assert set(kitchen["conditions"]) == {"fan@10 first", "fan@10 mvdr"}
    for name, figures in kitchen["conditions"].items():
        assert figures["front_end"] == name.split()[1]
        assert figures["turns"] == 1 and figures["turns_started"] == 1
        assert figures["first_audio_s"] is not None
    assert kitchen["conditions"]["fan@10 mvdr"]["front_end_cpu_s"] > kitchen["conditions"]["fan@10 first"]["front_end_cpu_s"]
    text = (out / "report.md").read_text()
    assert "Heard by the array `respeaker-4mic`" in text and "### `fan@10 mvdr`" in text
