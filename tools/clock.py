"""Time and date, said the way a person would say them."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from tools.spec import NoArgs, ToolOutput, ToolSpec


# Spelled out rather than strftime("%A"), which follows the process locale (Korean on many units).
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")


def local_now() -> datetime:
    """Now, in the system's time zone."""
    return datetime.now().astimezone()


def say_time(moment: datetime) -> str:
    """12-hour spoken form: 15:05 → "3:05 PM", 00:00 → "12:00 AM"."""
    hour = moment.hour % 12 or 12
    return f"{hour}:{moment.minute:02d} {'AM' if moment.hour < 12 else 'PM'}"


def say_date(moment: datetime) -> str:
    """"Monday, November 30" (no leading zero, no year: it is today)."""
    return f"{_WEEKDAYS[moment.weekday()]}, {_MONTHS[moment.month - 1]} {moment.day}"


def clock_tools(now: Callable[[], datetime] = local_now) -> list[ToolSpec]:
    """time_now and date_today; ``now`` is injectable so tests can fix the time and zone."""

    async def time_now(args: NoArgs) -> ToolOutput:
        moment = now()
        data = {"iso": moment.isoformat(timespec="seconds"), "hour": moment.hour, "minute": moment.minute,
                "timezone": moment.tzname()}
        return ToolOutput(f"It's {say_time(moment)}.", data)

    async def date_today(args: NoArgs) -> ToolOutput:
        moment = now()
        data = {"iso": moment.date().isoformat(), "weekday": _WEEKDAYS[moment.weekday()], "timezone": moment.tzname()}
        return ToolOutput(f"Today is {say_date(moment)}.", data)

    return [
        ToolSpec("time_now", "Say the current time.", NoArgs, time_now, "read"),
        ToolSpec("date_today", "Say today's date and weekday.", NoArgs, date_today, "read"),
    ]
