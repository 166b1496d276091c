"""Timers across a restart, through the real stores on disk, the tools and the watcher, on an injected clock.

hearth runs, starts timers, and stops (the stores are closed); the clock moves on while it is
off; hearth starts again on the same files.  A timer that came due meanwhile is announced at
once, one still running rings when its time is up, a paused one keeps its time left.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace

from agent.assistant import Assistant
from firmware_py.config import parse_config
from firmware_py.home_tools import HomeTools, open_home_tools
from firmware_py.wiring import timer_announcements
from tests.fakes import ToneSynthesizer
from tests.test_tools_timers import FakeClock, wait_for
from tests.test_turn import make_deps
from tools.timers import Timer, TimerWatcher


async def _open(tmp_path: Path, clock: FakeClock) -> HomeTools:
    config = parse_config({"tools": {"data_dir": str(tmp_path)}})
    home = await open_home_tools(config)
    home.timers.clock = clock  # the injected clock, before anything reads the time
    return home


async def _say(home: HomeTools, tool: str, **args) -> str:
    result = await home.executor.call(tool, args)
    assert result.ok and result.output is not None, result.error
    return result.output.text


async def _before_the_restart(tmp_path: Path, clock: FakeClock) -> None:
    """rice: 1 minute, stew: 30 minutes, eggs: 10 minutes paused after 100 s; then hearth stops."""
    home = await _open(tmp_path, clock)
    try:
        await _say(home, "timer_start", duration_s=60, label="rice")
        await _say(home, "timer_start", duration_s=1800, label="stew")
        await _say(home, "timer_start", duration_s=600, label="eggs")
        clock.advance(100)
        assert await _say(home, "timer_pause", label="eggs") == "Eggs timer paused with 8 minutes 20 seconds left."
    finally:
        await home.close()


async def test_a_timer_due_while_off_is_announced_right_after_restart_and_only_once(tmp_path: Path):
    clock = FakeClock()
    await _before_the_restart(tmp_path, clock)
    clock.advance(300)  # off for five minutes: rice ended 340 s ago

    config = parse_config({"tools": {"data_dir": str(tmp_path), "ring_times": 1}})
    said: list[list[str]] = []
    for _ in range(2):  # and a second restart says nothing again
        home = await _open(tmp_path, clock)
        synthesizer = ToneSynthesizer(seconds_per_char=0.001)
        assistant = Assistant(make_deps(synthesizer=synthesizer))
        ringing = timer_announcements(config, SimpleNamespace(tools=SimpleNamespace(home=home)), assistant)  # type: ignore[arg-type]
        assert ringing is not None
        watcher, ringers = ringing
        try:
            if not said:
                await wait_for(lambda: synthesizer.texts, steps=100_000)
            for _ in range(200):
                await asyncio.sleep(0)
        finally:
            await watcher.stop()
            await ringers.stop()
            states = {t.label: t.state for t in home.timers.active()}
            await home.close()
        said.append(list(synthesizer.texts))
        assert states == {"stew": "running", "eggs": "paused"}
    assert said == [["Rice timer finished while I was off, 6 minutes ago."], []]


async def test_a_running_timer_rings_when_its_time_is_up_and_a_paused_one_keeps_its_time(tmp_path: Path):
    clock = FakeClock()
    started = clock()
    await _before_the_restart(tmp_path, clock)
    clock.advance(300)

    home = await _open(tmp_path, clock)
    rung: list[tuple[str | None, float, bool]] = []
    sleeps: list[float] = []

    async def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        clock.advance(seconds)
        await asyncio.sleep(0)

    async def on_done(timer: Timer) -> None:
        rung.append((timer.label, clock(), timer.ended_while_off))

    try:
        # Said after the restart: the time left goes on from where it was, paused or not.
        assert await _say(home, "timer_status", label="stew") == "The stew timer has 23 minutes 20 seconds left."
        assert await _say(home, "timer_status", label="eggs") == "The eggs timer is paused with 8 minutes 20 seconds left."
        watcher = TimerWatcher(home.timers, on_done, sleep=sleep)
        watcher.start()
        try:
            await wait_for(lambda: len(rung) == 2, steps=100_000)
            # Rice was due while off; stew rang on the dot, 30 minutes after it was started.
            assert rung == [("rice", started + 400, True), ("stew", started + 1800, False)]
            assert sleeps[0] == 1800 - 400
            # Long after, the paused timer has not rung, and still has its 500 s.
            assert await _say(home, "timer_status", label="eggs") == "The eggs timer is paused with 8 minutes 20 seconds left."
            resumed_at = clock()
            assert await _say(home, "timer_resume", label="eggs") == "Eggs timer resumed; 8 minutes 20 seconds left."
            await wait_for(lambda: len(rung) == 3, steps=100_000)
        finally:
            await watcher.stop()
    finally:
        await home.close()
    assert rung[2] == ("eggs", resumed_at + 500, False)
