"""The microphone's word error rates, in the docs and in `hearth mic-check`, come from a result file."""

from __future__ import annotations

import json
import re
from pathlib import Path

from firmware_py.mic_check import MEASURED_AT, MEASURED_IN, MEASURED_WER, Floor, Thresholds, Voice, judge

ROOT = Path(__file__).resolve().parent.parent
_PERCENT = re.compile(r"(\d+(?:\.\d+)?) %")


def _measured() -> dict:
    return json.loads((ROOT / MEASURED_IN).read_text(encoding="utf-8"))


def test_the_figures_are_the_result_files_written_by_a_committed_bench_at_the_named_commit() -> None:
    result = _measured()
    assert result["git_commit"].startswith(MEASURED_AT)
    assert (ROOT / "bench" / "kitchen" / "hear.py").is_file()
    for condition, wer in MEASURED_WER.items():
        assert round(result["conditions"][condition]["none"]["transcript_error"] * 100, 1) == wer, condition


def _section(text: str, heading: str) -> str:
    start = text.index(heading)
    end = text.find("\n## ", start + len(heading))
    return text[start:end if end > 0 else None]


def test_every_word_error_rate_in_the_microphone_docs_is_a_measured_one_named_with_its_file() -> None:
    using = _section((ROOT / "docs" / "using.md").read_text(encoding="utf-8"), "## Setting up the microphone")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    readme = readme[readme.index("**A microphone and a speaker**"):readme.index("**A push button**")]
    measured = set(MEASURED_WER.values())
    for where, text in (("docs/using.md", using), ("README.md", readme)):
        flat = " ".join(text.split())
        assert MEASURED_IN in flat and MEASURED_AT in flat, where
        # 99 % is the clipping level, no error rate.
        figures = {float(f) for f in _PERCENT.findall(flat)} - {99.0}
        assert figures and figures <= measured, (where, sorted(figures - measured))
    # The old figures, which no result file holds.
    for old in ("15.6 %", "27 %", "68 %", "73 %", "16 %"):
        assert old not in using and old not in readme


def test_mic_checks_verdicts_quote_the_measured_figures() -> None:
    floor = Floor(mean_dbfs=-50.0, p10_dbfs=-51.0, p50_dbfs=-50.0, p90_dbfs=-49.0, seconds=5.0, voice_s=0.0)
    t = Thresholds()

    def summary(snr: float) -> str:
        return judge(floor, Voice(2.0, -30.0, snr, -6.0, 0), t).summary

    assert summary(25.0).startswith("Good")
    usable, poor = summary(14.0), summary(4.0)
    assert f"{MEASURED_WER['fan@10']:.1f} %" in usable and f"{MEASURED_WER['room']:.1f} %" in usable
    assert f"{MEASURED_WER['fan@5']:.1f} %" in poor and f"{MEASURED_WER['fan@0']:.1f} %" in poor
    assert "most of what you say" not in poor  # a third of the words at 5 dB is not most of them
    for text in (usable, poor):
        assert {float(f) for f in _PERCENT.findall(text)} <= set(MEASURED_WER.values())
