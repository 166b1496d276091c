"""The conversation record: append-only, atomic per batch, and faithful to what went in."""

from __future__ import annotations

import sqlite3
import time
from datetime import date
from pathlib import Path

import pytest

from agent.record import ConversationRecord, RecordEntry


def _turn(turn: int) -> list[RecordEntry]:
    return [
        RecordEntry(turn, "user", "타이머 10분 맞춰 줘", "heard"),
        RecordEntry(turn, "assistant", "네, 맞출게요.", "spoken", kind="pretool"),
        RecordEntry(turn, "tool", "start_timer(minutes=10)", "ok", kind="start_timer", data={"args": {"minutes": 10}}),
        RecordEntry(turn, "assistant", "10분 타이머를 시작했어요.", "unspoken", kind="answer"),
    ]


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "record.sqlite3"


@pytest.fixture
def record(db_path: Path):
    opened = ConversationRecord.open(db_path)
    yield opened
    opened.close()


def _raw_rows(db_path: Path) -> list[tuple]:
    conn = sqlite3.connect(db_path)
    try:
        return conn.execute("SELECT * FROM entries ORDER BY id").fetchall()
    finally:
        conn.close()


def _raw_turns(db_path: Path) -> list[tuple]:
    conn = sqlite3.connect(db_path)
    try:
        return conn.execute("SELECT * FROM turns ORDER BY turn").fetchall()
    finally:
        conn.close()


def test_entries_come_back_in_append_order_with_korean_text_exact(record: ConversationRecord):
    record.append(_turn(1))

    got = record.entries()

    assert [(e.turn, e.role, e.text, e.status, e.kind) for e in got] == [
        (1, "user", "타이머 10분 맞춰 줘", "heard", ""),
        (1, "assistant", "네, 맞출게요.", "spoken", "pretool"),
        (1, "tool", "start_timer(minutes=10)", "ok", "start_timer"),
        (1, "assistant", "10분 타이머를 시작했어요.", "unspoken", "answer"),
    ]


def test_ids_increase_in_append_order(record: ConversationRecord, db_path: Path):
    record.append(_turn(1))
    record.append(_turn(2))

    ids = [row[0] for row in _raw_rows(db_path)]

    assert len(ids) == 8
    assert ids == sorted(ids) and len(set(ids)) == 8


def test_next_turn_is_one_when_empty_then_one_past_the_highest(record: ConversationRecord):
    assert record.next_turn() == 1
    record.append(_turn(1))
    assert record.next_turn() == 2
    record.append(_turn(5))
    assert record.next_turn() == 6


def test_reopening_the_file_keeps_everything(db_path: Path):
    first = ConversationRecord.open(db_path)
    first.append(_turn(1))
    first.append(_turn(2))
    before = first.entries()
    first.close()

    again = ConversationRecord.open(db_path)
    try:
        assert again.entries() == before
        assert len(before) == 8
        assert again.next_turn() == 3
    finally:
        again.close()


def test_open_creates_the_parent_directory_and_uses_wal(tmp_path: Path):
    path = tmp_path / "deep" / "er" / "record.sqlite3"
    record = ConversationRecord.open(path)
    record.close()

    assert path.is_file()
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        conn.close()


def test_in_memory_record_works():
    record = ConversationRecord.open(":memory:")
    try:
        record.append(_turn(1))
        assert len(record.entries()) == 4
    finally:
        record.close()


_ROW = "(1, 1, 'user', '바뀜', 'heard', '', 0, '{}')"
_COLS = "(id, turn, role, text, status, kind, at, data)"


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE entries SET text = '바뀜' WHERE role = 'user'",
        "UPDATE OR REPLACE entries SET id = 2 WHERE id = 1",
        "DELETE FROM entries WHERE role = 'tool'",
        "DELETE FROM entries",
        f"REPLACE INTO entries {_COLS} VALUES {_ROW}",
        f"INSERT OR REPLACE INTO entries {_COLS} VALUES {_ROW}",
        f"INSERT INTO entries {_COLS} VALUES {_ROW} ON CONFLICT(id) DO UPDATE SET text = excluded.text",
        f"INSERT INTO entries {_COLS} VALUES {_ROW} ON CONFLICT DO UPDATE SET text = '바뀜'",
        "UPDATE turns SET started_at = 0",
        "DELETE FROM turns",
        "REPLACE INTO turns (turn, started_at) VALUES (1, 0)",
        "INSERT OR REPLACE INTO turns (turn, started_at) VALUES (1, 0)",
        "INSERT INTO turns (turn, started_at) VALUES (1, 0) ON CONFLICT(turn) DO UPDATE SET started_at = 0",
    ],
)
@pytest.mark.parametrize("connection", ["another", "another_without_recursive_triggers", "the_records_own"])
def test_update_delete_and_replace_are_refused_and_change_nothing(
    record: ConversationRecord, db_path: Path, statement: str, connection: str
):
    assert record.begin_turn() == 1
    record.append(_turn(1))
    before = _raw_rows(db_path), _raw_turns(db_path)

    if connection == "the_records_own":
        conn = record._conn
    else:
        conn = sqlite3.connect(db_path)
        if connection == "another_without_recursive_triggers":
            conn.execute("PRAGMA recursive_triggers=OFF")  # what REPLACE needs to fire delete triggers
    try:
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            conn.execute(statement)
        conn.commit()
    finally:
        if conn is not record._conn:
            conn.close()

    assert (_raw_rows(db_path), _raw_turns(db_path)) == before
    assert len(record.entries()) == 4
    record.append(_turn(2))  # and the record goes on taking entries
    assert record.next_turn() == 3


