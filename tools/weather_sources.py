"""Where weather answers come from: the sensor at home and the forecast file, behind one protocol."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime, time, timedelta
from pathlib import Path
from typing import Literal, Protocol, TypeVar

from tools.forecast import (
    CONDITIONS,
    ForecastCache,
    ForecastFileError,
    HourlyEntry,
    LocationForecast,
    When,
    air_grade,
    load_forecast,
    local_datetime,
    place_key,
)
from tools.sensors import Sensor, SensorError, SensorReading
from tools.spoken import Language

log = logging.getLogger(__name__)

NEAREST_HOUR_S = 90 * 60
"""An hourly entry further than this from now does not describe now."""


@dataclass(frozen=True)
class Conditions:
    """What one source knows about one place at one time."""

    place: str
    """The place as spoken in the answer's language ("" for the home sensor)."""
    source: str
    """"sensor" or "forecast"."""
    as_of: datetime
    """When it was measured, or when the forecast was fetched: the answer's age."""
    indoor: bool = False
    """A sensor inside the house: its temperature is the room's, not the weather's."""
    day: date | None = None
    """The place's date the entry is for (forecasts of a day)."""
    temperature_c: float | None = None
    temp_min_c: float | None = None
    temp_max_c: float | None = None
    humidity_pct: float | None = None
    pressure_hpa: float | None = None
    precipitation_pct: float | None = None
    wind_kmh: float | None = None
    condition: str | None = None
    pm2_5: float | None = None
    pm10: float | None = None
    grade: str | None = None


class WeatherUnavailable(Exception):
    """A source is broken (sensor gone, file unreadable); the next source is tried."""


class NoData(Exception):
    """The source works but has nothing for this question."""

    def __init__(self, reason: Literal["no_file", "unknown_place", "no_time"], place: str = "",
                 as_of: datetime | None = None, known: Sequence[str] = ()) -> None:
        super().__init__(reason)
        self.reason = reason
        self.place = place
        self.as_of = as_of
        self.known = list(known)


class WeatherProvider(Protocol):
    """A source of readings. ``place`` None means home; None back means "not mine to answer"."""

    source: str

    def conditions(self, place: str | None, when: When, now: datetime) -> Conditions | None: ...

    def air(self, place: str | None, now: datetime) -> Conditions | None: ...


class SensorProvider:
    """The sensor at home, for questions about home, now."""

    source = "sensor"

    def __init__(self, sensor: Sensor, outdoor: bool = False) -> None:
        self.sensor = sensor
        self.outdoor = outdoor

    def _read(self, now: datetime) -> Conditions:
        try:
            r = self.sensor.read()
        except SensorError as exc:
            log.warning("sensor read failed: %s", exc)
            raise WeatherUnavailable(str(exc)) from exc
        wrong = implausible(r)
        if wrong:
            # A loose wire or a dying chip reads garbage; the forecast answers instead.
            log.warning("sensor reading out of range: %s", wrong)
            raise WeatherUnavailable(f"the sensor read {wrong}")
        return Conditions("", self.source, now, indoor=not self.outdoor, temperature_c=r.temperature_c,
                          humidity_pct=r.humidity_pct, pressure_hpa=r.pressure_hpa, pm2_5=r.pm2_5, pm10=r.pm10,
                          grade=air_grade(r.pm2_5, r.pm10))

    def conditions(self, place: str | None, when: When, now: datetime) -> Conditions | None:
        if place is not None or when.kind != "now":
            return None
        return self._read(now)

    def air(self, place: str | None, now: datetime) -> Conditions | None:
        if place is not None or not getattr(self.sensor, "measures_dust", False):
            return None
        reading = self._read(now)
        return reading if reading.grade is not None else None


SENSOR_RANGES: dict[str, tuple[float, float]] = {
    "temperature_c": (-40.0, 85.0),
    "humidity_pct": (0.0, 100.0),
    "pressure_hpa": (300.0, 1100.0),
    "pm2_5": (0.0, 1000.0),
    "pm10": (0.0, 1000.0),
}
"""What the sensors measure at all (the BME280's and common dust sensors' ranges), per reading."""


def implausible(reading: SensorReading) -> str | None:
    """The first reading outside what the sensor can measure (NaN included), said in a few words; None if all fit."""
    for key, (low, high) in SENSOR_RANGES.items():
        value = getattr(reading, key)
        if value is not None and not low <= value <= high:
            return f"{key} {value!r}, outside {low:g} to {high:g}"
    return None


