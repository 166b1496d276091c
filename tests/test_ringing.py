"""A finished timer rings until a press answers it, at most so many times."""

from __future__ import annotations

import asyncio

from firmware_py.ringing import RingSettings, Ringers, ring_until_heard


class Kitchen:
    """Announcements that play whole unless ``cut_at`` says the press came during that one;
    ``press_after`` presses in the silence after that ring."""

    def __init__(self, cut_at: int | None = None, press_after: int | None = None) -> None:
        self.cut_at, self.press_after = cut_at, press_after
        self.said: list[str] = []
        self.turns_started = 0
        self.stops_heard = 0

    async def announce(self, text: str, sound=None) -> bool:
        self.said.append(text)
        return len(self.said) != self.cut_at

    async def sleep(self, _seconds: float) -> None:
        if len(self.said) == self.press_after:
            self.turns_started += 1


async def test_nobody_answers_it_rings_the_cap_times() -> None:
    kitchen = Kitchen()
    assert await ring_until_heard(kitchen, "Pasta timer is done.", None, RingSettings(times=4), kitchen.sleep) == 4
    assert kitchen.said == ["Pasta timer is done."] * 4


async def test_a_press_during_a_ring_stops_it() -> None:
    kitchen = Kitchen(cut_at=2)
    assert await ring_until_heard(kitchen, "done", None, RingSettings(times=5), kitchen.sleep) == 2
    assert len(kitchen.said) == 2


async def test_a_press_after_a_ring_counts_as_heard() -> None:
    kitchen = Kitchen(press_after=1)
    assert await ring_until_heard(kitchen, "done", None, RingSettings(times=5), kitchen.sleep) == 1
    assert len(kitchen.said) == 1


async def test_one_ringing_timer_never_holds_up_another() -> None:
    started: list[str] = []
    release = asyncio.Event()

    async def ringing(name: str) -> int:
        started.append(name)
        await release.wait()
        return 1

    ringers = Ringers()
    ringers.start(ringing("pasta"))
    ringers.start(ringing("rice"))
    await asyncio.sleep(0)
    assert started == ["pasta", "rice"]
    await ringers.stop()  # shutting down stops both
