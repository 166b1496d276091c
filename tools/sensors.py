"""Local environment sensors: a small protocol and a BME280 on I2C.

The BME280 driver needs ``smbus2`` (``pip install 'hearth[sensors]'``), imported only when a
sensor is opened, so machines without one need neither the package nor an I2C bus.
"""

from __future__ import annotations

import logging
import struct
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SensorReading:
    """One measurement."""

    temperature_c: float
    humidity_pct: float | None = None
    """None on sensors without a humidity element (a BMP280)."""
    pressure_hpa: float | None = None
    pm2_5: float | None = None
    """Fine dust in µg/m³, from a particle sensor if there is one."""
    pm10: float | None = None


class SensorError(Exception):
    """The sensor could not be read; the message says why in one line, for the log and the answer's data."""


class Sensor(Protocol):
    def read(self) -> SensorReading:
        """Measure now (blocking, tens of milliseconds); raises SensorError."""
        ...


_CHIP_ID = 0xD0
_CTRL_HUM = 0xF2
_STATUS = 0xF3
_CTRL_MEAS = 0xF4
_DATA = 0xF7
_BME280 = 0x60
_BMP280 = 0x58


@dataclass(frozen=True)
class _Calibration:
    t: tuple[int, int, int]
    p: tuple[int, ...]
    h: tuple[int, int, int, int, int, int] | None


class Bme280Sensor:
    """A Bosch BME280 (or BMP280, without humidity) on an I2C bus, read in forced mode.

    ``bus_factory`` opens the bus (``smbus2.SMBus`` by default) and exists so tests can hand in a fake.
    """

    def __init__(self, bus: int = 1, address: int = 0x76, bus_factory: Callable[[int], Any] | None = None) -> None:
        self.bus_number = bus
        self.address = address
        self._bus_factory = bus_factory
        self._bus: Any = None
        self._cal: _Calibration | None = None

    def open(self) -> None:
        """Open the bus and read the chip's calibration; raises SensorError with the fix in the message."""
        factory = self._bus_factory
        if factory is None:
            try:
                from smbus2 import SMBus
            except ImportError as exc:
                raise SensorError("the BME280 sensor needs smbus2: pip install 'hearth[sensors]'") from exc
            factory = SMBus
        try:
            bus = factory(self.bus_number)
        except (FileNotFoundError, PermissionError) as exc:
            raise SensorError(f"cannot open I2C bus {self.bus_number} ({exc.strerror or exc}); is I2C enabled?") from exc
        except OSError as exc:
            raise SensorError(f"cannot open I2C bus {self.bus_number}: {exc}") from exc
        try:
            chip = bus.read_byte_data(self.address, _CHIP_ID)
            if chip not in (_BME280, _BMP280):
                raise SensorError(f"device at 0x{self.address:02x} is not a BME280 (chip id 0x{chip:02x})")
            self._cal = _read_calibration(bus, self.address, humidity=chip == _BME280)
        except OSError as exc:
            _close_quietly(bus)
            raise SensorError(f"no sensor answers at 0x{self.address:02x} on I2C bus {self.bus_number}: {exc}") from exc
        except SensorError:
            _close_quietly(bus)
            raise
        self._bus = bus
        log.info("BME280 open on I2C bus %d at 0x%02x", self.bus_number, self.address)

    def close(self) -> None:
        if self._bus is not None:
            _close_quietly(self._bus)
            self._bus = None

    def read(self) -> SensorReading:
        if self._bus is None or self._cal is None:
            # Opened here too, so a sensor plugged in after start-up is picked up on the next question.
            self.open()
        bus, cal, addr = self._bus, self._cal, self.address
        assert cal is not None
        try:
            if cal.h is not None:
                bus.write_byte_data(addr, _CTRL_HUM, 0x01)  # humidity oversampling x1
            bus.write_byte_data(addr, _CTRL_MEAS, 0x25)  # temperature and pressure x1, forced mode
            for _ in range(20):
                if not bus.read_byte_data(addr, _STATUS) & 0x08:
                    break
                time.sleep(0.002)
            raw = bytes(bus.read_i2c_block_data(addr, _DATA, 8))
        except OSError as exc:
            self.close()
            raise SensorError(f"reading the BME280 failed: {exc}") from exc
        return compensate(raw, cal)


def _close_quietly(bus: Any) -> None:
    try:
        bus.close()
    except Exception:
        pass


def _read_calibration(bus: Any, addr: int, humidity: bool) -> _Calibration:
    block = bytes(bus.read_i2c_block_data(addr, 0x88, 24))
    values = struct.unpack("<HhhHhhhhhhhh", block)
    t, p = values[:3], values[3:]
    h = None
    if humidity:
        h1 = bus.read_byte_data(addr, 0xA1)
        e = bytes(bus.read_i2c_block_data(addr, 0xE1, 7))
        h2 = struct.unpack("<h", e[0:2])[0]
        h3 = e[2]
        h4 = _signed12((e[3] << 4) | (e[4] & 0x0F))
        h5 = _signed12((e[5] << 4) | (e[4] >> 4))
        h6 = struct.unpack("<b", e[6:7])[0]
        h = (h1, h2, h3, h4, h5, h6)
    return _Calibration(t, p, h)  # type: ignore[arg-type]


def _signed12(value: int) -> int:
    return value - 4096 if value & 0x800 else value


def compensate(raw: bytes, cal: _Calibration) -> SensorReading:
    """The datasheet's floating-point compensation of one 8-byte data burst (0xF7–0xFE)."""
    adc_p = (raw[0] << 12) | (raw[1] << 4) | (raw[2] >> 4)
    adc_t = (raw[3] << 12) | (raw[4] << 4) | (raw[5] >> 4)
    adc_h = (raw[6] << 8) | raw[7]
    t1, t2, t3 = cal.t
    var1 = (adc_t / 16384.0 - t1 / 1024.0) * t2
    var2 = ((adc_t / 131072.0 - t1 / 8192.0) ** 2) * t3
    t_fine = var1 + var2
    temperature = t_fine / 5120.0

    p1, p2, p3, p4, p5, p6, p7, p8, p9 = cal.p
    var1 = t_fine / 2.0 - 64000.0
    var2 = var1 * var1 * p6 / 32768.0 + var1 * p5 * 2.0
    var2 = var2 / 4.0 + p4 * 65536.0
    var1 = (p3 * var1 * var1 / 524288.0 + p2 * var1) / 524288.0
    var1 = (1.0 + var1 / 32768.0) * p1
    pressure = None
    if var1 != 0:
        pa = 1048576.0 - adc_p
        pa = (pa - var2 / 4096.0) * 6250.0 / var1
        pa += (p9 * pa * pa / 2147483648.0 + pa * p8 / 32768.0 + p7) / 16.0
        pressure = pa / 100.0

    humidity = None
    if cal.h is not None:
        h1, h2, h3, h4, h5, h6 = cal.h
        var_h = t_fine - 76800.0
        var_h = (adc_h - (h4 * 64.0 + h5 / 16384.0 * var_h)) * (
            h2 / 65536.0 * (1.0 + h6 / 67108864.0 * var_h * (1.0 + h3 / 67108864.0 * var_h))
        )
        var_h *= 1.0 - h1 * var_h / 524288.0
        humidity = min(100.0, max(0.0, var_h))
    return SensorReading(round(temperature, 2), None if humidity is None else round(humidity, 1),
                         None if pressure is None else round(pressure, 2))
