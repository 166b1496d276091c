"""Fetch forecasts and air quality for a few places from Open-Meteo and write hearth's forecast file.

Run hourly by ``systemd/hearth-forecast-sync.timer`` while the speaker is online::

    python -m tools.forecast_sync --config /etc/hearth/forecast.toml
    python -m tools.forecast_sync --place "Ilsan/일산/고양=37.68,126.77" --out ~/.local/share/hearth/data/forecast.json

The configuration file (TOML)::

    # out = "/var/lib/hearth/data/forecast.json"   # hearth's forecast_file; default $HEARTH_DATA_DIR/forecast.json
    # forecast_url = "https://api.open-meteo.com/v1/forecast"
    # air_url = "https://air-quality-api.open-meteo.com/v1/air-quality"

    [[place]]
    name = "Ilsan"
    aliases = ["일산", "고양", "Goyang"]
    latitude = 37.68
    longitude = 126.77

A run is all or nothing: if any request fails, the file from the last good run stays as it is (the
weather tools then say how old it is) and one line is logged.  The file is replaced atomically, so
hearth never reads half of it.
"""

from __future__ import annotations

import argparse
import http.client
import json
import logging
import os
import sys
import tempfile
import tomllib
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from tools.forecast import FORMAT_VERSION, ForecastCache, air_grade, place_key

log = logging.getLogger(__name__)

FORECAST_URL = "https://api.open-meteo.com/v1/forecast"
AIR_URL = "https://air-quality-api.open-meteo.com/v1/air-quality"
DEFAULT_OUT = Path.home() / ".local" / "share" / "hearth" / "data" / "forecast.json"
"""Where hearth looks when ``tools.forecast_file`` is unset (its default data folder)."""
MAX_RESPONSE_BYTES = 5_000_000

_HOURLY = ("temperature_2m", "relative_humidity_2m", "precipitation_probability", "weather_code", "wind_speed_10m")
_DAILY = ("weather_code", "temperature_2m_min", "temperature_2m_max", "precipitation_probability_max")
_AIR = ("pm2_5", "pm10")

# WMO weather interpretation codes, as Open-Meteo reports them, to hearth's condition words.
_WMO: dict[int, str] = {
    0: "clear", 1: "mostly_clear", 2: "partly_cloudy", 3: "overcast", 45: "fog", 48: "fog",
    51: "drizzle", 53: "drizzle", 55: "drizzle", 56: "freezing_rain", 57: "freezing_rain",
    61: "rain", 63: "rain", 65: "heavy_rain", 66: "freezing_rain", 67: "freezing_rain",
    71: "snow", 73: "snow", 75: "heavy_snow", 77: "snow", 80: "showers", 81: "showers", 82: "heavy_rain",
    85: "snow_showers", 86: "snow_showers", 95: "thunderstorm", 96: "thunderstorm", 99: "thunderstorm",
}


@dataclass(frozen=True)
class Place:
    """A place to fetch, as configured."""

    name: str
    latitude: float
    longitude: float
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class SyncSettings:
    places: tuple[Place, ...]
    out: Path = DEFAULT_OUT
    forecast_url: str = FORECAST_URL
    air_url: str = AIR_URL
    timeout_s: float = 20.0
    forecast_days: int = 7


class SyncError(Exception):
    """A fetch or a response that cannot be used; the message is the one line logged."""


Fetch = Callable[[str, dict[str, Any], float], Any]


