"""Weather and air quality: the forecast file, the sensor, the spoken answers and the sync job.

Time is injected (no sleeps); the sync job talks to an HTTP server on 127.0.0.1, never the network.
"""

from __future__ import annotations

import json
import logging
import os
import struct
import sys
import threading
from collections.abc import Iterator
from datetime import date, datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest

import tools.forecast_sync as sync_module
from tools.forecast import When, air_grade, load_forecast, parse_when
from tools.forecast_sync import Place, SyncSettings, main, parse_place, sync
from tools.registry import ToolRegistry
from tools.sensors import Bme280Sensor, SensorError, SensorReading
from tools.weather import WeatherSettings, weather_tools

KST = timezone(timedelta(hours=9))
NOW = datetime(2026, 5, 13, 14, 20, tzinfo=KST)  # a Wednesday afternoon in Korea


def location(name: str, aliases: list[str], base: float, start: datetime) -> dict[str, Any]:
    """Three days of hours from ``start``: rain from 20:00 each evening, dust that grows through the day."""
    hours = [start + timedelta(hours=i) for i in range(72)]
    return {
        "name": name, "aliases": aliases, "utc_offset_s": 9 * 3600,
        "hourly": [{"time": h.isoformat(), "temperature_c": base + h.hour / 4, "humidity_pct": 55,
                    "precipitation_probability_pct": 80 if h.hour >= 20 else 10,
                    "condition": "rain" if h.hour >= 20 else "partly_cloudy"} for h in hours],
        "daily": [{"date": (start.date() + timedelta(days=d)).isoformat(), "temp_min_c": base - 1 + d, "temp_max_c": base + 9,
                   "precipitation_probability_pct": 30 + d, "condition": "overcast"} for d in range(3)],
        "air_quality": [{"time": h.isoformat(), "pm2_5": 10 + h.hour, "pm10": 20 + h.hour} for h in hours[:48]],
    }


def forecast_file(folder: Path, fetched_at: datetime, **overrides: Any) -> Path:
    start = datetime(2026, 5, 13, tzinfo=KST)
    cache = {"version": 1, "fetched_at": fetched_at.isoformat(), "source": "test",
             "locations": {"ilsan": location("Ilsan", ["일산", "고양"], 14, start),
                           "seoul": location("Seoul", ["서울"], 16, start)}}
    cache.update(overrides)
    path = folder / "forecast.json"
    path.write_text(json.dumps(cache, ensure_ascii=False), encoding="utf-8")
    return path


class FakeSensor:
    def __init__(self, reading: SensorReading | None = None, measures_dust: bool = False) -> None:
        self.reading = reading or SensorReading(22.4, 45.0, 1012.5)
        self.measures_dust = measures_dust
        self.reads = 0

    def read(self) -> SensorReading:
        self.reads += 1
        if isinstance(self.reading, Exception):
            raise self.reading
        return self.reading


def make_tools(path: Path, language: str = "en", sensor: Any = None, now: datetime = NOW, **settings: Any) -> dict[str, Any]:
    config = WeatherSettings(forecast_path=path, home=settings.pop("home", "Ilsan"), language=language, **settings)
    return {t.name: t for t in weather_tools(config, sensor, now=lambda: now)}


async def ask(tools: dict[str, Any], name: str, **args: Any):
    spec = tools[name]
    return await spec.run(spec.args.model_validate(args))


@pytest.fixture
def fresh(tmp_path: Path) -> Path:
    return forecast_file(tmp_path, NOW - timedelta(hours=2))


# -- when ------------------------------------------------------------------------------


@pytest.mark.parametrize("said, canonical", [
    (None, "now"), ("now", "now"), ("지금", "now"), ("today", "today"), ("오늘", "today"), ("this afternoon", "today"),
    ("tonight", "tonight"), ("오늘 밤", "tonight"), ("오늘밤", "tonight"), ("저녁에", "tonight"),
    ("tomorrow", "tomorrow"), ("내일", "tomorrow"), ("내일 아침", "tomorrow"), ("모레", "+2"), ("day after tomorrow", "+2"),
    ("Friday", "friday"), ("on fri", "friday"), ("금요일", "friday"), ("이번 주 토요일에", "saturday"), ("next monday", "next monday"),
    # the weekend is asked about by its Saturday
    ("this weekend", "saturday"), ("over the weekend", "saturday"), ("이번 주말", "saturday"), ("주말에", "saturday"),
    ("next weekend", "next saturday"),
])
def test_when_words(said: str | None, canonical: str) -> None:
    when = parse_when(said)
    assert when is not None and when.canonical == canonical


