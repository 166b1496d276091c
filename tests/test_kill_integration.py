"""The kill test through the real loop: five kills lose nothing acknowledged."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.drills.kill import KillSettings, run

pytestmark = pytest.mark.integration


def test_five_kills_through_the_loop_lose_nothing_acknowledged(tmp_path: Path):
    # Killed 6 to 9 s into each life (after its first acknowledged change, on this machine or a
    # slower one), or at a step: the call started, settled, or the words heard.
    report = run(KillSettings(kills=5, seed=14, min_delay_s=6.0, max_delay_s=9.0, on_event_share=0.4, data_dir=tmp_path, write=False))
    assert report["failures"] == []
    assert report["child_tracebacks"] == 0
    assert report["acknowledged_writes"] >= 1
    assert report["writes_found_after_restart"] == report["acknowledged_writes"]
    assert report["integrity"] == {name: {"ok": 6} for name in ("hearth.db", "conversation.sqlite3", "recipes.db")}
    assert report["turns_checked"] >= report["kills"] - 1
