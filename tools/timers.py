"""Kitchen timers: persisted in SQLite so they survive a restart, rung by an asyncio watcher.

Times are wall-clock (``clock()`` seconds since the epoch) rather than monotonic because a
timer has to mean the same thing after the speaker has been unplugged and plugged back in.
The store is used from the event-loop thread only; its calls are short enough to run inline.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import math
import sqlite3
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from tools.db import connect
from tools.spec import ToolOutput, ToolSpec, optional_text_argument
from tools.spoken import Language, check_language, has_final_consonant, join_words, subject, topic

log = logging.getLogger(__name__)

MAX_DURATION_S = 24 * 3600
"""The longest a kitchen timer runs (a dough proving overnight fits; a week-long one is a mistake),
both when started and after any adjustment."""

LABEL_MAX_CHARS = 60
"""A timer's label is a few words ("pasta", "the second tray of cookies"), said back in every answer."""

TimerState = Literal["running", "paused", "done", "cancelled"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS timers (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    label TEXT,
    duration_s INTEGER NOT NULL,
    started_at REAL NOT NULL,
    ends_at REAL NOT NULL,
    paused_remaining_s REAL,
    state TEXT NOT NULL CHECK (state IN ('running', 'paused', 'done', 'cancelled'))
);
CREATE INDEX IF NOT EXISTS timers_active ON timers(state, ends_at);
"""


@dataclass(frozen=True)
class Timer:
    """One kitchen timer as stored."""

    id: int
    """Row id, stable across restarts."""
    label: str | None
    """What it is for ("pasta"), lower-cased; None for an unnamed timer."""
    duration_s: int
    """The duration it was started with (adjustments are not added here)."""
    started_at: float
    """Wall-clock time it was started."""
    ends_at: float
    """Wall-clock time it ends while running; meaningless while paused (see paused_remaining_s)."""
    paused_remaining_s: float | None
    """Seconds left when it was paused; None unless paused."""
    state: TimerState
    """running, paused, done or cancelled."""
    ended_while_off: bool = False
    """Set on timers handed to on_done at start-up: they ended while hearth was not running."""

    def remaining_s(self, now: float) -> float:
        """Seconds left at ``now`` (never negative)."""
        if self.state == "paused":
            return max(0.0, self.paused_remaining_s or 0.0)
        if self.state == "running":
            return max(0.0, self.ends_at - now)
        return 0.0

    @property
    def name(self) -> str:
        """How the timer is spoken of: "pasta timer", or "5 minute timer" when unnamed."""
        return self.spoken_name("en")

    def spoken_name(self, language: Language) -> str:
        """``name`` in ``language``: "파스타 타이머", or "5분 타이머" when unnamed."""
        word = "타이머" if language == "ko" else "timer"
        if self.label:
            return f"{self.label} {word}"
        return f"{say_duration(self.duration_s, unit_form='adjective', language=language)} {word}"


class TimerError(Exception):
    """A timer request that cannot be carried out; the message is spoken."""

    def __init__(
        self,
        message: str,
        code: str,
        labels: list[str] | None = None,
        timers: list[Timer] | None = None,
        key: str | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        """Short machine-readable reason: no_timers, not_found, ambiguous, exists, not_paused, not_running."""
        self.labels = labels or []
        """The timers the user could have meant, as spoken names."""
        self.timers = timers or []
        """Those timers themselves, so the reason can be said again in another language."""
        self.key = key
        """The label asked for (normalised), for not_found and exists."""


def say_duration(
    seconds: float, unit_form: Literal["plural", "adjective"] = "plural", language: Language = "en"
) -> str:
    """A duration for speech: 4500 → "1 hour 15 minutes", 90 → "1 minute 30 seconds" / "1분 30초".

    ``unit_form="adjective"`` gives "5 minute" for "a 5 minute timer"; Korean has one form.
    """
    total = max(0, int(math.ceil(seconds - 1e-9)))
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    if language == "ko":
        if total == 0:
            return "0초"
        return " ".join(f"{amount}{unit}" for amount, unit in ((hours, "시간"), (minutes, "분"), (secs, "초")) if amount)
    if total == 0:
        return "0 seconds"
    parts = []
    for amount, unit in ((hours, "hour"), (minutes, "minute"), (secs, "second")):
        if amount:
            plural = amount != 1 and unit_form == "plural"
            parts.append(f"{amount} {unit}{'s' if plural else ''}")
    return " ".join(parts)


_ORDINALS: dict[str, tuple[str, ...]] = {
    "en": ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth"),
    "ko": ("첫 번째", "두 번째", "세 번째", "네 번째", "다섯 번째", "여섯 번째", "일곱 번째", "여덟 번째", "아홉 번째", "열 번째"),
}
_LAST = {"last", "latest", "newest", "마지막", "마지막 번째"}


def spoken_names(timers: list[Timer], language: Language) -> dict[int, str]:
    """Each timer's name as spoken beside the others: two unnamed 5 minute timers are "the first 5
    minute timer" and "the second 5 minute timer" (in the order they were started)."""
    names = {t.id: t.spoken_name(language) for t in timers}
    counts = Counter(names.values())
    seen: Counter[str] = Counter()
    ordinals = _ORDINALS["ko" if language == "ko" else "en"]
    ordered: dict[int, str] = {}
    for timer in sorted(timers, key=lambda t: t.id):  # the order they were started in
        name = names[timer.id]
        ordered[timer.id] = f"{ordinals[seen[name]]} {name}" if counts[name] > 1 and seen[name] < len(ordinals) else name
        seen[name] += 1
    return {timer.id: ordered[timer.id] for timer in timers}


def _ordinal_index(key: str) -> int | None:
    """0 for "first" / "첫 번째", 1 for "second", -1 for "last"; None when ``key`` is no ordinal."""
    squeezed = key.replace(" ", "")
    if key in _LAST or squeezed in {k.replace(" ", "") for k in _LAST}:
        return -1
    for ordinals in _ORDINALS.values():
        for index, word in enumerate(ordinals):
            if squeezed in (word.replace(" ", ""), word.replace(" ", "") + "거", word.replace(" ", "") + "것"):
                return index
    return None


def _norm_label(label: str | None) -> str | None:
    if label is None:
        return None
    words = label.lower().split()
    # "pasta timer" and "pasta" are the same timer; the word is added back when speaking.
    if len(words) > 1 and words[-1] == "timer":
        words = words[:-1]
    return " ".join(words) or None


class TimerStore:
    """Timers in a SQLite file; call ``open()`` before use and ``close()`` after."""

    def __init__(self, path: Path, clock: Callable[[], float] = time.time) -> None:
        self.path = Path(path)
        self.clock = clock
        self._conn: sqlite3.Connection | None = None
        self._listeners: list[Callable[[], None]] = []

    def open(self) -> None:
        self._conn = connect(self.path, _SCHEMA)
        log.info("timer store open at %s", self.path)

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def subscribe(self, listener: Callable[[], None]) -> None:
        """Call ``listener`` after every change (the watcher re-plans its sleep)."""
        self._listeners.append(listener)

    def unsubscribe(self, listener: Callable[[], None]) -> None:
        with contextlib.suppress(ValueError):
            self._listeners.remove(listener)

    @property
    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            raise RuntimeError("TimerStore.open() has not been called")
        return self._conn

    def _changed(self) -> None:
        for listener in list(self._listeners):
            listener()

    def _get(self, timer_id: int) -> Timer:
        row = self.conn.execute("SELECT * FROM timers WHERE id = ?", (timer_id,)).fetchone()
        return _row_to_timer(row)

    # -- queries ---------------------------------------------------------------

    def active(self) -> list[Timer]:
        """Running and paused timers, soonest first."""
        rows = self.conn.execute(
            "SELECT * FROM timers WHERE state IN ('running', 'paused') ORDER BY ends_at, id"
        ).fetchall()
        return sorted((_row_to_timer(r) for r in rows), key=lambda t: (t.remaining_s(self.clock()), t.id))

    def due(self) -> list[Timer]:
        """Running timers whose end has passed, in the order they ended."""
        rows = self.conn.execute(
            "SELECT * FROM timers WHERE state = 'running' AND ends_at <= ? ORDER BY ends_at, id", (self.clock(),)
        ).fetchall()
        return [_row_to_timer(r) for r in rows]

    def next_end(self) -> float | None:
        """When the next running timer ends, or None."""
        row = self.conn.execute("SELECT MIN(ends_at) FROM timers WHERE state = 'running'").fetchone()
        return row[0]

    def resolve(self, label: str | None) -> Timer:
        """The one active timer ``label`` means; with no label, the only one there is."""
        timers = self.active()
        if not timers:
            raise TimerError("There are no timers running.", "no_timers")
        key = _norm_label(label)
        names = list(spoken_names(timers, "en").values())
        if key is not None and (index := _ordinal_index(key)) is not None:
            # "the first one": of the timers there are, in the order they were started.
            ordered = sorted(timers, key=lambda t: t.id)
            if -len(ordered) <= index < len(ordered):
                return ordered[index]
        if key is None:
            if len(timers) == 1:
                return timers[0]
            raise TimerError(
                f"You have {len(timers)} timers: {join_words(names, 'en')}. Which one?", "ambiguous", names, timers
            )
        for timer in timers:
            if timer.label == key:
                return timer
        by_length = [t for t in timers if t.label is None and key in (
            say_duration(t.duration_s, unit_form="adjective"), say_duration(t.duration_s, language="ko"))]
        if len(by_length) == 1:
            return by_length[0]  # "the 5 minute timer", when only one unnamed timer is that long
        raise TimerError(
            f"There's no {key} timer. You have {join_words(['the ' + n for n in names], 'en')}.",
            "not_found",
            names,
            timers,
            key,
        )

    # -- changes ---------------------------------------------------------------

    def start(self, duration_s: int, label: str | None = None) -> Timer:
        if not 0 < duration_s <= MAX_DURATION_S:
            raise ValueError(f"duration_s out of range: {duration_s}")
        key = _norm_label(label)
        if key is not None and any(t.label == key for t in self.active()):
            raise TimerError(f"There's already a {key} timer.", "exists", [f"{key} timer"], key=key)
        now = self.clock()
        cur = self.conn.execute(
            "INSERT INTO timers (label, duration_s, started_at, ends_at, state) VALUES (?, ?, ?, ?, 'running')",
            (key, duration_s, now, now + duration_s),
        )
        timer = self._get(cur.lastrowid)
        log.info("timer %d started: %s, %d s", timer.id, key, duration_s)
        self._changed()
        return timer

    def cancel_targets(self, label: str | None = None, all: bool = False) -> list[Timer]:
        """What :meth:`cancel` with these arguments would cancel, changing nothing (TimerError as it)."""
        if all:
            timers = self.active()
            if not timers:
                raise TimerError("There are no timers running.", "no_timers")
            return timers
        return [self.resolve(label)]

    def cancel(self, label: str | None = None, all: bool = False) -> list[Timer]:
        """Cancel one timer, or every active one with ``all``; returns what was cancelled."""
        timers = self.cancel_targets(label, all)
        self.conn.executemany("UPDATE timers SET state = 'cancelled' WHERE id = ?", [(t.id,) for t in timers])
        self._changed()
        return [dataclasses.replace(t, state="cancelled") for t in timers]

    def status(self, label: str | None = None) -> list[Timer]:
        """One timer when labelled (or when there is only one), else every active timer."""
        if label is None:
            return self.active()
        return [self.resolve(label)]

    def adjust(self, label: str | None, delta_s: int) -> Timer:
        """Add (or with a negative delta, take away) time; never below zero left, nor above
        :data:`MAX_DURATION_S` (TimerError "too_long")."""
        timer = self.resolve(label)
        now = self.clock()
        left = max(0.0, timer.remaining_s(now) + delta_s)
        if left > MAX_DURATION_S:
            raise TimerError(
                f"A timer can run for at most {say_duration(MAX_DURATION_S)}; the {timer.name} has "
                f"{say_duration(timer.remaining_s(now))} left.", "too_long", [timer.name], [timer])
        if timer.state == "paused":
            self.conn.execute("UPDATE timers SET paused_remaining_s = ? WHERE id = ?", (left, timer.id))
        else:
            ends_at = max(now, timer.ends_at + delta_s)
            self.conn.execute("UPDATE timers SET ends_at = ? WHERE id = ?", (ends_at, timer.id))
        self._changed()
        return self._get(timer.id)

    def pause(self, label: str | None = None) -> Timer:
        timer = self.resolve(label)
        if timer.state == "paused":
            raise TimerError(f"The {timer.name} is already paused.", "not_running", [timer.name], [timer])
        left = timer.remaining_s(self.clock())
        self.conn.execute(
            "UPDATE timers SET state = 'paused', paused_remaining_s = ? WHERE id = ?", (left, timer.id)
        )
        self._changed()
        return self._get(timer.id)

    def resume(self, label: str | None = None) -> Timer:
        if label is None:
            # "resume" with several timers but one paused can only mean that one.
            paused = [t for t in self.active() if t.state == "paused"]
            if len(paused) == 1:
                timer = paused[0]
            else:
                timer = self.resolve(None)
        else:
            timer = self.resolve(label)
        if timer.state != "paused":
            raise TimerError(f"The {timer.name} isn't paused.", "not_paused", [timer.name], [timer])
        ends_at = self.clock() + (timer.paused_remaining_s or 0.0)
        self.conn.execute(
            "UPDATE timers SET state = 'running', ends_at = ?, paused_remaining_s = NULL WHERE id = ?",
            (ends_at, timer.id),
        )
        self._changed()
        return self._get(timer.id)

    def mark_done(self, timer_id: int) -> bool:
        """Mark a running timer done; False if it was not running (already rung, cancelled)."""
        cur = self.conn.execute("UPDATE timers SET state = 'done' WHERE id = ? AND state = 'running'", (timer_id,))
        return cur.rowcount == 1


def _row_to_timer(row: sqlite3.Row) -> Timer:
    return Timer(
        id=row["id"],
        label=row["label"],
        duration_s=row["duration_s"],
        started_at=row["started_at"],
        ends_at=row["ends_at"],
        paused_remaining_s=row["paused_remaining_s"],
        state=row["state"],
    )


def _object(word: str) -> str:
    return f"{word}{'을' if has_final_consonant(word) else '를'}"


def done_message(timer: Timer, now: float, language: str = "en") -> str:
    """What to say when a timer rings, in ``language``."""
    lang = check_language(language)
    name = timer.spoken_name(lang)
    if timer.ended_while_off:
        late = max(1.0, now - timer.ends_at)
        # Seconds are noise once it is minutes late: "9 minutes ago", not "9 minutes 12 seconds ago".
        ago = say_duration(late if late < 60 else round(late / 60) * 60, language=lang)
        if lang == "ko":
            return f"꺼져 있는 동안 {subject(name)} 끝났어요. {ago} 전이에요."
        return f"{_cap(name)} finished while I was off, {ago} ago."
    if lang == "ko":
        return f"{subject(name)} 끝났어요."
    return f"{_cap(name)} is done."


class TimerWatcher:
    """Sleeps until the next timer ends and calls ``on_done`` once per finished timer.

    A timer is marked done in SQLite before ``on_done`` runs, so a crash or restart
    mid-ring does not ring it again.  Timers found already finished at start-up ended
    while hearth was off: they ring once, with ``ended_while_off`` set.
    """

    def __init__(
        self,
        store: TimerStore,
        on_done: Callable[[Timer], Awaitable[None]],
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.store = store
        self.on_done = on_done
        self._sleep = sleep
        self._wake: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Start watching (needs a running event loop)."""
        if self._task is not None:
            return
        self._wake = asyncio.Event()
        self.store.subscribe(self._poke)
        self._task = asyncio.create_task(self._run(), name="timer-watcher")

    async def stop(self) -> None:
        self.store.unsubscribe(self._poke)
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    def _poke(self) -> None:
        if self._wake is not None:
            self._wake.set()

    async def _ring_due(self, ended_while_off: bool) -> None:
        for timer in self.store.due():
            if not self.store.mark_done(timer.id):
                continue
            done = dataclasses.replace(timer, state="done", ended_while_off=ended_while_off)
            log.info("timer %d done%s", timer.id, " (ended while off)" if ended_while_off else "")
            try:
                await self.on_done(done)
            except Exception:
                # One failed announcement must not stop the other timers ringing.
                log.exception("on_done failed for timer %d", timer.id)

    async def _run(self) -> None:
        assert self._wake is not None
        await self._ring_due(ended_while_off=True)
        while True:
            # Clear before planning so a change made while ringing is not lost.
            self._wake.clear()
            await self._ring_due(ended_while_off=False)
            next_end = self.store.next_end()
            waiters: set[asyncio.Task[object]] = {asyncio.create_task(self._wake.wait())}
            if next_end is not None:
                delay = max(0.0, next_end - self.store.clock())
                waiters.add(asyncio.create_task(self._sleep(delay)))
            try:
                await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for waiter in waiters:
                    waiter.cancel()


# -- tools -----------------------------------------------------------------------


Label = Annotated[str | None, optional_text_argument(LABEL_MAX_CHARS)]
"""A timer's label: blank means none given (the only timer, or an unnamed one)."""


class TimerStartArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    duration_s: int = Field(gt=0, le=MAX_DURATION_S, description="Length of the timer in seconds.")
    label: Label = Field(default=None, description="What the timer is for, e.g. pasta.")


class TimerCancelArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    label: Label = Field(default=None, description="Which timer; leave out if there is only one.")
    all: bool = Field(default=False, description="Cancel every timer.")


class TimerLabelArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    label: Label = Field(default=None, description="Which timer; leave out if there is only one.")


class TimerAdjustArgs(BaseModel):
    """``delta_s`` is bounded by a day either way: no timer runs longer (the store also refuses an
    adjustment that would leave more than that), and an unbounded integer would be spoken as a
    duration of a hundred digits."""

    model_config = ConfigDict(extra="forbid")
    label: Label = Field(default=None, description="Which timer; leave out if there is only one.")
    delta_s: int = Field(ge=-MAX_DURATION_S, le=MAX_DURATION_S, description="Seconds to add; negative takes time away.")


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _timer_data(timer: Timer, now: float) -> dict[str, object]:
    return {
        "id": timer.id,
        "label": timer.label,
        "state": timer.state,
        "duration_s": timer.duration_s,
        "remaining_s": int(math.ceil(timer.remaining_s(now) - 1e-9)),
    }


def _error(exc: TimerError, language: Language) -> ToolOutput:
    text = _korean_error(exc) if language == "ko" else exc.args[0]
    return ToolOutput(text, {"error": exc.code, "timers": exc.labels})


def _korean_error(exc: TimerError) -> str:
    """The store's (English) reason said again in Korean, from its code and the timers involved."""
    names = list(spoken_names(exc.timers, "ko").values()) if exc.code in ("ambiguous", "not_found") else [
        t.spoken_name("ko") for t in exc.timers
    ]
    if exc.code == "ambiguous":
        return f"타이머가 {len(names)}개 있어요. {join_words(names, 'ko')} 중에 어느 타이머 말씀이세요?"
    if exc.code == "not_found":
        return f"{exc.key} 타이머는 없어요. 지금 있는 타이머는 {join_words(names, 'ko')}예요."
    if exc.code == "exists":
        return f"{exc.key} 타이머가 이미 있어요."
    if exc.code == "not_running" and names:
        return f"{topic(names[0])} 이미 멈춰 있어요."
    if exc.code == "not_paused" and names:
        return f"{topic(names[0])} 멈춰 있지 않아요."
    if exc.code == "too_long":
        return f"타이머는 최대 {say_duration(MAX_DURATION_S, language='ko')}까지 맞출 수 있어요."
    return "지금 맞춰 둔 타이머가 없어요."


def _left_sentence(timer: Timer, now: float, language: Language, name: str | None = None) -> str:
    left = say_duration(timer.remaining_s(now), language=language)
    name = name or timer.spoken_name(language)
    if language == "ko":
        paused = "멈춰 있고 " if timer.state == "paused" else ""
        return f"{topic(name)} {paused}{left} 남았어요."
    if timer.state == "paused":
        return f"The {name} is paused with {left} left."
    return f"The {name} has {left} left."


def timer_tools(store: TimerStore, language: str = "en") -> list[ToolSpec]:
    """The timer tools, bound to ``store`` (which must be open), answering in ``language``."""
    lang = check_language(language)
    ko = lang == "ko"

    def duration(seconds: float) -> str:
        return say_duration(seconds, language=lang)

    def started(label: str | None, duration_s: int) -> str:
        if ko:
            if label:
                return f"{label} 타이머를 {duration(duration_s)}에 맞췄어요."
            return f"{duration(duration_s)} 타이머를 맞췄어요."
        prefix = _cap(f"{label} timer") if label else "Timer"
        return f"{prefix} set for {duration(duration_s)}."

    def foretell_start(args: TimerStartArgs) -> str:
        return started(_norm_label(args.label), args.duration_s)

    async def start(args: TimerStartArgs) -> ToolOutput:
        try:
            timer = store.start(args.duration_s, args.label)
        except TimerError as exc:
            return _error(exc, lang)
        return ToolOutput(started(timer.label, timer.duration_s), _timer_data(timer, store.clock()))

    def cancelled(timers: list[Timer]) -> str:
        if len(timers) == 1:
            return f"{_object(timers[0].spoken_name(lang))} 취소했어요." if ko else f"{_cap(timers[0].name)} cancelled."
        return f"타이머 {len(timers)}개를 모두 취소했어요." if ko else f"All {len(timers)} timers cancelled."

    def foretell_cancel(args: TimerCancelArgs) -> str:
        try:
            timers = store.cancel_targets(args.label, all=args.all)
        except TimerError as exc:
            return _error(exc, lang).text
        return cancelled(timers)

    async def cancel(args: TimerCancelArgs) -> ToolOutput:
        try:
            timers = store.cancel(args.label, all=args.all)
        except TimerError as exc:
            return _error(exc, lang)
        now = store.clock()
        return ToolOutput(cancelled(timers), {"cancelled": [_timer_data(t, now) for t in timers]})

    async def status(args: TimerLabelArgs) -> ToolOutput:
        try:
            timers = store.status(args.label)
        except TimerError as exc:
            return _error(exc, lang)
        now = store.clock()
        data = {"timers": [_timer_data(t, now) for t in timers]}
        if not timers:
            return ToolOutput("지금 맞춰 둔 타이머가 없어요." if ko else "No timers are running.", data)
        named = spoken_names(timers, lang)
        sentences = [_left_sentence(t, now, lang, named[t.id]) for t in timers]
        if len(timers) > 1:
            sentences.insert(0, f"타이머가 {len(timers)}개 있어요." if ko else f"You have {len(timers)} timers.")
        return ToolOutput(" ".join(sentences), data)

    async def adjust(args: TimerAdjustArgs) -> ToolOutput:
        try:
            timer = store.adjust(args.label, args.delta_s)
        except TimerError as exc:
            return _error(exc, lang)
        now = store.clock()
        amount = duration(abs(args.delta_s))
        left = duration(timer.remaining_s(now))
        if ko:
            name = timer.spoken_name(lang)
            change = f"{name}에 {_object(amount)} 더했어요" if args.delta_s >= 0 else f"{name}에서 {_object(amount)} 뺐어요"
            return ToolOutput(f"{change}. {left} 남았어요.", _timer_data(timer, now))
        change = f"Added {amount} to" if args.delta_s >= 0 else f"Took {amount} off"
        return ToolOutput(f"{change} the {timer.name}; {left} left.", _timer_data(timer, now))

    async def pause(args: TimerLabelArgs) -> ToolOutput:
        try:
            timer = store.pause(args.label)
        except TimerError as exc:
            return _error(exc, lang)
        now = store.clock()
        left = duration(timer.remaining_s(now))
        if ko:
            return ToolOutput(f"{_object(timer.spoken_name(lang))} 멈췄어요. {left} 남았어요.", _timer_data(timer, now))
        return ToolOutput(f"{_cap(timer.name)} paused with {left} left.", _timer_data(timer, now))

    async def resume(args: TimerLabelArgs) -> ToolOutput:
        try:
            timer = store.resume(args.label)
        except TimerError as exc:
            return _error(exc, lang)
        now = store.clock()
        left = duration(timer.remaining_s(now))
        if ko:
            return ToolOutput(f"{_object(timer.spoken_name(lang))} 다시 시작했어요. {left} 남았어요.", _timer_data(timer, now))
        return ToolOutput(f"{_cap(timer.name)} resumed; {left} left.", _timer_data(timer, now))

    return [
        ToolSpec("timer_start", "Start a kitchen timer, optionally named.", TimerStartArgs, start, "act", foretell=foretell_start),
        ToolSpec("timer_cancel", "Cancel a timer, or all timers.", TimerCancelArgs, cancel, "act", foretell=foretell_cancel),
        ToolSpec("timer_status", "Say how long is left on one or all timers.", TimerLabelArgs, status, "read",
                 speculable=True, stale_after_s=0.0),
        ToolSpec("timer_adjust", "Add time to a timer or take time off it.", TimerAdjustArgs, adjust, "act"),
        ToolSpec("timer_pause", "Pause a running timer.", TimerLabelArgs, pause, "act"),
        ToolSpec("timer_resume", "Resume a paused timer.", TimerLabelArgs, resume, "act"),
    ]
