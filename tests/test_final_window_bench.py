"""bench.final_window's summary: what it counts as the fitted window hearing worse or better."""

from __future__ import annotations

from bench.final_window import summarise


def _row(full: str, fit: str, full_error: float, fit_error: float, redone: bool = False) -> dict[str, object]:
    return {"full": full, "fit": fit, "same": full.lower() == fit.lower(), "full_s": 0.5, "fit_s": 0.2,
            "full_error": full_error, "fit_error": fit_error, "fit_redone_full": redone}


def test_the_summary_counts_where_each_window_heard_better() -> None:
    rows = [
        _row("How long is left on the chicken timer?", "Halon is left on the chicken timer.", 0.0, 0.375),
        _row("Call mom.", "Kormam.", 0.0, 1.0),
        _row("Why does bread go stale?", "Why does bread go stale?", 0.2, 0.2),
        _row("How do I cook a steak and a pan?", "How do I cook a steak in a pan?", 0.125, 0.0, redone=True),
    ]
    summary = summarise(rows)
    assert summary["clips"] == 4
    assert summary["fit_worse"] == 2 and summary["fit_better"] == 1
    assert summary["same_text"] == 0.25
    assert summary["wer_full"] == round((0.0 + 0.0 + 0.2 + 0.125) / 4, 4)
    assert summary["wer_fit"] == round((0.375 + 1.0 + 0.2 + 0.0) / 4, 4)
    assert summary["ratio_of_medians"] == 0.4
    assert summary["fit_redone_full"] == 1


def test_no_rows_is_said_not_divided_by() -> None:
    assert summarise([]) == {"clips": 0}
