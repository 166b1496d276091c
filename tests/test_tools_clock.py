"""Time and date tools, with an injected clock and zone."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from tools.clock import clock_tools, local_now

KST = timezone(timedelta(hours=9), "KST")


def tools_at(moment: datetime):
    return {t.name: t for t in clock_tools(now=lambda: moment)}


@pytest.mark.parametrize(
    ("hour", "minute", "spoken"),
    [(15, 5, "It's 3:05 PM."), (0, 0, "It's 12:00 AM."), (12, 30, "It's 12:30 PM."), (9, 0, "It's 9:00 AM.")],
)
async def test_time_now(hour: int, minute: int, spoken: str) -> None:
    tools = tools_at(datetime(2026, 11, 30, hour, minute, tzinfo=KST))
    spec = tools["time_now"]
    out = await spec.run(spec.args())
    assert out.text == spoken
    assert out.data["hour"] == hour and out.data["minute"] == minute
    assert out.data["timezone"] == "KST"


async def test_date_today() -> None:
    spec = tools_at(datetime(2026, 11, 30, 8, 0, tzinfo=KST))["date_today"]
    out = await spec.run(spec.args())
    assert out.text == "Today is Monday, November 30."
    assert out.data["iso"] == "2026-11-30" and out.data["weekday"] == "Monday"


def test_specs() -> None:
    tools = {t.name: t for t in clock_tools()}
    assert set(tools) == {"time_now", "date_today"}
    assert all(t.side_effects == "read" for t in tools.values())


def test_default_clock_is_zone_aware() -> None:
    assert local_now().tzinfo is not None


def ko_tools_at(moment: datetime):
    return {t.name: t for t in clock_tools(now=lambda: moment, language="ko")}


@pytest.mark.parametrize(
    ("hour", "minute", "spoken"),
    [(15, 42, "지금은 오후 3시 42분이에요."), (15, 0, "지금은 오후 3시예요."), (0, 0, "지금은 오전 12시예요."),
     (12, 30, "지금은 오후 12시 30분이에요."), (9, 5, "지금은 오전 9시 5분이에요.")],
)
async def test_time_now_korean(hour: int, minute: int, spoken: str) -> None:
    spec = ko_tools_at(datetime(2026, 11, 30, hour, minute, tzinfo=KST))["time_now"]
    out = await spec.run(spec.args())
    assert out.text == spoken
    assert out.data["hour"] == hour and out.data["minute"] == minute


@pytest.mark.parametrize(
    ("month", "day", "spoken", "weekday"),
    [(11, 30, "오늘은 11월 30일 월요일이에요.", "Monday"), (12, 6, "오늘은 12월 6일 일요일이에요.", "Sunday")],
)
async def test_date_today_korean(month: int, day: int, spoken: str, weekday: str) -> None:
    spec = ko_tools_at(datetime(2026, month, day, 8, 0, tzinfo=KST))["date_today"]
    out = await spec.run(spec.args())
    assert out.text == spoken
    assert out.data["weekday"] == weekday  # the data stays language-neutral


def test_unsupported_language_is_refused() -> None:
    with pytest.raises(ValueError, match="unsupported language"):
        clock_tools(language="jp")
