"""bench.echo.stop_words: its sets keep the held-out phrases and voices apart, and its summary counts."""

from __future__ import annotations

from bench.echo.stop_words import SETS, summarize


def test_the_held_out_set_shares_no_phrase_and_no_voice_with_the_tuning_set():
    for language, sets in SETS.items():
        tuning, held_out = sets["tuning"], sets["held_out"]
        said = set(tuning["stops"]) | set(tuning["requests"])
        assert not said & (set(held_out["stops"]) | set(held_out["requests"])), language
        assert not {v for v, _ in tuning["voices"]} & {v for v, _ in held_out["voices"]}, language


def _row(is_stop: bool, best: bool, n_best: bool, best_s: float = 1.0, n_best_s: float = 1.2) -> dict:
    return {"is_stop": is_stop, "best": {"stop": best, "s": best_s}, "n_best": {"stop": n_best, "s": n_best_s}}


def test_summary_counts_stops_heard_and_requests_taken_for_stops_each_way():
    rows = [
        _row(True, True, True), _row(True, False, True), _row(True, False, False), _row(True, False, True),
        _row(False, False, False), _row(False, False, True),
    ]
    summary = summarize(rows)
    assert (summary["stops"], summary["requests"]) == (4, 2)
    assert summary["best"]["stop_heard"] == 0.25 and summary["n_best"]["stop_heard"] == 0.75
    assert summary["best"]["false_stops"] == 0.0 and summary["n_best"]["false_stops"] == 0.5
    assert summary["decide_ratio"] == 1.2