class ForecastFileProvider:
    """The forecast file, re-read only when it changes on disk."""

    source = "forecast"

    def __init__(self, path: Path, home: str, language: Language = "en") -> None:
        self.path = Path(path)
        self.home = home
        self.language = language
        self._cached: tuple[tuple[int, int], ForecastCache] | None = None

    def _cache(self) -> ForecastCache:
        try:
            st = self.path.stat()
        except FileNotFoundError:
            raise NoData("no_file") from None
        stamp = (st.st_mtime_ns, st.st_size)
        if self._cached is not None and self._cached[0] == stamp:
            return self._cached[1]
        try:
            cache = load_forecast(self.path)
        except FileNotFoundError:
            raise NoData("no_file") from None
        except ForecastFileError as exc:
            log.warning("%s", exc)
            raise WeatherUnavailable(str(exc)) from exc
        self._cached = (stamp, cache)
        return cache

    def _find(self, cache: ForecastCache, place: str | None) -> LocationForecast:
        wanted = place_key(self.home if place is None else place)
        for key, loc in cache.locations.items():
            if wanted in {place_key(n) for n in (key, loc.name, *loc.aliases)}:
                return loc
        if place is None and len(cache.locations) == 1:
            # A speaker that syncs one place needs no home setting to match its spelling.
            return next(iter(cache.locations.values()))
        known = [loc.spoken_name(self.language) for loc in cache.locations.values()]
        raise NoData("unknown_place", place or self.home, cache.fetched_at, known)

    def conditions(self, place: str | None, when: When, now: datetime) -> Conditions | None:
        cache = self._cache()
        loc = self._find(cache, place)
        name = loc.spoken_name(self.language)
        local_now = local_datetime(now, loc.utc_offset_s)
        base = Conditions(name, self.source, cache.fetched_at)
        if when.kind == "now":
            entry = _nearest(loc.hourly, now)
            if entry is None:
                raise NoData("no_time", name, cache.fetched_at)
            return _replace(base, temperature_c=entry.temperature_c, humidity_pct=entry.humidity_pct,
                            precipitation_pct=entry.precipitation_probability_pct, condition=entry.condition,
                            wind_kmh=entry.wind_kmh, day=local_now.date())
        if when.kind == "tonight":
            start, end = _tonight(local_now)
            hours = [h for h in loc.hourly if start <= h.time < end]
            if not hours:
                raise NoData("no_time", name, cache.fetched_at)
            return _replace(_summarise(base, hours), day=start.date())
        day = local_now.date() + timedelta(days=when.days_from(local_now.date()))
        daily = next((d for d in loc.daily if d.date == day), None)
        if daily is not None:
            return _replace(base, day=day, temp_min_c=daily.temp_min_c, temp_max_c=daily.temp_max_c,
                            precipitation_pct=daily.precipitation_probability_pct, condition=daily.condition)
        hours = [h for h in loc.hourly if local_datetime(h.time, loc.utc_offset_s).date() == day]
        if not hours:
            raise NoData("no_time", name, cache.fetched_at)
        return _replace(_summarise(base, hours), day=day)

    def air(self, place: str | None, now: datetime) -> Conditions | None:
        cache = self._cache()
        loc = self._find(cache, place)
        name = loc.spoken_name(self.language)
        entry = _nearest(loc.air_quality, now)
        if entry is None or (entry.pm2_5 is None and entry.pm10 is None and entry.grade is None):
            raise NoData("no_time", name, cache.fetched_at)
        return Conditions(name, self.source, cache.fetched_at, pm2_5=entry.pm2_5, pm10=entry.pm10,
                          grade=entry.grade or air_grade(entry.pm2_5, entry.pm10))


def _replace(base: Conditions, **changes: object) -> Conditions:
    return replace(base, **changes)  # type: ignore[arg-type]


class _Timed(Protocol):
    @property
    def time(self) -> datetime: ...


T = TypeVar("T", bound=_Timed)


def _nearest(entries: Sequence[T], now: datetime) -> T | None:
    best = min(entries, key=lambda e: abs((e.time - now).total_seconds()), default=None)
    if best is None or abs((best.time - now).total_seconds()) > NEAREST_HOUR_S:
        return None
    return best


def _tonight(local_now: datetime) -> tuple[datetime, datetime]:
    """From 18:00 (or now, if later) to 06:00; after midnight, "tonight" is the night still going on."""
    tz = local_now.tzinfo
    today = local_now.date()
    if local_now.hour < 6:
        return local_now, datetime.combine(today, time(6), tz)
    start = max(local_now.replace(minute=0, second=0, microsecond=0), datetime.combine(today, time(18), tz))
    return start, datetime.combine(today + timedelta(days=1), time(6), tz)


def _summarise(base: Conditions, hours: Sequence[HourlyEntry]) -> Conditions:
    temps = [h.temperature_c for h in hours if h.temperature_c is not None]
    rain = [h.precipitation_probability_pct for h in hours if h.precipitation_probability_pct is not None]
    severity = {code: i for i, code in enumerate(CONDITIONS)}
    counts = Counter(h.condition for h in hours if h.condition)
    # Rain or snow for a quarter of the time is what people plan around, even if cloud is more common.
    wet = [c for c in counts if severity.get(c, -1) >= severity["drizzle"] and counts[c] * 4 >= len(hours)]
    if wet:
        condition: str | None = max(wet, key=lambda c: severity[c])
    else:
        condition = max(counts, key=lambda c: (counts[c], severity.get(c, -1)), default=None)
    return _replace(base, temp_min_c=min(temps, default=None), temp_max_c=max(temps, default=None),
                    precipitation_pct=max(rain, default=None), condition=condition)
