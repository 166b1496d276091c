"""What the weather tools say, in English and Korean.

Every answer carries its data's age, because a forecast synced two days ago and a sensor read a
second ago sound alike otherwise.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from datetime import date, datetime

from tools.forecast import AIR_GRADES, CONDITIONS, WEEKDAYS_EN, WEEKDAYS_KO, When
from tools.spoken import Language, join_words, say_age
from tools.weather_sources import Conditions

log = logging.getLogger(__name__)


def say_temperature(celsius: float, language: Language) -> str:
    # Half away from zero: 17.5 is "18", -0.5 is "minus 1", as a thermometer display rounds.
    degrees = int(math.copysign(math.floor(abs(celsius) + 0.5), celsius))
    if language == "ko":
        return f"영하 {-degrees}도" if degrees < 0 else f"{degrees}도"
    if degrees < 0:
        return f"minus {-degrees} degrees"
    return f"{degrees} degree{'s' if degrees != 1 else ''}"


def _condition(code: str, language: Language) -> str:
    words = CONDITIONS.get(code)
    if words is None:
        return code.replace("_", " ")
    return words[1] if language == "ko" else words[0]


def when_label(when: When, day: date | None, language: Language) -> str:
    """"Tomorrow", "On Friday", "오늘 밤", "금요일"; ``day`` is the resolved date, for days further out."""
    ko = language == "ko"
    if when.kind != "day":
        return {"now": "지금", "today": "오늘", "tonight": "오늘 밤"}[when.kind] if ko else when.kind.capitalize()
    index = when.weekday if when.weekday is not None else (day.weekday() if day and when.days_ahead > 2 else None)
    if index is not None:
        return WEEKDAYS_KO[index] if ko else f"On {WEEKDAYS_EN[index]}"
    if when.days_ahead == 1:
        return "내일" if ko else "Tomorrow"
    if when.days_ahead == 2:
        return "모레" if ko else "The day after tomorrow"
    return f"{when.days_ahead}일 뒤" if ko else f"In {when.days_ahead} days"


def forecast_sentence(c: Conditions, when: When, language: Language) -> str:
    """"Tomorrow in Ilsan: rain, 12 to 18 degrees, 80 percent chance of rain." """
    ko = language == "ko"
    parts: list[str] = []
    if c.condition:
        parts.append(_condition(c.condition, language))
    if c.temperature_c is not None:
        parts.append(say_temperature(c.temperature_c, language))
    elif c.temp_min_c is not None and c.temp_max_c is not None:
        low, high = say_temperature(c.temp_min_c, language), say_temperature(c.temp_max_c, language)
        if ko:
            parts.append(f"최저 {low}, 최고 {high}")
        else:
            parts.append(f"{low.removesuffix(' degrees').removesuffix(' degree')} to {high}")
    elif c.temp_max_c is not None:
        parts.append(f"최고 {say_temperature(c.temp_max_c, language)}" if ko else f"a high of {say_temperature(c.temp_max_c, language)}")
    if c.humidity_pct is not None:
        parts.append(f"습도 {round(c.humidity_pct)}퍼센트" if ko else f"humidity {round(c.humidity_pct)} percent")
    if c.precipitation_pct is not None:
        pct = round(c.precipitation_pct)
        parts.append(f"강수 확률 {pct}퍼센트" if ko else f"{pct} percent chance of rain")
    label = when_label(when, c.day, language)
    details = ", ".join(parts) if parts else ("자세한 정보 없음" if ko else "no details")
    if ko:
        return f"{label} {c.place} 날씨: {details}."
    return f"{label} in {c.place}: {details}."


def sensor_sentence(c: Conditions, language: Language) -> str:
    """"Inside it's 22 degrees with 45 percent humidity." (indoors unless the sensor is set up outside)"""
    temp = say_temperature(c.temperature_c or 0.0, language)
    if language == "ko":
        where = "실내는" if c.indoor else "바깥은"
        humidity = f", 습도 {round(c.humidity_pct)}퍼센트" if c.humidity_pct is not None else ""
        return f"{where} {temp}{humidity}예요."
    where = "Inside" if c.indoor else "Outside"
    humidity = f" with {round(c.humidity_pct)} percent humidity" if c.humidity_pct is not None else ""
    return f"{where} it's {temp}{humidity}."


def air_sentence(c: Conditions, language: Language) -> str:
    grade_en, grade_ko = AIR_GRADES.get(c.grade or "", (c.grade or "unknown", c.grade or "알 수 없음"))
    values = []
    if c.pm2_5 is not None:
        values.append(f"{'초미세먼지' if language == 'ko' else 'PM2.5'} {round(c.pm2_5)}")
    if c.pm10 is not None:
        values.append(f"{'미세먼지' if language == 'ko' else 'PM10'} {round(c.pm10)}")
    if language == "ko":
        where = ("실내" if c.indoor else "바깥") if c.source == "sensor" else c.place
        text = f"{where} 미세먼지는 {grade_ko}이에요."
        return f"{text} {', '.join(values)}마이크로그램이에요." if values else text
    where = ("Indoor air" if c.indoor else "Outdoor air") if c.source == "sensor" else f"Air quality in {c.place}"
    text = f"{where} is {grade_en}"
    return f"{text}: {', '.join(values)} micrograms per cubic metre." if values else f"{text}."


def age_sentence(as_of: datetime, now: datetime, stale_after_s: float, source: str, language: Language) -> str:
    """"Forecast as of 2 hours ago." / "3일 전 기준 예보라 지금과 다를 수 있어요." """
    age_s = (now - as_of).total_seconds()
    age = say_age(age_s, language)
    if source == "sensor":
        return f"{age} 측정한 값이에요." if language == "ko" else f"Measured {age}."
    if age_s > stale_after_s:
        if language == "ko":
            return f"{age} 기준 예보라 지금과 다를 수 있어요."
        return f"Forecast as of {age}, so it may be out of date."
    return f"{age} 기준 예보예요." if language == "ko" else f"Forecast as of {age}."


def sensor_fallback(language: Language) -> str:
    if language == "ko":
        return "집 센서를 읽지 못해서 예보로 알려 드려요."
    return "The home sensor didn't answer, so this is from the forecast."


def unknown_place(place: str, known: Sequence[str], language: Language, air: bool = False) -> str:
    if language == "ko":
        what = "미세먼지" if air else "날씨"
        text = f"{place} {what} 정보는 없어요."
        return f"{text} {join_words(list(known), language)} {what}는 알 수 있어요." if known else text
    text = f"I don't have {'air quality' if air else 'weather'} for {place}."
    return f"{text} I have {join_words(list(known), language)}." if known else text


def no_forecast_for(place: str, label: str, language: Language, air: bool = False) -> str:
    if language == "ko":
        return f"{place}의 {label} 미세먼지 정보는 없어요." if air else f"{place}의 {label} 예보는 없어요."
    if air:
        return f"I don't have air quality for {place} right now."
    moment = "right now" if label == "Now" else label[:1].lower() + label[1:]
    return f"I don't have a forecast for {place} {moment}."


def no_data(language: Language) -> str:
    return "아직 날씨 정보가 없어요." if language == "ko" else "I don't have any weather data yet."


def unavailable(language: Language) -> str:
    return "지금은 날씨 정보를 읽을 수 없어요." if language == "ko" else "I can't read the weather data right now."


def unknown_when(said: str, language: Language) -> str:
    if language == "ko":
        return f"'{said}' 날씨는 알 수 없어요. 지금, 오늘, 오늘 밤, 내일, 모레나 요일로 물어봐 주세요."
    return f"I can't tell the weather for \"{said}\". Ask about now, today, tonight, tomorrow or a day of the week."