def test_a_batch_with_an_unknown_role_raises_and_writes_nothing(record: ConversationRecord, db_path: Path):
    record.append(_turn(1))
    before = _raw_rows(db_path)
    batch = [RecordEntry(2, "user", "안녕", "heard"), RecordEntry(2, "system", "oops", "heard")]

    with pytest.raises(ValueError, match="unknown role 'system'"):
        record.append(batch)

    assert _raw_rows(db_path) == before
    assert record.next_turn() == 2


def test_a_batch_failing_inside_the_transaction_is_rolled_back(record: ConversationRecord, db_path: Path):
    # The second row breaks NOT NULL in SQLite itself, after the first was inserted: only rollback undoes it.
    batch = [RecordEntry(1, "user", "안녕", "heard"), RecordEntry(1, "assistant", None, "spoken")]  # type: ignore[arg-type]

    with pytest.raises(sqlite3.IntegrityError):
        record.append(batch)

    assert _raw_rows(db_path) == []
    record.append(_turn(1))  # the connection is usable again: no transaction was left open
    assert len(record.entries()) == 4


def test_entries_for_a_turn_returns_only_that_turn(record: ConversationRecord):
    record.append(_turn(1))
    record.append(_turn(2))
    record.append([RecordEntry(3, "user", "고마워", "heard")])

    assert {e.turn for e in record.entries(turn=2)} == {2}
    assert len(record.entries(turn=2)) == 4
    assert [e.text for e in record.entries(turn=3)] == ["고마워"]
    assert record.entries(turn=9) == []


def test_data_round_trips_through_json(record: ConversationRecord):
    data = {"args": {"item": "대파", "count": 2, "ok": True, "none": None}, "outcome": ["추가됨", 1.5]}
    record.append([RecordEntry(1, "tool", "add_item(대파)", "ok", kind="add_item", data=data)])

    (got,) = record.entries()

    assert got.data == data


def test_values_json_cannot_hold_are_stored_as_text(record: ConversationRecord):
    record.append([RecordEntry(1, "tool", "date_today()", "ok", kind="date_today", data={"day": date(2024, 5, 1)})])

    assert record.entries()[0].data == {"day": "2024-05-01"}


def test_at_zero_is_stamped_with_now_and_a_given_at_is_kept(record: ConversationRecord):
    start = time.time()
    record.append([RecordEntry(1, "user", "안녕", "heard"), RecordEntry(1, "assistant", "안녕하세요", "spoken", at=123.5)])
    end = time.time()

    stamped, given = record.entries()

    assert start <= stamped.at <= end
    assert given.at == 123.5


def test_an_empty_batch_writes_nothing(record: ConversationRecord, db_path: Path):
    record.append([])

    assert _raw_rows(db_path) == []
    assert record.next_turn() == 1


def test_a_turn_gets_its_number_as_it_starts_and_numbers_never_repeat(record: ConversationRecord, db_path: Path):
    assert record.begin_turn() == 1
    assert record.begin_turn() == 2  # the first wrote nothing, yet its number is taken
    record.append(_turn(2))
    reopened = ConversationRecord.open(db_path)
    try:
        assert reopened.begin_turn() == 3
    finally:
        reopened.close()


def test_history_is_what_was_heard_of_answered_and_interrupted_turns(record: ConversationRecord):
    def turn(n: int, user: str, units: list[tuple[str, str, str]], ended: str | None) -> None:
        entries = [RecordEntry(n, "user", user, "heard")]
        entries += [RecordEntry(n, "assistant", text, status, kind) for text, status, kind in units]
        if ended is not None:
            entries.append(RecordEntry(n, "turn", "", ended))
        record.append(entries)

    turn(1, "set a timer", [("Ten minutes.", "spoken", "answer")], "answered")
    turn(2, "what's the weather", [("Hang on.", "spoken", "pretool"), ("It's sunny", "cut", "answer"), ("and warm.", "unspoken", "answer")], "interrupted")
    turn(3, "mumble", [("Sorry, something went wrong.", "spoken", "phrase")], "failed")
    turn(4, "and tomorrow?", [("Tomorrow", "spoken", "answer")], None)  # still under way
    assert record.history(10) == [
        ("set a timer", "Ten minutes."),
        ("what's the weather", "Hang on. It's sunny"),
        ("and tomorrow?", "Tomorrow"),
    ]
    assert record.history(2) == record.history(10)[-2:]
    assert record.history(10, since=3) == [("and tomorrow?", "Tomorrow")]
    assert record.history(0) == []