def test_when_resolves_at_the_place() -> None:
    wednesday = NOW.date()
    assert parse_when("friday").days_from(wednesday) == 2  # type: ignore[union-attr]
    assert parse_when("wednesday").days_from(wednesday) == 0  # type: ignore[union-attr]
    assert parse_when("next wednesday").days_from(wednesday) == 7  # type: ignore[union-attr]
    assert parse_when("next year") is None and parse_when("어제") is None


# -- forecast file ------------------------------------------------------------------------


async def test_now_from_file_says_its_age(fresh: Path) -> None:
    out = await ask(make_tools(fresh), "weather")
    assert out.text == ("Now in Ilsan: partly cloudy, 18 degrees, humidity 55 percent, 10 percent chance of rain. "
                        "Forecast as of 2 hours ago.")
    assert out.data["source"] == "forecast" and out.data["age_s"] == 7200 and out.data["stale"] is False
    assert out.data["temperature_c"] == 17.5 and out.data["when"] == "now"


async def test_days_and_tonight(fresh: Path) -> None:
    tools = make_tools(fresh)
    out = await ask(tools, "weather", when="tomorrow")
    assert out.text == "Tomorrow in Ilsan: overcast, 14 to 23 degrees, 31 percent chance of rain. Forecast as of 2 hours ago."
    assert out.data["day"] == "2026-05-14"
    out = await ask(tools, "weather", when="Friday")
    assert out.text.startswith("On Friday in Ilsan: overcast, 15 to 23 degrees") and out.data["day"] == "2026-05-15"
    out = await ask(tools, "weather", location="Seoul", when="tonight")
    # 18:00 to 06:00: four hours of rain among twelve is what gets said, not the more common cloud.
    assert out.text.startswith("Tonight in Seoul: rain, 16 to 22 degrees, 80 percent chance of rain.")
    assert (out.data["temp_min_c"], out.data["temp_max_c"]) == (16.0, 21.75)


async def test_stale_data_is_flagged(tmp_path: Path) -> None:
    path = forecast_file(tmp_path, NOW - timedelta(days=3))
    out = await ask(make_tools(path), "weather")
    assert out.text.endswith("Forecast as of 3 days ago, so it may be out of date.") and out.data["stale"] is True
    out = await ask(make_tools(path, "ko"), "weather")
    assert out.text.endswith("3일 전 기준 예보라 지금과 다를 수 있어요.")
    # The limit is a setting: two hours is stale for a speaker that asks for one hour.
    fresh = forecast_file(tmp_path, NOW - timedelta(hours=2))
    out = await ask(make_tools(fresh, stale_after_s=3600), "air_quality")
    assert out.text.endswith("Forecast as of 2 hours ago, so it may be out of date.") and out.data["stale"] is True


async def test_unknown_place_and_missing_days(fresh: Path) -> None:
    tools = make_tools(fresh)
    out = await ask(tools, "weather", location="Busan")
    assert out.text == "I don't have weather for Busan. I have Ilsan and Seoul."
    assert out.data["error"] == "unknown_place"
    out = await ask(tools, "weather", when="sunday")
    assert out.text == "I don't have a forecast for Ilsan on Sunday. Forecast as of 2 hours ago."
    assert out.data["error"] == "no_time"
    out = await ask(tools, "weather", when="last year")
    assert out.data["error"] == "unknown_when" and "tomorrow" in out.text
    out = await ask(make_tools(fresh, "ko"), "air_quality", location="부산")
    assert out.text == "부산 미세먼지 정보는 없어요. 일산, 서울 미세먼지는 알 수 있어요."


