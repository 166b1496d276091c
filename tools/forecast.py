"""The cached forecast file, and the words people use for when they mean.

The file is JSON, written by ``tools.forecast_sync`` (or by anything else that can write it)::

    {
      "version": 1,
      "fetched_at": "2026-05-10T06:00:00+00:00",        # when the data was fetched: the answer's age
      "source": "open-meteo",                            # free text, for people
      "locations": {
        "ilsan": {
          "name": "Ilsan",                               # spoken in English answers
          "aliases": ["일산", "Goyang", "고양"],          # also accepted; the first Korean one is spoken in Korean
          "latitude": 37.68, "longitude": 126.77,
          "utc_offset_s": 32400,                         # the place's offset: "today" is the place's today
          "hourly": [{"time": "2026-05-10T15:00:00+09:00", "temperature_c": 21.3, "humidity_pct": 40,
                      "precipitation_probability_pct": 10, "condition": "partly_cloudy", "wind_kmh": 8}],
          "daily": [{"date": "2026-05-10", "temp_min_c": 12, "temp_max_c": 24,
                     "precipitation_probability_pct": 20, "condition": "clear"}],
          "air_quality": [{"time": "2026-05-10T15:00:00+09:00", "pm2_5": 18, "pm10": 35, "grade": "moderate"}]
        }
      }
    }

Every reading field may be null or missing.  ``condition`` is one of CONDITIONS; ``grade`` (optional:
it is worked out from PM2.5 and PM10 when absent) is one of AIR_GRADES, on the Korean scale.
"""

from __future__ import annotations

import logging
import re
import stat
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import Annotated, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, ValidationError

log = logging.getLogger(__name__)

FORMAT_VERSION = 1

CONDITIONS: dict[str, tuple[str, str]] = {
    "clear": ("clear", "맑음"),
    "mostly_clear": ("mostly clear", "대체로 맑음"),
    "partly_cloudy": ("partly cloudy", "구름 조금"),
    "cloudy": ("cloudy", "구름 많음"),
    "overcast": ("overcast", "흐림"),
    "fog": ("foggy", "안개"),
    "drizzle": ("drizzle", "이슬비"),
    "rain": ("rain", "비"),
    "heavy_rain": ("heavy rain", "강한 비"),
    "freezing_rain": ("freezing rain", "어는 비"),
    "snow": ("snow", "눈"),
    "heavy_snow": ("heavy snow", "많은 눈"),
    "showers": ("showers", "소나기"),
    "snow_showers": ("snow showers", "소낙눈"),
    "thunderstorm": ("thunderstorms", "뇌우"),
}
"""Condition code → (English, Korean) words."""

AirGrade = Literal["good", "moderate", "unhealthy", "very_unhealthy"]
AIR_GRADES: dict[str, tuple[str, str]] = {
    "good": ("good", "좋음"),
    "moderate": ("moderate", "보통"),
    "unhealthy": ("unhealthy", "나쁨"),
    "very_unhealthy": ("very unhealthy", "매우 나쁨"),
}
# Upper bounds in µg/m³ of good, moderate and unhealthy, as Korea's air quality forecasts grade them.
_PM25_BOUNDS = (15, 35, 75)
_PM10_BOUNDS = (30, 80, 150)
_GRADE_ORDER: tuple[AirGrade, ...] = ("good", "moderate", "unhealthy", "very_unhealthy")


def air_grade(pm2_5: float | None, pm10: float | None) -> AirGrade | None:
    """The worse of the two dust grades; None when neither is known."""
    grades = []
    for value, bounds in ((pm2_5, _PM25_BOUNDS), (pm10, _PM10_BOUNDS)):
        if value is not None:
            grades.append(next((i for i, bound in enumerate(bounds) if value <= bound), 3))
    return _GRADE_ORDER[max(grades)] if grades else None


class _Entry(BaseModel):
    # Every reading is spoken: NaN or infinity in the file must stop it, not be read out as "nan degrees".
    model_config = ConfigDict(extra="ignore", allow_inf_nan=False)


