"""Weather and air quality, offline first: a sensor at home and a forecast file synced when online.

Sources are asked in order (the sensor, then the file).  Every answer says how old its data is,
warns when it is older than the stale limit, and says plainly when there is none for that place.
A sensor indoors is reported as the room's temperature, followed by the forecast for outside.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from tools import weather_speech as say
from tools.forecast import When, parse_when, place_key
from tools.sensors import Sensor
from tools.spec import ToolOutput, ToolSpec
from tools.spoken import Language, check_language
from tools.threads import ToolThread
from tools.weather_sources import Conditions, ForecastFileProvider, NoData, SensorProvider, WeatherProvider, WeatherUnavailable

log = logging.getLogger(__name__)

HOME_WORDS = frozenset(place_key(w) for w in (
    "home", "here", "local", "my place", "around here", "outside", "집", "우리 집", "여기", "우리 동네", "이 동네", "동네", "밖",
))


@dataclass(frozen=True)
class WeatherSettings:
    """How the weather tools are set up on this speaker."""

    forecast_path: Path
    """The cached forecast file (written by ``python -m tools.forecast_sync``)."""
    home: str
    """The place questions without one are about: a name or alias in the forecast file ("Ilsan")."""
    language: str = "en"
    """Language of the answers: "en" or "ko"."""
    stale_after_s: float = 24 * 3600
    """Data older than this is said to be possibly out of date."""
    sensor_outdoor: bool = False
    """Whether the sensor hangs outside; otherwise its readings are reported as indoor."""


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


class WeatherArgs(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)
    location: str | None = Field(default=None, max_length=80, description="A city or area; leave out for home.")
    when: str | None = Field(default=None, max_length=40,
                             description="now, today, tonight, tomorrow or a weekday; leave out for now.")


class AirQualityArgs(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)
    location: str | None = Field(default=None, max_length=80, description="A city or area; leave out for home.")


@dataclass
class _Outcome:
    main: Conditions | None = None
    outdoor: Conditions | None = None
    """With an indoor main reading: the first outdoor one, for the weather outside."""
    failed: list[tuple[str, str]] = field(default_factory=list)
    missing: NoData | None = None


def _ask(providers: Sequence[WeatherProvider], question: Callable[[WeatherProvider], Conditions | None]) -> _Outcome:
    outcome = _Outcome()
    for provider in providers:
        try:
            found = question(provider)
        except WeatherUnavailable as exc:
            outcome.failed.append((provider.source, str(exc)))
            continue
        except NoData as exc:
            outcome.missing = outcome.missing or exc
            continue
        if found is None:
            continue
        if outcome.main is None:
            outcome.main = found
            if not found.indoor:
                break
        elif not found.indoor:
            outcome.outdoor = found
            break
    return outcome


def _data(c: Conditions, now: datetime, stale_after_s: float) -> dict[str, Any]:
    age_s = (now - c.as_of).total_seconds()
    data: dict[str, Any] = {"place": c.place, "source": c.source, "indoor": c.indoor, "as_of": c.as_of.isoformat(),
                            "age_s": int(age_s), "stale": age_s > stale_after_s}
    if c.day is not None:
        data["day"] = c.day.isoformat()
    for key in ("temperature_c", "temp_min_c", "temp_max_c", "humidity_pct", "pressure_hpa", "precipitation_pct",
                "wind_kmh", "condition", "pm2_5", "pm10", "grade"):
        value = getattr(c, key)
        if value is not None:
            data[key] = value
    return data


def default_providers(settings: WeatherSettings, sensor: Sensor | None = None) -> list[WeatherProvider]:
    """The sensor (when there is one), then the forecast file."""
    language = check_language(settings.language)
    providers: list[WeatherProvider] = []
    if sensor is not None:
        providers.append(SensorProvider(sensor, outdoor=settings.sensor_outdoor))
    providers.append(ForecastFileProvider(settings.forecast_path, settings.home, language))
    return providers


def weather_tools(settings: WeatherSettings, sensor: Sensor | None = None, *,
                  providers: Sequence[WeatherProvider] | None = None,
                  now: Callable[[], datetime] = utc_now) -> list[ToolSpec]:
    """weather and air_quality; ``now`` (timezone-aware) is injectable so tests can fix the time."""
    lang: Language = check_language(settings.language)
    sources = list(providers) if providers is not None else default_providers(settings, sensor)
    home_key = place_key(settings.home)
    thread = ToolThread("weather")  # a stuck sensor or file holds this thread, not the model's

    def place_of(location: str | None) -> str | None:
        if not location or place_key(location) in HOME_WORDS or place_key(location) == home_key:
            return None
        return location

    def explain_missing(outcome: _Outcome, asked: str | None, label: str, moment: datetime, air: bool) -> tuple[str, str]:
        missing = outcome.missing
        if missing is None:
            return ("unavailable", say.unavailable(lang)) if outcome.failed else ("no_data", say.no_data(lang))
        if missing.reason == "no_file":
            return "no_data", say.no_data(lang)
        if missing.reason == "unknown_place":
            return "unknown_place", say.unknown_place(asked or missing.place, missing.known, lang, air=air)
        text = say.no_forecast_for(missing.place, label, lang, air=air)
        if missing.as_of is not None:
            text += " " + say.age_sentence(missing.as_of, moment, settings.stale_after_s, "forecast", lang)
        return "no_time", text

    def prefix(outcome: _Outcome) -> str:
        assert outcome.main is not None
        sensor_failed = any(source == "sensor" for source, _ in outcome.failed)
        return say.sensor_fallback(lang) + " " if sensor_failed and outcome.main.source != "sensor" else ""

    def base_data(outcome: _Outcome, **asked: Any) -> dict[str, Any]:
        data: dict[str, Any] = dict(asked)
        if outcome.failed:
            data["failed"] = [{"source": s, "message": m} for s, m in outcome.failed]
        return data

    async def weather(args: WeatherArgs) -> ToolOutput:
        when = parse_when(args.when)
        if when is None:
            return ToolOutput(say.unknown_when(args.when or "", lang), {"error": "unknown_when", "when": args.when})
        moment = now()
        place = place_of(args.location)
        outcome = await thread.run(_ask, sources, lambda p: p.conditions(place, when, moment))
        data = base_data(outcome, location=args.location, when=when.canonical)
        main = outcome.main
        if main is None:
            data["error"], text = explain_missing(outcome, args.location, say.when_label(when, None, lang), moment, False)
            return ToolOutput(text, data)
        data.update(_data(main, moment, settings.stale_after_s))
        if main.source == "sensor":
            text = f"{say.sensor_sentence(main, lang)} {say.age_sentence(main.as_of, moment, settings.stale_after_s, 'sensor', lang)}"
            if outcome.outdoor is not None:
                data["outdoor"] = _data(outcome.outdoor, moment, settings.stale_after_s)
                text += (f" {say.forecast_sentence(outcome.outdoor, when, lang)} "
                         f"{say.age_sentence(outcome.outdoor.as_of, moment, settings.stale_after_s, outcome.outdoor.source, lang)}")
        else:
            text = (f"{prefix(outcome)}{say.forecast_sentence(main, when, lang)} "
                    f"{say.age_sentence(main.as_of, moment, settings.stale_after_s, main.source, lang)}")
        return ToolOutput(text, data)

    async def air_quality(args: AirQualityArgs) -> ToolOutput:
        moment = now()
        place = place_of(args.location)
        outcome = await thread.run(_ask, sources, lambda p: p.air(place, moment))
        data = base_data(outcome, location=args.location)
        main = outcome.main
        if main is None:
            data["error"], text = explain_missing(outcome, args.location, say.when_label(When("now"), None, lang), moment, True)
            return ToolOutput(text, data)
        data.update(_data(main, moment, settings.stale_after_s))
        text = (f"{prefix(outcome)}{say.air_sentence(main, lang)} "
                f"{say.age_sentence(main.as_of, moment, settings.stale_after_s, main.source, lang)}")
        return ToolOutput(text, data)

    return [
        ToolSpec("weather", "Weather now or forecast for today, tonight, tomorrow or a weekday, at home or a named place.",
                 WeatherArgs, weather, "read", expected_s=0.4, timeout_s=3.0, speculable=True),
        ToolSpec("air_quality", "Fine dust (PM2.5 and PM10) and air quality grade, at home or a named place.",
                 AirQualityArgs, air_quality, "read", expected_s=0.4, timeout_s=3.0, speculable=True),
    ]
