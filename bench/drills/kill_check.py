"""What the kill test checks after each restart, from the files on disk.

Read-only connections, opened while the restarted hearth holds its own (so reading them never
checkpoints or recovers anything in hearth's place).  Three checks:

* every change acknowledged before the kill (an acting call reported settled ``ok``) is in its
  store, and its turn is in the record: the words, the call started and settled;
* every unit reported heard is in the record as spoken, in its turn: the record holds the turn
  up to the last unit heard;
* every row in the stores was made or changed by a call the record has (at least as started):
  no change without its turn; and ``PRAGMA integrity_check`` is ok on every database.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DATABASES = ("hearth.db", "conversation.sqlite3", "recipes.db")


@dataclass
class Check:
    """One restart's findings."""

    acknowledged: int = 0
    found: int = 0
    heard_confirmations: int = 0
    """Acknowledged changes whose confirmation was heard to its end before the kill."""
    turns: set[int] = field(default_factory=set)
    words: int = 0
    units: int = 0
    rows: int = 0
    changes: int = 0
    """Changes the killed life made to the stores (rows added, timers cancelled, items ticked off)."""
    unacknowledged_changes: int = 0
    """Of those, made by a call that had not been reported settled when the kill came: the window
    between a store's commit and the record that the started entry covers."""
    integrity: dict[str, str] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    snapshot: Snapshot = field(default_factory=dict)
    """The stores as this restart found them (what the next life starts from)."""


Snapshot = dict[str, dict[int, Any]]
"""Every row's id and what can change of it: timers' state, items' key and whether ticked off, notes' text."""


def snapshot(store: sqlite3.Connection) -> Snapshot:
    return {
        "timers": {r["id"]: (r["label"], r["duration_s"], r["state"]) for r in store.execute("SELECT * FROM timers")},
        "items": {r["id"]: (r["key"], r["done_at"] is not None) for r in store.execute("SELECT * FROM shopping_items")},
        "notes": {r["id"]: r["text"] for r in store.execute("SELECT * FROM notes")},
    }


