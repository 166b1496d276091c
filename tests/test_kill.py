"""The kill test's checks: they pass a life written as hearth writes it and catch a lost change, a unit heard but not recorded, a damaged database."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from agent.record import ConversationRecord, RecordEntry
from bench.drills.kill_check import check_life, check_start
from tools.lists import ListStore
from tools.timers import TimerStore


def _life(tmp_path: Path, *, started: bool = True, settled: bool = True, in_store: bool = True) -> list[dict]:
    """One life that set a tea timer in turn 1: written as hearth writes it, less what is switched off."""
    record = ConversationRecord.open(tmp_path / "conversation.sqlite3")
    timers, lists = TimerStore(tmp_path / "hearth.db"), ListStore(tmp_path / "hearth.db")
    timers.open()
    lists.open()
    sqlite3.connect(tmp_path / "recipes.db").close()
    args = {"duration_s": 300, "label": "tea"}
    data = {"id": 1, "label": "tea", "state": "running", "duration_s": 300, "remaining_s": 300}
    try:
        record.append([RecordEntry(1, "user", "set a tea timer for 5 minutes", "heard")])
        if started:
            record.append([RecordEntry(1, "tool", "timer_start", "started", "timer_start", data={"args": args})])
        if in_store:
            timers.start(300, "tea")
        if settled:
            record.append([RecordEntry(1, "tool", "timer_start", "ok", "timer_start", data={"args": args, **data})])
        record.append([RecordEntry(1, "assistant", "Tea timer set for 5 minutes.", "spoken", "answer")])
    finally:
        record.close()
        timers.close()
        lists.close()
    return [
        {"event": "words", "turn": 1, "text": "set a tea timer for 5 minutes"},
        {"event": "started", "turn": 1, "tool": "timer_start", "args": args},
        {"event": "ack", "turn": 1, "tool": "timer_start", "args": args, "status": "ok", "data": data},
        {"event": "heard", "turn": 1, "text": "Tea timer set for 5 minutes.", "kind": "answer"},
    ]


def _before(tmp_path: Path):
    for store in (TimerStore(tmp_path / "hearth.db"), ListStore(tmp_path / "hearth.db")):
        store.open()
        store.close()
    ConversationRecord.open(tmp_path / "conversation.sqlite3").close()
    sqlite3.connect(tmp_path / "recipes.db").close()
    return check_start(tmp_path).snapshot


def test_a_life_written_as_hearth_writes_it_passes(tmp_path: Path):
    before = _before(tmp_path)
    check = check_life(tmp_path, _life(tmp_path), before)
    assert check.failures == []
    assert (check.acknowledged, check.found, check.heard_confirmations, check.changes, check.unacknowledged_changes) == (1, 1, 1, 1, 0)
    assert check.integrity == {"hearth.db": "ok", "conversation.sqlite3": "ok", "recipes.db": "ok"}


@pytest.mark.parametrize(
    ("lost", "says"),
    [
        ({"in_store": False}, "in the store: False"),
        ({"settled": False}, "in the record: False"),
        ({"started": False}, "has no timer_start on record"),
    ],
)
def test_a_change_lost_or_made_without_its_turn_is_a_failure(tmp_path: Path, lost: dict, says: str):
    before = _before(tmp_path)
    check = check_life(tmp_path, _life(tmp_path, **lost), before)
    assert check.found == 0
    assert any(says in failure for failure in check.failures), check.failures


def test_a_unit_heard_but_not_in_the_record_is_a_failure(tmp_path: Path):
    before = _before(tmp_path)
    reports = _life(tmp_path) + [{"event": "heard", "turn": 1, "text": "And another thing.", "kind": "answer"}]
    check = check_life(tmp_path, reports, before)
    assert check.failures == ["turn 1: the unit 'And another thing.' heard is not in the record as spoken"]


def test_a_damaged_database_fails_the_integrity_check(tmp_path: Path):
    before = _before(tmp_path)
    _life(tmp_path)
    path = tmp_path / "recipes.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE filler (x TEXT)")
    conn.executemany("INSERT INTO filler VALUES (?)", [("x" * 500,)] * 200)
    conn.commit()
    conn.close()
    with open(path, "r+b") as handle:  # scribble over a page in the middle of the table
        handle.seek(4096 * 5 + 100)
        handle.write(b"\xff" * 2000)
    check = check_life(tmp_path, [], before)
    assert check.integrity["recipes.db"] != "ok"
    assert any("integrity_check of recipes.db" in f for f in check.failures)