# What the Earth's weather can be, with margin (the records are -89 °C and 57 °C, gusts of about
# 400 km/h, dust storms of a few thousand µg/m³); a value outside is a broken file, not weather.
Celsius = Annotated[float, Field(ge=-100.0, le=70.0)]
Percent = Annotated[float, Field(ge=0.0, le=100.0)]
KmPerHour = Annotated[float, Field(ge=0.0, le=500.0)]
Dust = Annotated[float, Field(ge=0.0, le=5000.0)]
Name = Annotated[str, Field(min_length=1, max_length=80)]
"""A place's name, said in every answer about it."""
Condition = Annotated[str, Field(max_length=40)]
"""A condition code; an unknown one is said with its underscores as spaces."""

MAX_FILE_BYTES = 8 * 1024 * 1024
"""A week of hourly forecasts for a dozen places is well under a megabyte."""


class HourlyEntry(_Entry):
    time: AwareDatetime
    temperature_c: Celsius | None = None
    humidity_pct: Percent | None = None
    precipitation_probability_pct: Percent | None = None
    condition: Condition | None = None
    wind_kmh: KmPerHour | None = None


class DailyEntry(_Entry):
    date: date
    temp_min_c: Celsius | None = None
    temp_max_c: Celsius | None = None
    precipitation_probability_pct: Percent | None = None
    condition: Condition | None = None


class AirEntry(_Entry):
    time: AwareDatetime
    pm2_5: Dust | None = None
    pm10: Dust | None = None
    grade: AirGrade | None = None


class LocationForecast(_Entry):
    name: Name
    aliases: list[Name] = []
    latitude: float | None = None
    longitude: float | None = None
    utc_offset_s: int = Field(0, ge=-14 * 3600, le=14 * 3600)
    hourly: list[HourlyEntry] = []
    daily: list[DailyEntry] = []
    air_quality: list[AirEntry] = []

    def spoken_name(self, language: str) -> str:
        if language == "ko":
            for alias in (self.name, *self.aliases):
                if re.search(r"[\uac00-\ud7a3]", alias):
                    return alias
        return self.name


class ForecastCache(_Entry):
    version: int = FORMAT_VERSION
    fetched_at: AwareDatetime
    source: str | None = None
    locations: dict[str, LocationForecast] = {}


class ForecastFileError(ValueError):
    """The forecast file exists but cannot be used."""


def load_forecast(path: Path) -> ForecastCache:
    """Read and check the file; raises FileNotFoundError or ForecastFileError."""
    try:
        st = path.stat()
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_FILE_BYTES:
            raise ForecastFileError(f"{path} is not a forecast file (not a regular file, or over {MAX_FILE_BYTES} bytes)")
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise
    except (OSError, UnicodeDecodeError) as exc:
        raise ForecastFileError(f"cannot read {path}: {exc}") from exc
    try:
        cache = ForecastCache.model_validate_json(text)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"]) or "file"
        raise ForecastFileError(f"{path} is not a valid forecast file ({where}: {first['msg']})") from exc
    if cache.version != FORMAT_VERSION:
        raise ForecastFileError(f"{path} has format version {cache.version}; this hearth reads {FORMAT_VERSION}")
    return cache


def place_names(path: Path) -> list[str]:
    """The names and aliases of the places a forecast file covers; none when it is missing or unusable."""
    try:
        cache = load_forecast(path)
    except (FileNotFoundError, ForecastFileError):
        return []
    return [name for place in cache.locations.values() for name in (place.name, *place.aliases)]


def place_key(text: str) -> str:
    """How place names are compared: case, spaces and punctuation do not matter."""
    return re.sub(r"[\W_]+", "", text.casefold())


# -- when ----------------------------------------------------------------------------

WhenKind = Literal["now", "today", "tonight", "day"]
WEEKDAYS_EN = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
WEEKDAYS_KO = ("월요일", "화요일", "수요일", "목요일", "금요일", "토요일", "일요일")