def fetch_json(url: str, params: dict[str, Any], timeout_s: float) -> Any:
    """GET ``url`` with ``params`` and parse JSON; every failure becomes a SyncError."""
    full = f"{url}?{urllib.parse.urlencode(params)}"
    request = urllib.request.Request(full, headers={"Accept": "application/json", "User-Agent": "hearth-forecast-sync"})
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            body = response.read(MAX_RESPONSE_BYTES + 1)
    except urllib.error.HTTPError as exc:
        raise SyncError(f"{url} answered HTTP {exc.code}") from exc
    except (urllib.error.URLError, http.client.HTTPException, TimeoutError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise SyncError(f"cannot reach {url}: {reason}") from exc
    if len(body) > MAX_RESPONSE_BYTES:
        raise SyncError(f"{url} sent more than {MAX_RESPONSE_BYTES} bytes")
    try:
        return json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise SyncError(f"{url} did not send JSON ({exc})") from exc


def _columns(response: Any, block: str, names: Sequence[str], url: str) -> tuple[list[Any], dict[str, list[Any]]]:
    data = response.get(block) if isinstance(response, dict) else None
    if not isinstance(data, dict) or not isinstance(data.get("time"), list):
        raise SyncError(f"unexpected response from {url}: no {block}.time")
    times = data["time"]
    columns = {}
    for name in names:
        values = data.get(name, [None] * len(times))
        if not isinstance(values, list) or len(values) != len(times):
            raise SyncError(f"unexpected response from {url}: {block}.{name} does not match {block}.time")
        columns[name] = values
    return times, columns


def _offset(response: Any, url: str) -> int:
    offset = response.get("utc_offset_seconds", 0) if isinstance(response, dict) else None
    if not isinstance(offset, int):
        raise SyncError(f"unexpected response from {url}: utc_offset_seconds is {offset!r}")
    return offset


def _aware(local: str, offset_s: int, url: str) -> str:
    try:
        moment = datetime.fromisoformat(local)
    except (TypeError, ValueError) as exc:
        raise SyncError(f"unexpected time {local!r} from {url}") from exc
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone(timedelta(seconds=offset_s)))
    return moment.isoformat()


def _condition(code: Any) -> str | None:
    try:
        return _WMO.get(int(code))
    except (TypeError, ValueError, OverflowError):
        return None


def convert(place: Place, forecast: Any, air: Any, forecast_url: str = FORECAST_URL, air_url: str = AIR_URL) -> dict[str, Any]:
    """One place's Open-Meteo forecast and air-quality responses, as a location of the forecast file."""
    offset = _offset(forecast, forecast_url)
    times, h = _columns(forecast, "hourly", _HOURLY, forecast_url)
    hourly = [
        {"time": _aware(t, offset, forecast_url), "temperature_c": h["temperature_2m"][i],
         "humidity_pct": h["relative_humidity_2m"][i], "precipitation_probability_pct": h["precipitation_probability"][i],
         "condition": _condition(h["weather_code"][i]), "wind_kmh": h["wind_speed_10m"][i]}
        for i, t in enumerate(times)
    ]
    days, d = _columns(forecast, "daily", _DAILY, forecast_url)
    daily = [
        {"date": day, "temp_min_c": d["temperature_2m_min"][i], "temp_max_c": d["temperature_2m_max"][i],
         "precipitation_probability_pct": d["precipitation_probability_max"][i], "condition": _condition(d["weather_code"][i])}
        for i, day in enumerate(days)
    ]
    air_offset = _offset(air, air_url)
    air_times, a = _columns(air, "hourly", _AIR, air_url)
    air_quality = [
        {"time": _aware(t, air_offset, air_url), "pm2_5": a["pm2_5"][i], "pm10": a["pm10"][i],
         "grade": air_grade(a["pm2_5"][i], a["pm10"][i])}
        for i, t in enumerate(air_times)
        if a["pm2_5"][i] is not None or a["pm10"][i] is not None
    ]
    return {"name": place.name, "aliases": list(place.aliases), "latitude": place.latitude, "longitude": place.longitude,
            "utc_offset_s": offset, "hourly": hourly, "daily": daily, "air_quality": air_quality}


def build_cache(settings: SyncSettings, fetched_at: datetime, fetch: Fetch = fetch_json) -> dict[str, Any]:
    """Fetch every place; raises SyncError on the first failure (nothing is written then)."""
    locations: dict[str, Any] = {}
    for place in settings.places:
        where = {"latitude": place.latitude, "longitude": place.longitude, "timezone": "auto"}
        forecast = fetch(settings.forecast_url, {**where, "hourly": ",".join(_HOURLY), "daily": ",".join(_DAILY),
                                                 "forecast_days": settings.forecast_days}, settings.timeout_s)
        air = fetch(settings.air_url, {**where, "hourly": ",".join(_AIR), "forecast_days": min(settings.forecast_days, 7)},
                    settings.timeout_s)
        locations[place_key(place.name)] = convert(place, forecast, air, settings.forecast_url, settings.air_url)
    cache = {"version": FORMAT_VERSION, "fetched_at": fetched_at.isoformat(), "source": "open-meteo",
             "locations": locations}
    try:
        # Never replace a good file with one the weather tools would refuse.
        ForecastCache.model_validate(cache)
    except ValidationError as exc:
        raise SyncError(f"the converted forecast is not valid: {exc.errors(include_url=False)[0]['msg']}") from exc
    return cache


