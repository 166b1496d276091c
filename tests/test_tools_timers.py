"""Timers: the store, the tools and the watcher, all driven by a fake clock."""

from __future__ import annotations

import asyncio
import dataclasses
import sqlite3
from pathlib import Path

import pytest
from pydantic import ValidationError

from tools.timers import (
    Timer,
    TimerError,
    TimerStore,
    TimerWatcher,
    done_message,
    say_duration,
    timer_tools,
)


class FakeClock:
    def __init__(self, t: float = 1_000_000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t

    def advance(self, seconds: float) -> None:
        self.t += seconds


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def store(tmp_path: Path, clock: FakeClock):
    s = TimerStore(tmp_path / "hearth.db", clock=clock)
    s.open()
    yield s
    s.close()


@pytest.fixture
def tools(store: TimerStore):
    return {t.name: t for t in timer_tools(store)}


async def call(tools, name: str, **kwargs):
    spec = tools[name]
    return await spec.run(spec.args.model_validate(kwargs))


@pytest.mark.parametrize(
    ("seconds", "spoken"),
    [(90, "1 minute 30 seconds"), (4500, "1 hour 15 minutes"), (660, "11 minutes"), (1, "1 second"),
     (3600, "1 hour"), (3661, "1 hour 1 minute 1 second"), (0, "0 seconds"), (269.2, "4 minutes 30 seconds")],
)
def test_say_duration(seconds: float, spoken: str) -> None:
    assert say_duration(seconds) == spoken


def test_constructor_does_no_io(tmp_path: Path) -> None:
    TimerStore(tmp_path / "sub" / "hearth.db")
    assert not (tmp_path / "sub").exists()


def test_wal_mode(store: TimerStore) -> None:
    assert store.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_tool_names_and_side_effects(tools) -> None:
    assert set(tools) == {"timer_start", "timer_cancel", "timer_status", "timer_adjust", "timer_pause", "timer_resume"}
    assert tools["timer_status"].side_effects == "read"
    assert all(t.side_effects == "act" for n, t in tools.items() if n != "timer_status")
    assert set(tools["timer_start"].schema()["properties"]) == {"duration_s", "label"}
    assert set(tools["timer_cancel"].schema()["properties"]) == {"label", "all"}
    assert set(tools["timer_adjust"].schema()["properties"]) == {"label", "delta_s"}


@pytest.mark.parametrize("bad", [{"duration_s": 0}, {"duration_s": 86401}, {"duration_s": 60, "extra": 1}, {}])
def test_start_args_validated(tools, bad) -> None:
    with pytest.raises(ValidationError):
        tools["timer_start"].args.model_validate(bad)


async def test_start_status_adjust(tools, clock: FakeClock) -> None:
    out = await call(tools, "timer_start", duration_s=660, label="Pasta")
    assert out.text == "Pasta timer set for 11 minutes."
    assert out.data["label"] == "pasta" and out.data["duration_s"] == 660
    clock.advance(390)
    out = await call(tools, "timer_status")
    assert out.text == "The pasta timer has 4 minutes 30 seconds left."
    assert out.data["timers"][0]["remaining_s"] == 270
    out = await call(tools, "timer_adjust", delta_s=120)
    assert out.text == "Added 2 minutes to the pasta timer; 6 minutes 30 seconds left."
    assert out.data["remaining_s"] == 390
    out = await call(tools, "timer_adjust", label="pasta timer", delta_s=-10_000)
    assert out.data["remaining_s"] == 0


async def test_unlabelled_timer(tools, clock: FakeClock) -> None:
    out = await call(tools, "timer_start", duration_s=600)
    assert out.text == "Timer set for 10 minutes."
    out = await call(tools, "timer_status", label=None)
    assert out.text == "The 10 minute timer has 10 minutes left."


async def test_pause_resume(tools, clock: FakeClock) -> None:
    await call(tools, "timer_start", duration_s=300, label="eggs")
    clock.advance(100)
    out = await call(tools, "timer_pause")
    assert out.text == "Eggs timer paused with 3 minutes 20 seconds left."
    clock.advance(1000)
    out = await call(tools, "timer_status", label="eggs")
    assert out.text == "The eggs timer is paused with 3 minutes 20 seconds left."
    out = await call(tools, "timer_pause")
    assert out.data["error"] == "not_running"
    out = await call(tools, "timer_resume")
    assert out.data["remaining_s"] == 200 and out.data["state"] == "running"
    clock.advance(50)
    out = await call(tools, "timer_status")
    assert out.data["timers"][0]["remaining_s"] == 150


async def test_ambiguity_lists_labels(tools, clock: FakeClock) -> None:
    await call(tools, "timer_start", duration_s=600, label="pasta")
    await call(tools, "timer_start", duration_s=300, label="eggs")
    for name, extra in (("timer_cancel", {}), ("timer_pause", {}), ("timer_adjust", {"delta_s": 60}), ("timer_resume", {})):
        out = await call(tools, name, **extra)
        assert out.data["error"] == "ambiguous"
        assert "Which one?" in out.text and "pasta" in out.text and "eggs" in out.text
    out = await call(tools, "timer_status")
    assert out.text == "You have 2 timers. The eggs timer has 5 minutes left. The pasta timer has 10 minutes left."
    out = await call(tools, "timer_status", label="rice")
    assert out.data["error"] == "not_found" and "pasta" in out.text
    out = await call(tools, "timer_start", duration_s=60, label="PASTA ")
    assert out.data["error"] == "exists"


async def test_cancel(tools) -> None:
    out = await call(tools, "timer_cancel")
    assert out.data["error"] == "no_timers"
    await call(tools, "timer_start", duration_s=600, label="pasta")
    await call(tools, "timer_start", duration_s=300, label="eggs")
    out = await call(tools, "timer_cancel", label="eggs")
    assert out.text == "Eggs timer cancelled."
    await call(tools, "timer_start", duration_s=300, label="rice")
    out = await call(tools, "timer_cancel", all=True)
    assert out.text == "All 2 timers cancelled."
    out = await call(tools, "timer_status")
    assert out.text == "No timers are running."


async def test_resume_only_paused_one_without_label(tools) -> None:
    await call(tools, "timer_start", duration_s=600, label="pasta")
    await call(tools, "timer_start", duration_s=300, label="eggs")
    await call(tools, "timer_pause", label="eggs")
    out = await call(tools, "timer_resume")
    assert out.data["label"] == "eggs"


def test_persists_across_restart(tmp_path: Path, clock: FakeClock) -> None:
    path = tmp_path / "hearth.db"
    first = TimerStore(path, clock=clock)
    first.open()
    first.start(600, "pasta")
    first.start(300, "eggs")
    first.pause("eggs")
    first.close()
    clock.advance(120)
    second = TimerStore(path, clock=clock)
    second.open()
    timers = {t.label: t for t in second.active()}
    assert timers["pasta"].remaining_s(clock()) == 480
    assert timers["eggs"].state == "paused" and timers["eggs"].remaining_s(clock()) == 300
    second.close()


def test_resolve_errors(store: TimerStore) -> None:
    with pytest.raises(TimerError) as info:
        store.resolve(None)
    assert info.value.code == "no_timers"


def fake_sleep(clock: FakeClock):
    async def sleep(seconds: float) -> None:
        clock.advance(seconds)
        await asyncio.sleep(0)

    return sleep


async def wait_for(predicate, steps: int = 1000) -> None:
    for _ in range(steps):
        if predicate():
            return
        await asyncio.sleep(0)
    raise AssertionError("condition not reached")


async def test_watcher_rings_each_timer_once_in_order(store: TimerStore, clock: FakeClock) -> None:
    rung: list[Timer] = []

    async def on_done(timer: Timer) -> None:
        rung.append(timer)

    store.start(120, "pasta")
    store.start(60, "eggs")
    watcher = TimerWatcher(store, on_done, sleep=fake_sleep(clock))
    watcher.start()
    try:
        await wait_for(lambda: len(rung) == 2)
        for _ in range(50):
            await asyncio.sleep(0)
    finally:
        await watcher.stop()
    assert [t.label for t in rung] == ["eggs", "pasta"]
    assert not any(t.ended_while_off for t in rung)
    assert all(t.state == "done" for t in rung)
    assert store.active() == []
    assert done_message(rung[0], clock()) == "Eggs timer is done."


async def test_watcher_replans_when_timers_change(store: TimerStore, clock: FakeClock) -> None:
    rung: list[str | None] = []
    sleeps: list[float] = []
    release = asyncio.Event()

    async def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        await release.wait()
        clock.advance(seconds)

    async def on_done(timer: Timer) -> None:
        rung.append(timer.label)

    store.start(600, "pasta")
    watcher = TimerWatcher(store, on_done, sleep=sleep)
    watcher.start()
    try:
        await wait_for(lambda: sleeps == [600])
        store.start(30, "tea")
        await wait_for(lambda: sleeps == [600, 30])
        release.set()
        await wait_for(lambda: rung == ["tea", "pasta"])
    finally:
        await watcher.stop()


async def test_timer_that_ended_while_off_rings_once(tmp_path: Path, clock: FakeClock) -> None:
    path = tmp_path / "hearth.db"
    before = TimerStore(path, clock=clock)
    before.open()
    before.start(60, "rice")
    before.close()
    clock.advance(600)  # the speaker was unplugged

    rung: list[Timer] = []

    async def on_done(timer: Timer) -> None:
        rung.append(timer)

    for _ in range(2):  # the second start-up must not ring again
        store = TimerStore(path, clock=clock)
        store.open()
        watcher = TimerWatcher(store, on_done, sleep=fake_sleep(clock))
        watcher.start()
        for _ in range(50):
            await asyncio.sleep(0)
        await watcher.stop()
        store.close()
    assert len(rung) == 1
    assert rung[0].ended_while_off
    assert done_message(rung[0], clock()) == "Rice timer finished while I was off, 9 minutes ago."
    state = sqlite3.connect(path).execute("SELECT state FROM timers").fetchone()[0]
    assert state == "done"


async def test_cancelled_timer_does_not_ring(store: TimerStore, clock: FakeClock) -> None:
    rung: list[Timer] = []

    async def on_done(timer: Timer) -> None:
        rung.append(timer)

    store.start(60, "tea")
    store.cancel("tea")
    watcher = TimerWatcher(store, on_done, sleep=fake_sleep(clock))
    watcher.start()
    for _ in range(50):
        await asyncio.sleep(0)
    await watcher.stop()
    assert rung == []


# -- Korean ------------------------------------------------------------------------


@pytest.fixture
def ko_tools(store: TimerStore):
    return {t.name: t for t in timer_tools(store, language="ko")}


@pytest.mark.parametrize(
    ("seconds", "spoken"),
    [(90, "1분 30초"), (5400, "1시간 30분"), (600, "10분"), (30, "30초"), (3661, "1시간 1분 1초"), (0, "0초"),
     (269.2, "4분 30초")],
)
def test_say_duration_korean(seconds: float, spoken: str) -> None:
    assert say_duration(seconds, language="ko") == spoken


def test_unsupported_language_is_refused(store: TimerStore, clock: FakeClock) -> None:
    with pytest.raises(ValueError, match="unsupported language"):
        timer_tools(store, language="fr")
    timer = store.start(60, "tea")
    with pytest.raises(ValueError, match="unsupported language"):
        done_message(timer, clock(), language="fr")


async def test_korean_start_status_adjust(ko_tools, clock: FakeClock) -> None:
    out = await call(ko_tools, "timer_start", duration_s=600)
    assert out.text == "10분 타이머를 맞췄어요."
    out = await call(ko_tools, "timer_start", duration_s=660, label="파스타")
    assert out.text == "파스타 타이머를 11분에 맞췄어요."
    assert out.data["label"] == "파스타"
    clock.advance(390)
    out = await call(ko_tools, "timer_status", label="파스타")
    assert out.text == "파스타 타이머는 4분 30초 남았어요."
    out = await call(ko_tools, "timer_status")
    assert out.text == "타이머가 2개 있어요. 10분 타이머는 3분 30초 남았어요. 파스타 타이머는 4분 30초 남았어요."
    # The object particle follows the spoken amount: 2분을, 30초를.
    out = await call(ko_tools, "timer_adjust", label="파스타", delta_s=120)
    assert out.text == "파스타 타이머에 2분을 더했어요. 6분 30초 남았어요."
    out = await call(ko_tools, "timer_adjust", label="파스타 timer", delta_s=-30)
    assert out.text == "파스타 타이머에서 30초를 뺐어요. 6분 남았어요."
    assert out.data["remaining_s"] == 360


async def test_korean_pause_resume_cancel(ko_tools, clock: FakeClock) -> None:
    await call(ko_tools, "timer_start", duration_s=300, label="계란")
    clock.advance(100)
    out = await call(ko_tools, "timer_pause")
    assert out.text == "계란 타이머를 멈췄어요. 3분 20초 남았어요."
    out = await call(ko_tools, "timer_status")
    assert out.text == "계란 타이머는 멈춰 있고 3분 20초 남았어요."
    out = await call(ko_tools, "timer_pause")
    assert out.text == "계란 타이머는 이미 멈춰 있어요." and out.data["error"] == "not_running"
    out = await call(ko_tools, "timer_resume")
    assert out.text == "계란 타이머를 다시 시작했어요. 3분 20초 남았어요."
    out = await call(ko_tools, "timer_resume")
    assert out.text == "계란 타이머는 멈춰 있지 않아요." and out.data["error"] == "not_paused"
    out = await call(ko_tools, "timer_cancel", label="계란")
    assert out.text == "계란 타이머를 취소했어요."
    await call(ko_tools, "timer_start", duration_s=300, label="밥")
    await call(ko_tools, "timer_start", duration_s=60, label="차")
    out = await call(ko_tools, "timer_cancel", all=True)
    assert out.text == "타이머 2개를 모두 취소했어요."
    out = await call(ko_tools, "timer_status")
    assert out.text == "지금 맞춰 둔 타이머가 없어요."


async def test_korean_errors(ko_tools) -> None:
    out = await call(ko_tools, "timer_cancel")
    assert out.text == "지금 맞춰 둔 타이머가 없어요." and out.data["error"] == "no_timers"
    await call(ko_tools, "timer_start", duration_s=600, label="파스타")
    await call(ko_tools, "timer_start", duration_s=300, label="라면")
    out = await call(ko_tools, "timer_pause")
    assert out.text == "타이머가 2개 있어요. 라면 타이머, 파스타 타이머 중에 어느 타이머 말씀이세요?"
    assert out.data == {"error": "ambiguous", "timers": ["라면 timer", "파스타 timer"]}
    out = await call(ko_tools, "timer_status", label="밥")
    assert out.text == "밥 타이머는 없어요. 지금 있는 타이머는 라면 타이머, 파스타 타이머예요."
    assert out.data["error"] == "not_found"
    out = await call(ko_tools, "timer_start", duration_s=60, label="파스타")
    assert out.text == "파스타 타이머가 이미 있어요." and out.data["error"] == "exists"


async def test_data_is_the_same_in_both_languages(tmp_path: Path) -> None:
    answers: dict[str, list[dict]] = {}
    for language in ("en", "ko"):
        store = TimerStore(tmp_path / f"{language}.db", clock=FakeClock())
        store.open()
        tools = {t.name: t for t in timer_tools(store, language=language)}
        steps = [("timer_start", {"duration_s": 600, "label": "pasta"}), ("timer_start", {"duration_s": 60}),
                 ("timer_pause", {}), ("timer_adjust", {"label": "pasta", "delta_s": 30}),
                 ("timer_pause", {"label": "pasta"}), ("timer_resume", {"label": "pasta"}),
                 ("timer_status", {}), ("timer_status", {"label": "rice"}), ("timer_cancel", {"all": True})]
        answers[language] = [(await call(tools, name, **kwargs)).data for name, kwargs in steps]
        store.close()
    assert answers["ko"] == answers["en"]
    assert answers["en"][2]["error"] == "ambiguous"


async def test_korean_done_messages(store: TimerStore, clock: FakeClock) -> None:
    pasta = store.start(600, "파스타")
    ramen = store.start(240, "라면")
    unnamed = store.start(5400)
    # The subject particle goes on 타이머, not on the label: 파스타 타이머가, 라면 타이머가.
    assert done_message(pasta, clock(), "ko") == "파스타 타이머가 끝났어요."
    assert done_message(ramen, clock(), "ko") == "라면 타이머가 끝났어요."
    assert done_message(unnamed, clock(), "ko") == "1시간 30분 타이머가 끝났어요."
    late = dataclasses.replace(ramen, ended_while_off=True)
    assert done_message(late, ramen.ends_at + 552, "ko") == "꺼져 있는 동안 라면 타이머가 끝났어요. 9분 전이에요."
    assert done_message(late, ramen.ends_at + 552) == "라면 timer finished while I was off, 9 minutes ago."
    assert done_message(late, ramen.ends_at + 20, "ko") == "꺼져 있는 동안 라면 타이머가 끝났어요. 20초 전이에요."


async def test_two_timers_of_one_length_are_told_apart_and_picked_by_order(store: TimerStore, clock: FakeClock) -> None:
    tools = {t.name: t for t in timer_tools(store)}
    await call(tools, "timer_start", duration_s=300)
    clock.advance(60)
    await call(tools, "timer_start", duration_s=300)
    out = await call(tools, "timer_status")
    assert out.text == (
        "You have 2 timers. The first 5 minute timer has 4 minutes left. The second 5 minute timer has 5 minutes left."
    )
    out = await call(tools, "timer_cancel")
    assert out.text == "You have 2 timers: first 5 minute timer and second 5 minute timer. Which one?"
    out = await call(tools, "timer_cancel", label="first")
    assert out.text == "5 minute timer cancelled." and [t.remaining_s(clock()) for t in store.active()] == [300]


async def test_korean_names_the_order_and_takes_it(store: TimerStore, clock: FakeClock) -> None:
    tools = {t.name: t for t in timer_tools(store, "ko")}
    await call(tools, "timer_start", duration_s=300)
    clock.advance(60)
    await call(tools, "timer_start", duration_s=300)
    out = await call(tools, "timer_status")
    assert "첫 번째 5분 타이머는 4분 남았어요." in out.text and "두 번째 5분 타이머는 5분 남았어요." in out.text
    await call(tools, "timer_cancel", label="두번째")
    assert [t.remaining_s(clock()) for t in store.active()] == [240]


async def test_an_unnamed_timer_is_found_by_its_length(store: TimerStore) -> None:
    tools = {t.name: t for t in timer_tools(store)}
    await call(tools, "timer_start", duration_s=300)
    await call(tools, "timer_start", duration_s=600)
    out = await call(tools, "timer_cancel", label="10 minute")
    assert out.text == "10 minute timer cancelled."


async def test_the_last_timer_started_is_the_one_an_undo_cancels(store: TimerStore, clock: FakeClock) -> None:
    tools = {t.name: t for t in timer_tools(store)}
    await call(tools, "timer_start", duration_s=300, label="rice")
    clock.advance(1)
    await call(tools, "timer_start", duration_s=300)
    out = await call(tools, "timer_cancel", label="last")
    assert out.text == "5 minute timer cancelled." and [t.label for t in store.active()] == ["rice"]
