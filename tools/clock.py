"""Time and date, said the way a person would say them."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from tools.spec import NoArgs, ToolOutput, ToolSpec
from tools.spoken import Language, check_language, has_final_consonant

# Spelled out rather than strftime("%A"), which follows the process locale (Korean on many units).
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")
_KO_WEEKDAYS = ("월요일", "화요일", "수요일", "목요일", "금요일", "토요일", "일요일")


def local_now() -> datetime:
    """Now, in the system's time zone."""
    return datetime.now().astimezone()


def say_time(moment: datetime, language: Language = "en") -> str:
    """12-hour spoken form: 15:05 → "3:05 PM" / "오후 3시 5분", 00:00 → "12:00 AM" / "오전 12시"."""
    hour = moment.hour % 12 or 12
    if language == "ko":
        # On the hour Korean says "3시", not "3시 0분".
        minutes = f" {moment.minute}분" if moment.minute else ""
        return f"{'오전' if moment.hour < 12 else '오후'} {hour}시{minutes}"
    return f"{hour}:{moment.minute:02d} {'AM' if moment.hour < 12 else 'PM'}"


def say_date(moment: datetime, language: Language = "en") -> str:
    """"Monday, November 30" / "11월 30일 월요일" (no leading zero, no year: it is today)."""
    if language == "ko":
        return f"{moment.month}월 {moment.day}일 {_KO_WEEKDAYS[moment.weekday()]}"
    return f"{_WEEKDAYS[moment.weekday()]}, {_MONTHS[moment.month - 1]} {moment.day}"


def _copula(word: str) -> str:
    return f"{word}{'이에요' if has_final_consonant(word) else '예요'}"


def clock_tools(now: Callable[[], datetime] = local_now, language: str = "en") -> list[ToolSpec]:
    """time_now and date_today, answering in ``language``; ``now`` is injectable so tests can fix the time and zone."""
    lang = check_language(language)

    async def time_now(args: NoArgs) -> ToolOutput:
        moment = now()
        data = {"iso": moment.isoformat(timespec="seconds"), "hour": moment.hour, "minute": moment.minute,
                "timezone": moment.tzname()}
        if lang == "ko":
            return ToolOutput(f"지금은 {_copula(say_time(moment, lang))}.", data)
        return ToolOutput(f"It's {say_time(moment)}.", data)

    async def date_today(args: NoArgs) -> ToolOutput:
        moment = now()
        data = {"iso": moment.date().isoformat(), "weekday": _WEEKDAYS[moment.weekday()], "timezone": moment.tzname()}
        if lang == "ko":
            return ToolOutput(f"오늘은 {_copula(say_date(moment, lang))}.", data)
        return ToolOutput(f"Today is {say_date(moment)}.", data)

    return [
        ToolSpec("time_now", "Say the current time.", NoArgs, time_now, "read", speculable=True, stale_after_s=20.0),
        ToolSpec("date_today", "Say today's date and weekday.", NoArgs, date_today, "read", speculable=True, stale_after_s=60.0),
    ]