@dataclass(frozen=True)
class When:
    """A time the question is about, before it is placed on a calendar (that needs the place's date)."""

    kind: WhenKind
    days_ahead: int = 0
    """For "day": 1 is tomorrow, 2 the day after."""
    weekday: int | None = None
    """For a named day: 0 is Monday; resolved to the next such day at the place (today counts)."""
    after_today: bool = False
    """For "next Monday": the named day, but not today."""

    def days_from(self, today: date) -> int:
        if self.weekday is None:
            return self.days_ahead
        ahead = (self.weekday - today.weekday()) % 7
        return 7 if ahead == 0 and self.after_today else ahead

    @property
    def canonical(self) -> str:
        """A stable name for the record: now, today, tonight, tomorrow, +2, monday."""
        if self.weekday is not None:
            return ("next " if self.after_today else "") + WEEKDAYS_EN[self.weekday].lower()
        if self.kind == "day":
            return "tomorrow" if self.days_ahead == 1 else f"+{self.days_ahead}"
        return self.kind


_EN_WORDS: dict[str, When] = {
    **dict.fromkeys(("", "now", "right now", "currently", "current", "at the moment", "at present"), When("now")),
    **dict.fromkeys(("today", "this morning", "this afternoon", "later", "later today", "today afternoon",
                     "this morning and afternoon", "during the day"), When("today")),
    **dict.fromkeys(("tonight", "this evening", "evening", "tonight and overnight", "overnight", "this night"),
                    When("tonight")),
    **dict.fromkeys(("tomorrow", "tomorrow morning", "tomorrow afternoon", "tomorrow evening", "tomorrow night"),
                    When("day", days_ahead=1)),
    **dict.fromkeys(("day after tomorrow", "the day after tomorrow", "overmorrow"), When("day", days_ahead=2)),
}
_KO_WORDS: dict[str, When] = {
    **dict.fromkeys(("지금", "현재", "지금당장", "요즘", "당장"), When("now")),
    **dict.fromkeys(("오늘", "오늘낮", "오늘오후", "오늘아침", "오늘오전", "낮", "오후", "오전", "아침", "이따"), When("today")),
    **dict.fromkeys(("오늘밤", "오늘저녁", "밤", "저녁", "오늘밤사이", "밤사이", "오늘새벽"), When("tonight")),
    **dict.fromkeys(("내일", "낼", "내일아침", "내일오전", "내일오후", "내일저녁", "내일밤"), When("day", days_ahead=1)),
    **dict.fromkeys(("모레", "내일모레", "낼모레"), When("day", days_ahead=2)),
    "글피": When("day", days_ahead=3),
}
_KO_PARTICLES = ("에는", "에", "은", "는", "의", "도")


def parse_when(text: str | None) -> When | None:
    """"tomorrow", "on Friday", "오늘 밤", "금요일에" → When; None for what this cannot place."""
    raw = " ".join((text or "").casefold().split())
    if raw in _EN_WORDS:
        return _EN_WORDS[raw]
    words = raw.split()
    after_today = False
    while words and words[0] in ("on", "this", "coming", "next", "this coming", "over", "at", "the", "이번", "이번주", "다음", "다음주", "주", "오는"):
        after_today = after_today or words[0] in ("next", "다음", "다음주")
        words = words[1:]
    english = " ".join(words)
    if english in ("weekend", "weekend's") or "".join(words) in ("주말", "주말에", "주말에는", "주말은"):
        return When("day", weekday=5, after_today=after_today)  # "this weekend": its Saturday
    for i, name in enumerate(WEEKDAYS_EN):
        if english in (name.lower(), name[:3].lower(), name.lower() + "s"):
            return When("day", weekday=i, after_today=after_today)
    korean = "".join(words)
    for particle in _KO_PARTICLES:
        if korean.endswith(particle) and korean[: -len(particle)] in _KO_WORDS:
            korean = korean[: -len(particle)]
            break
    if korean in _KO_WORDS:
        return _KO_WORDS[korean]
    for i, name in enumerate(WEEKDAYS_KO):
        if korean in (name, name + "에", name + "에는", name + "은", name[0] + "욜"):
            return When("day", weekday=i, after_today=after_today)
    return None


def local_datetime(moment: datetime, utc_offset_s: int) -> datetime:
    """``moment`` on the place's clock."""
    return moment.astimezone(timezone(timedelta(seconds=utc_offset_s)))