def _open(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    return conn


def _key(text: object) -> str:
    return " ".join(str(text).lower().split())


def _label(text: object) -> str | None:
    words = _key(text).split() if text else []
    if len(words) > 1 and words[-1] in ("timer", "타이머"):
        words = words[:-1]
    return " ".join(words) or None


def integrity(data_dir: Path, check: Check) -> None:
    for name in DATABASES:
        path = data_dir / name
        if not path.exists():
            check.integrity[name] = "missing"
            check.failures.append(f"{name} is missing")
            continue
        conn = _open(path)
        try:
            result = "; ".join(str(row[0]) for row in conn.execute("PRAGMA integrity_check"))
        finally:
            conn.close()
        check.integrity[name] = result
        if result != "ok":
            check.failures.append(f"integrity_check of {name}: {result}")


def check_start(data_dir: Path) -> Check:
    """The first start: the files are sound, and what the first life starts from."""
    check = Check()
    integrity(data_dir, check)
    store = _open(data_dir / "hearth.db")
    try:
        check.snapshot = snapshot(store)
    finally:
        store.close()
    return check


def check_life(data_dir: Path, reports: list[dict[str, Any]], before: Snapshot) -> Check:
    """Check what one killed life reported against the files, and the files against the record;
    ``before``: the stores as the life found them."""
    check = Check()
    integrity(data_dir, check)
    if check.failures:
        return check
    record, store = _open(data_dir / "conversation.sqlite3"), _open(data_dir / "hearth.db")
    try:
        entries = [dict(row) | {"data": json.loads(row["data"])} for row in record.execute("SELECT * FROM entries ORDER BY id")]
        check.snapshot = snapshot(store)
        _check_reports(reports, entries, store, check)
        _check_changes(reports, before, check)
        _check_rows(entries, store, check)
    finally:
        record.close()
        store.close()
    return check


def _changes(before: Snapshot, after: Snapshot) -> list[tuple[str, dict[str, object]]]:
    """What a life changed, as the call that would make each change and the arguments it names
    (a timer rung by the watcher is no call's doing)."""
    made: list[tuple[str, dict[str, object]]] = []
    for id_, (label, duration, state) in after["timers"].items():
        if id_ not in before["timers"]:
            made.append(("timer_start", {"label": label, "duration_s": duration}))
        if state == "cancelled" and (id_ not in before["timers"] or before["timers"][id_][2] != "cancelled"):
            made.append(("timer_cancel", {"label": label}))
    for id_, (key, done) in after["items"].items():
        if id_ not in before["items"]:
            made.append(("shopping_add", {"item": key}))
        if done and not before["items"].get(id_, (key, False))[1]:
            made.append(("shopping_complete", {"item": key}))
    made += [("note_add", {"text": _key(text)}) for id_, text in after["notes"].items() if id_ not in before["notes"]]
    return made


def _check_changes(reports: list[dict[str, Any]], before: Snapshot, check: Check) -> None:
    """Every change the life made comes from a call it started; those not reported settled are
    the kills that landed between a store's commit and the settled call."""
    def call(report: dict[str, Any]) -> tuple[int, str, tuple[tuple[str, object], ...]]:
        return report["turn"], report["tool"], tuple(sorted(_named(report["tool"], report["args"]).items()))

    started = [call(r) for r in reports if r.get("event") == "started"]
    settled = {call(r) for r in reports if r.get("event") in ("ack", "called")}
    for tool, names in _changes(before, check.snapshot):
        check.changes += 1
        match = next((s for s in started if s[1] == tool and s[2] == tuple(sorted(names.items()))), None)
        if match is None:
            check.failures.append(f"{tool}{names} was made in a life that started no such call")
        elif match not in settled:
            check.unacknowledged_changes += 1


def _named(tool: str, args: dict[str, Any]) -> dict[str, object]:
    """The arguments as the store keeps them."""
    if tool == "timer_start":
        return {"label": _label(args.get("label")), "duration_s": args.get("duration_s")}
    if tool == "timer_cancel":
        return {"label": _label(args.get("label"))}
    key = "item" if tool.startswith("shopping") else "text"
    return {key: _key(args.get(key))}


def _has(entries: list[dict[str, Any]], **want: object) -> bool:
    return any(all(e.get(k) == v for k, v in want.items()) for e in entries)


def _check_reports(reports: list[dict[str, Any]], entries: list[dict[str, Any]], store: sqlite3.Connection, check: Check) -> None:
    by_turn: dict[int, list[dict[str, Any]]] = {}
    for entry in entries:
        by_turn.setdefault(entry["turn"], []).append(entry)
    for i, report in enumerate(reports):
        kind, turn = report.get("event"), report.get("turn", 0)
        mine = by_turn.get(turn, [])
        if kind == "words":
            check.words += 1
            check.turns.add(turn)
            if not _has(mine, role="user", text=report["text"], status="heard"):
                check.failures.append(f"turn {turn}: the words {report['text']!r} are not in the record")
        elif kind == "heard":
            check.units += 1
            check.turns.add(turn)
            if not _has(mine, role="assistant", text=report["text"], status="spoken"):
                check.failures.append(f"turn {turn}: the unit {report['text']!r} heard is not in the record as spoken")
        elif kind == "ack":
            check.acknowledged += 1
            check.turns.add(turn)
            tool, args = report["tool"], report["args"]
            on_record = all(
                any(e["role"] == "tool" and e["text"] == tool and e["status"] == status and e["data"].get("args") == args for e in mine)
                for status in ("started", "ok")
            )
            in_store = _in_store(store, tool, report["data"])
            if on_record and in_store:
                check.found += 1
            else:
                check.failures.append(f"turn {turn}: {tool}{args} acknowledged; in the record: {on_record}, in the store: {in_store}")
            later = reports[i + 1 :]
            if any(r.get("event") == "heard" and r.get("turn") == turn for r in later):
                check.heard_confirmations += 1


def _in_store(store: sqlite3.Connection, tool: str, data: dict[str, Any]) -> bool:
    """Whether the change a settled call reported is there (rows are never deleted by the script;
    a later change of state by another call keeps the row)."""
    if tool == "timer_start":
        row = store.execute("SELECT label, duration_s FROM timers WHERE id = ?", (data["id"],)).fetchone()
        return row is not None and (row["label"], row["duration_s"]) == (data["label"], data["duration_s"])
    if tool == "timer_cancel":
        ids = [t["id"] for t in data["cancelled"]]
        states = [r["state"] for r in store.execute(f"SELECT state FROM timers WHERE id IN ({','.join('?' * len(ids))})", ids)]
        return len(states) == len(ids) and set(states) == {"cancelled"}
    if tool == "shopping_add":
        return store.execute("SELECT 1 FROM shopping_items WHERE key = ?", (_key(data["item"]),)).fetchone() is not None
    if tool == "shopping_complete":
        done = "SELECT 1 FROM shopping_items WHERE key = ? AND done_at IS NOT NULL"
        return store.execute(done, (_key(data["item"]),)).fetchone() is not None
    if tool == "note_add":
        row = store.execute("SELECT text FROM notes WHERE id = ?", (data["id"],)).fetchone()
        return row is not None and row["text"] == data["text"]
    raise ValueError(f"the kill test does not know how to find a {tool} change")


def _check_rows(entries: list[dict[str, Any]], store: sqlite3.Connection, check: Check) -> None:
    """Every row (and every change of state) was made by a call the record has: none without its turn."""
    started = [(e["text"], e["data"].get("args", {})) for e in entries if e["role"] == "tool" and e["status"] == "started"]

    def called(tool: str, **want: object) -> bool:
        return any(name == tool and all(want_value(args, k) == v for k, v in want.items()) for name, args in started)

    def want_value(args: dict[str, Any], key: str) -> object:
        value = args.get(key)
        return _label(value) if key == "label" else _key(value) if key in ("item", "text") else value

    for row in store.execute("SELECT id, label, duration_s, state FROM timers"):
        check.rows += 1
        if not called("timer_start", label=row["label"], duration_s=row["duration_s"]):
            check.failures.append(f"timer {row['id']} ({row['label']}) has no timer_start on record")
        if row["state"] == "cancelled" and not (called("timer_cancel", label=row["label"]) or called("timer_cancel", all=True)):
            check.failures.append(f"timer {row['id']} ({row['label']}) was cancelled by no call on record")
    for row in store.execute("SELECT id, key, done_at FROM shopping_items"):
        check.rows += 1
        if not called("shopping_add", item=row["key"]):
            check.failures.append(f"shopping item {row['key']!r} has no shopping_add on record")
        if row["done_at"] is not None and not called("shopping_complete", item=row["key"]):
            check.failures.append(f"shopping item {row['key']!r} was ticked off by no call on record")
    for row in store.execute("SELECT id, text FROM notes"):
        check.rows += 1
        if not called("note_add", text=_key(row["text"])):
            check.failures.append(f"note {row['id']} has no note_add on record")