def write_atomic(path: Path, data: Any) -> None:
    """Write JSON next to ``path`` and rename it over ``path``: readers see the old file or the new, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, ensure_ascii=False, indent=1)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def sync(settings: SyncSettings, now: Callable[[], datetime] = lambda: datetime.now(timezone.utc),
         fetch: Fetch = fetch_json) -> bool:
    """Fetch and write; True when the file was replaced, False (old file kept, one line logged) otherwise."""
    try:
        cache = build_cache(settings, now(), fetch)
        write_atomic(settings.out, cache)
    except (SyncError, OSError) as exc:
        log.warning("forecast not updated, keeping %s: %s", settings.out, exc)
        return False
    log.info("forecast for %d place(s) written to %s", len(settings.places), settings.out)
    return True


def parse_place(text: str) -> Place:
    """"Ilsan/일산/고양=37.68,126.77": the first name is spoken in English answers, all are accepted."""
    names, sep, coords = text.partition("=")
    parts = [n.strip() for n in names.split("/") if n.strip()]
    try:
        lat_text, lon_text = coords.split(",")
        lat, lon = float(lat_text), float(lon_text)
    except ValueError:
        raise ValueError(f"place {text!r} is not NAME[/ALIAS...]=LATITUDE,LONGITUDE") from None
    if not sep or not parts or not (-90 <= lat <= 90 and -180 <= lon <= 180):
        raise ValueError(f"place {text!r} is not NAME[/ALIAS...]=LATITUDE,LONGITUDE")
    return Place(parts[0], lat, lon, tuple(parts[1:]))


def load_config(path: Path) -> dict[str, Any]:
    """The TOML file's settings as keyword arguments for SyncSettings."""
    with path.open("rb") as f:
        raw = tomllib.load(f)
    unknown = set(raw) - {"out", "forecast_url", "air_url", "timeout_s", "forecast_days", "place"}
    if unknown:
        raise ValueError(f"{path}: unknown key(s) {', '.join(sorted(unknown))}")
    settings: dict[str, Any] = {k: v for k, v in raw.items() if k != "place"}
    if "out" in settings:
        settings["out"] = Path(settings["out"])
    places = []
    for entry in raw.get("place", []):
        try:
            places.append(Place(str(entry["name"]), float(entry["latitude"]), float(entry["longitude"]),
                                tuple(str(a) for a in entry.get("aliases", []))))
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{path}: a [[place]] needs name, latitude and longitude ({exc})") from None
    settings["places"] = tuple(places)
    return settings


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.forecast_sync", description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, help="TOML file with out, forecast_url, air_url and [[place]] tables")
    parser.add_argument("--place", action="append", default=[], metavar="NAME[/ALIAS...]=LAT,LON",
                        help="a place to fetch (repeatable; added to the configured ones)")
    parser.add_argument("--out", type=Path, help=f"the forecast file (default $HEARTH_DATA_DIR/forecast.json, else {DEFAULT_OUT})")
    parser.add_argument("--forecast-url", help=f"forecast API (default {FORECAST_URL})")
    parser.add_argument("--air-url", help=f"air-quality API (default {AIR_URL})")
    parser.add_argument("--timeout", type=float, help="seconds per request (default 20)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    try:
        options = load_config(args.config) if args.config else {"places": ()}
        places = options["places"] + tuple(parse_place(p) for p in args.place)
    except (OSError, ValueError, tomllib.TOMLDecodeError) as exc:
        parser.error(str(exc))
    if not places:
        parser.error("no places: give --place or a --config with [[place]] tables")
    for key, value in (("out", args.out), ("forecast_url", args.forecast_url), ("air_url", args.air_url),
                       ("timeout_s", args.timeout)):
        if value is not None:
            options[key] = value
    options["places"] = places
    if "out" not in options and os.environ.get("HEARTH_DATA_DIR"):
        # Where hearth itself looks when tools.forecast_file is unset: <its data folder>/forecast.json.
        options["out"] = Path(os.environ["HEARTH_DATA_DIR"]).expanduser() / "forecast.json"
    return 0 if sync(SyncSettings(**options)) else 1


if __name__ == "__main__":
    sys.exit(main())