async def test_no_file_and_broken_file(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    missing = make_tools(tmp_path / "none.json")
    out = await ask(missing, "weather")
    assert out.text == "I don't have any weather data yet." and out.data["error"] == "no_data"
    broken = tmp_path / "broken.json"
    broken.write_text('{"version": 1, "fetched_at": "yesterday"}')
    with caplog.at_level(logging.WARNING):
        out = await ask(make_tools(broken), "weather")
    assert out.text == "I can't read the weather data right now." and out.data["error"] == "unavailable"
    assert "fetched_at" in caplog.text


async def test_korean_aliases_and_answers(fresh: Path) -> None:
    tools = make_tools(fresh, "ko")
    out = await ask(tools, "weather", location="서울", when="내일")
    assert out.text == "내일 서울 날씨: 흐림, 최저 16도, 최고 25도, 강수 확률 31퍼센트. 2시간 전 기준 예보예요."
    out = await ask(tools, "weather", location="Ilsan")  # an English name still answers in Korean, with the Korean name
    assert out.text.startswith("지금 일산 날씨: 구름 조금, 18도") and out.text.endswith("2시간 전 기준 예보예요.")
    out = await ask(make_tools(fresh), "weather", location="일산", when="오늘 밤")
    assert out.text.startswith("Tonight in Ilsan: rain")
    out = await ask(tools, "air_quality", location="고양")
    assert out.text == "일산 미세먼지는 보통이에요. 초미세먼지 24, 미세먼지 34마이크로그램이에요. 2시간 전 기준 예보예요."


async def test_home_words_and_a_single_place(tmp_path: Path) -> None:
    start = datetime(2026, 5, 13, tzinfo=KST)
    path = forecast_file(tmp_path, NOW - timedelta(minutes=30), locations={"x": location("Goyang", [], 10, start)})
    tools = make_tools(path, home="home")  # the setting need not spell the one synced place
    for where in (None, "home", "집", "here"):
        out = await ask(tools, "weather", location=where)
        assert out.text.startswith("Now in Goyang:") and out.text.endswith("Forecast as of 30 minutes ago."), where


async def test_file_is_reread_when_it_changes(tmp_path: Path) -> None:
    path = forecast_file(tmp_path, NOW - timedelta(hours=5))
    tools = make_tools(path)
    assert (await ask(tools, "weather")).data["age_s"] == 5 * 3600
    forecast_file(tmp_path, NOW - timedelta(minutes=10))
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    assert (await ask(tools, "weather")).data["age_s"] == 600


# -- air quality ----------------------------------------------------------------------------


def test_air_grades_on_the_korean_scale() -> None:
    assert air_grade(15, 30) == "good" and air_grade(16, 30) == "moderate" and air_grade(10, 81) == "unhealthy"
    assert air_grade(76, None) == "very_unhealthy" and air_grade(None, None) is None


async def test_air_quality_from_file(fresh: Path) -> None:
    out = await ask(make_tools(fresh), "air_quality", location="Seoul")
    assert out.text == "Air quality in Seoul is moderate: PM2.5 24, PM10 34 micrograms per cubic metre. Forecast as of 2 hours ago."
    assert out.data["grade"] == "moderate" and out.data["pm2_5"] == 24


# -- sensor -------------------------------------------------------------------------------


async def test_indoor_sensor_then_forecast(fresh: Path) -> None:
    sensor = FakeSensor()
    out = await ask(make_tools(fresh, sensor=sensor), "weather")
    assert out.text.startswith("Inside it's 22 degrees with 45 percent humidity. Measured just now. Now in Ilsan: partly cloudy")
    assert out.data["source"] == "sensor" and out.data["indoor"] is True and out.data["outdoor"]["source"] == "forecast"
    out = await ask(make_tools(fresh, "ko", sensor=sensor), "weather", location="집")
    assert out.text.startswith("실내는 22도, 습도 45퍼센트예요. 방금 측정한 값이에요. 지금 일산 날씨:")
    assert sensor.reads == 2


async def test_outdoor_sensor_is_the_answer(fresh: Path) -> None:
    out = await ask(make_tools(fresh, sensor=FakeSensor(SensorReading(-3.4, 80.0)), sensor_outdoor=True), "weather")
    assert out.text == "Outside it's minus 3 degrees with 80 percent humidity. Measured just now."
    assert "outdoor" not in out.data and out.data["indoor"] is False


async def test_sensor_only_answers_home_now(fresh: Path) -> None:
    sensor = FakeSensor()
    tools = make_tools(fresh, sensor=sensor)
    assert (await ask(tools, "weather", when="tomorrow")).data["source"] == "forecast"
    assert (await ask(tools, "weather", location="Seoul")).data["source"] == "forecast"
    assert (await ask(tools, "air_quality")).data["source"] == "forecast"  # no dust sensor attached
    assert sensor.reads == 0


async def test_sensor_failure_falls_back_to_the_file(fresh: Path) -> None:
    sensor = FakeSensor(SensorError("no sensor answers at 0x76 on I2C bus 1"))  # type: ignore[arg-type]
    out = await ask(make_tools(fresh, sensor=sensor), "weather")
    assert out.text.startswith("The home sensor didn't answer, so this is from the forecast. Now in Ilsan:")
    assert out.text.endswith("Forecast as of 2 hours ago.")
    assert out.data["source"] == "forecast" and out.data["failed"][0]["source"] == "sensor"
    out = await ask(make_tools(fresh, "ko", sensor=sensor), "weather")
    assert out.text.startswith("집 센서를 읽지 못해서 예보로 알려 드려요. 지금 일산 날씨:")


async def test_dust_sensor_answers_air_quality(fresh: Path) -> None:
    sensor = FakeSensor(SensorReading(21.0, 40.0, None, pm2_5=8.2, pm10=12.0), measures_dust=True)
    out = await ask(make_tools(fresh, sensor=sensor), "air_quality")
    assert out.text == "Indoor air is good: PM2.5 8, PM10 12 micrograms per cubic metre. Measured just now."
    out = await ask(make_tools(fresh, "ko", sensor=sensor), "air_quality")
    assert out.text == "실내 미세먼지는 좋음이에요. 초미세먼지 8, 미세먼지 12마이크로그램이에요. 방금 측정한 값이에요."


def test_tool_specs(fresh: Path) -> None:
    tools = make_tools(fresh)
    registry = ToolRegistry(tools.values())
    assert registry.names == ["weather", "air_quality"]
    for spec in tools.values():
        assert spec.side_effects == "read" and spec.expected_s == 0.4 and spec.timeout_s == 3.0
        assert registry.slow(spec.name, threshold_s=0.3)
    assert set(tools["weather"].schema()["properties"]) == {"location", "when"}
    assert set(tools["air_quality"].schema()["properties"]) == {"location"}
    with pytest.raises(ValueError):
        make_tools(fresh, "fr")


# -- BME280 --------------------------------------------------------------------------------


class FakeBus:
    """Registers of a BME280 whose temperature and pressure trimming is the datasheet's worked example."""

    def __init__(self, chip: int = 0x60, fail_reads: bool = False) -> None:
        cal = struct.pack("<HhhHhhhhhhhh", 27504, 26435, -1000, 36477, -10685, 3024, 2855, 140, -7, 15500, -14600, 6000)
        self.regs = {0xD0: chip, 0xA1: 75, 0xF3: 0}
        self.regs.update({0x88 + i: b for i, b in enumerate(cal)})
        # H2=362, H3=0, H4=313, H5=50, H6=30: values of a real part.
        self.regs.update({0xE1 + i: b for i, b in enumerate([0x6A, 0x01, 0x00, 0x13, 0x29, 0x03, 0x1E])})
        adc_t, adc_p, adc_h = 519888, 415148, 30000
        data = [adc_p >> 12, (adc_p >> 4) & 0xFF, (adc_p & 0xF) << 4, adc_t >> 12, (adc_t >> 4) & 0xFF, (adc_t & 0xF) << 4,
                adc_h >> 8, adc_h & 0xFF]
        self.regs.update({0xF7 + i: b for i, b in enumerate(data)})
        self.fail_reads = fail_reads
        self.writes: list[tuple[int, int]] = []
        self.closed = False

    def read_byte_data(self, addr: int, reg: int) -> int:
        return self.regs[reg]

    def read_i2c_block_data(self, addr: int, reg: int, length: int) -> list[int]:
        if self.fail_reads and reg == 0xF7:
            raise OSError(121, "Remote I/O error")
        return [self.regs.get(reg + i, 0) for i in range(length)]

    def write_byte_data(self, addr: int, reg: int, value: int) -> None:
        self.writes.append((reg, value))

    def close(self) -> None:
        self.closed = True


def test_bme280_compensation() -> None:
    bus = FakeBus()
    sensor = Bme280Sensor(bus_factory=lambda n: bus)
    reading = sensor.read()  # opens on first use
    assert reading.temperature_c == pytest.approx(25.08, abs=0.01)
    assert reading.pressure_hpa == pytest.approx(1006.53, abs=0.01)
    assert reading.humidity_pct is not None and 0 < reading.humidity_pct < 100
    assert (0xF4, 0x25) in bus.writes  # forced mode: one measurement per question, asleep otherwise


def test_bme280_errors_are_clear(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "smbus2", None)
    with pytest.raises(SensorError, match=r"hearth\[sensors\]"):
        Bme280Sensor().open()

    def no_bus(number: int) -> Any:
        raise FileNotFoundError(2, "No such file or directory")

    with pytest.raises(SensorError, match="is I2C enabled"):
        Bme280Sensor(bus_factory=no_bus).open()
    wrong = FakeBus(chip=0x55)
    with pytest.raises(SensorError, match="chip id 0x55"):
        Bme280Sensor(bus_factory=lambda n: wrong).open()
    assert wrong.closed
    flaky = FakeBus(fail_reads=True)
    with pytest.raises(SensorError, match="reading the BME280 failed"):
        Bme280Sensor(bus_factory=lambda n: flaky).read()
    assert flaky.closed
    bmp = Bme280Sensor(bus_factory=lambda n: FakeBus(chip=0x58)).read()
    assert bmp.humidity_pct is None and bmp.temperature_c == pytest.approx(25.08, abs=0.01)


# -- sync job -------------------------------------------------------------------------------


def open_meteo_forecast(hours: int = 48) -> dict[str, Any]:
    times = [(datetime(2026, 5, 13) + timedelta(hours=i)).strftime("%Y-%m-%dT%H:%M") for i in range(hours)]
    return {
        "latitude": 37.68, "longitude": 126.77, "utc_offset_seconds": 32400, "timezone": "Asia/Seoul",
        "hourly": {"time": times, "temperature_2m": [15.0 + i % 24 / 4 for i in range(hours)],
                   "relative_humidity_2m": [60] * hours, "precipitation_probability": [5] * hours,
                   "weather_code": [61 if i % 24 >= 20 else 2 for i in range(hours)], "wind_speed_10m": [7.2] * hours},
        "daily": {"time": ["2026-05-13", "2026-05-14"], "weather_code": [3, 95], "temperature_2m_min": [12.1, 13.0],
                  "temperature_2m_max": [22.4, 19.0], "precipitation_probability_max": [20, 90]},
    }


def open_meteo_air(hours: int = 48) -> dict[str, Any]:
    times = [(datetime(2026, 5, 13) + timedelta(hours=i)).strftime("%Y-%m-%dT%H:%M") for i in range(hours)]
    return {"utc_offset_seconds": 32400, "hourly": {"time": times, "pm10": [40.0] * hours, "pm2_5": [20.5] * hours}}


class CannedServer:
    """Open-Meteo's two endpoints on 127.0.0.1, answering whatever a test puts in ``routes``."""

    def __init__(self) -> None:
        self.routes: dict[str, tuple[int, bytes]] = {
            "/v1/forecast": (200, json.dumps(open_meteo_forecast()).encode()),
            "/v1/air-quality": (200, json.dumps(open_meteo_air()).encode()),
        }
        self.requests: list[tuple[str, dict[str, list[str]]]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                url = urlparse(self.path)
                server.requests.append((url.path, parse_qs(url.query)))
                status, body = server.routes.get(url.path, (404, b"{}"))
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server() -> Iterator[CannedServer]:
    s = CannedServer()
    yield s
    s.close()


def settings_for(server: CannedServer, out: Path) -> SyncSettings:
    return SyncSettings((Place("Ilsan", 37.68, 126.77, ("일산",)),), out, f"{server.base}/v1/forecast",
                        f"{server.base}/v1/air-quality", timeout_s=5)


async def test_sync_writes_a_file_the_tools_read(server: CannedServer, tmp_path: Path) -> None:
    out = tmp_path / "state" / "forecast.json"
    fetched = datetime(2026, 5, 13, 3, 0, tzinfo=timezone.utc)  # 12:00 in Korea
    assert sync(settings_for(server, out), now=lambda: fetched) is True
    (path, query), (air_path, air_query) = server.requests
    assert path == "/v1/forecast" and query["latitude"] == ["37.68"] and query["timezone"] == ["auto"]
    assert "temperature_2m" in query["hourly"][0] and "precipitation_probability_max" in query["daily"][0]
    assert air_path == "/v1/air-quality" and set(air_query["hourly"][0].split(",")) == {"pm10", "pm2_5"}
    cache = load_forecast(out)
    ilsan = cache.locations["ilsan"]
    assert ilsan.aliases == ["일산"] and ilsan.hourly[0].time == datetime(2026, 5, 13, tzinfo=KST)
    assert ilsan.daily[1].condition == "thunderstorm" and ilsan.air_quality[0].grade == "moderate"
    tools = make_tools(out, "ko")
    answer = await ask(tools, "weather", location="일산", when="내일")
    assert answer.text == "내일 일산 날씨: 뇌우, 최저 13도, 최고 19도, 강수 확률 90퍼센트. 2시간 전 기준 예보예요."


def test_sync_replaces_the_file_atomically(server: CannedServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "forecast.json"
    out.write_text("old")
    renames: list[tuple[str, str]] = []
    real_replace = os.replace

    def spy(src: str, dst: str) -> None:
        renames.append((str(src), str(dst)))
        assert out.read_text() == "old"  # the old file is whole until the rename
        real_replace(src, dst)

    monkeypatch.setattr(sync_module.os, "replace", spy)
    assert sync(settings_for(server, out))
    [(src, dst)] = renames
    assert Path(src).parent == out.parent and dst == str(out) and src != dst
    assert sorted(p.name for p in tmp_path.iterdir()) == ["forecast.json"]  # no temp file left behind
    assert json.loads(out.read_text())["version"] == 1


@pytest.mark.parametrize("route, status, body, reason", [
    ("/v1/forecast", 500, b'{"error": true}', "HTTP 500"),
    ("/v1/forecast", 200, b"<html>not json</html>", "did not send JSON"),
    ("/v1/air-quality", 200, b'{"utc_offset_seconds": 0, "hourly": {"time": ["2026-05-13T00:00"], "pm10": []}}', "does not match"),
    ("/v1/air-quality", 503, b"", "HTTP 503"),
])
def test_sync_failure_keeps_the_old_file(server: CannedServer, tmp_path: Path, caplog: pytest.LogCaptureFixture,
                                         route: str, status: int, body: bytes, reason: str) -> None:
    out = tmp_path / "forecast.json"
    out.write_bytes(b'{"old": true}')
    server.routes[route] = (status, body)
    with caplog.at_level(logging.INFO, logger="tools.forecast_sync"):
        assert sync(settings_for(server, out)) is False
    assert out.read_bytes() == b'{"old": true}' and sorted(p.name for p in tmp_path.iterdir()) == ["forecast.json"]
    [record] = caplog.records
    assert record.levelno == logging.WARNING and reason in record.getMessage() and "keeping" in record.getMessage()


def test_sync_without_network(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    closed = CannedServer()
    closed.close()  # nothing listens on that port any more
    out = tmp_path / "forecast.json"
    with caplog.at_level(logging.WARNING):
        assert sync(settings_for(closed, out)) is False
    assert not out.exists() and "cannot reach" in caplog.text and len(caplog.records) == 1


def test_command_line(server: CannedServer, tmp_path: Path) -> None:
    out = tmp_path / "forecast.json"
    urls = ["--forecast-url", f"{server.base}/v1/forecast", "--air-url", f"{server.base}/v1/air-quality"]
    assert main(["--place", "Seoul/서울=37.57,126.98", "--out", str(out), *urls]) == 0
    assert json.loads(out.read_text())["locations"]["seoul"]["aliases"] == ["서울"]
    config = tmp_path / "forecast.toml"
    config.write_text(f'out = "{out}"\nforecast_url = "{server.base}/v1/forecast"\nair_url = "{server.base}/v1/air-quality"\n'
                      '[[place]]\nname = "Ilsan"\naliases = ["일산"]\nlatitude = 37.68\nlongitude = 126.77\n')
    assert main(["--config", str(config)]) == 0
    assert list(json.loads(out.read_text())["locations"]) == ["ilsan"]
    server.routes["/v1/forecast"] = (500, b"")
    assert main(["--config", str(config)]) == 1
    with pytest.raises(SystemExit) as exited:
        main(["--out", str(out)])
    assert exited.value.code == 2


def test_place_arguments() -> None:
    assert parse_place("Ilsan/일산/고양=37.68,126.77") == Place("Ilsan", 37.68, 126.77, ("일산", "고양"))
    for bad in ("Ilsan", "Ilsan=37.68", "=1,2", "Ilsan=95,10", "Ilsan=a,b"):
        with pytest.raises(ValueError):
            parse_place(bad)


def test_when_canonical_names_and_defaults() -> None:
    assert When("day", days_ahead=1).canonical == "tomorrow" and When("now").days_from(date(2026, 5, 13)) == 0
