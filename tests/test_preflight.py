"""``hearth run`` and ``hearth serve`` say what is missing before any model loads: a sound device,
the GPIO button, a port already taken, a data folder that is a file; each in one line."""

from __future__ import annotations

import socket
import warnings
from pathlib import Path

import pytest

import firmware_py.serve as serve
import firmware_py.wiring as wiring
from firmware_py.cli import main


@pytest.fixture
def nothing_may_load(monkeypatch):
    """Any model load, or the models' hashing, fails the test: every check must come before them."""

    async def loading(*args, **kwargs):
        raise AssertionError("the models were loaded before what is missing was said")

    def hashing(config):
        raise AssertionError("the models were hashed before what is missing was said")

    monkeypatch.setattr(wiring, "build_turn_deps", loading)
    monkeypatch.setattr(wiring, "verify_models", hashing)
    monkeypatch.setattr(serve, "build_headless", loading)


@pytest.fixture
def config(tmp_path) -> str:
    path = tmp_path / "hearth.toml"
    path.write_text("[echo]\nenabled = false\n")
    return str(path)


def no_gpio(monkeypatch) -> None:
    """As on a machine without GPIO: each pin library gpiozero tries warns as it falls back, then
    none is left (what gpiozero does there, whatever machine runs the test)."""
    from gpiozero import Device
    from gpiozero.exc import BadPinFactory, PinFactoryFallback

    def none_left():
        for name in ("lgpio", "rpigpio", "pigpio", "native"):
            warnings.warn(PinFactoryFallback(f"Falling back from {name}: not on this machine"))
        raise BadPinFactory("Unable to load any default pin factory!")

    monkeypatch.setattr(Device, "pin_factory", None)
    monkeypatch.delenv("GPIOZERO_PIN_FACTORY", raising=False)
    monkeypatch.setattr(Device, "_default_pin_factory", staticmethod(none_left))


def sound_devices(monkeypatch, present: bool) -> None:
    """PortAudio with a microphone and a speaker, or with no device at all."""
    import sounddevice as sd

    def check(**settings) -> None:
        if not present:
            raise sd.PortAudioError("Error querying device -1")

    monkeypatch.setattr(sd, "check_input_settings", check)
    monkeypatch.setattr(sd, "check_output_settings", check)


def hearth_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.strip()]


def test_run_without_gpio_is_one_line_with_no_warnings_and_no_models_loaded(monkeypatch, config, nothing_may_load, recwarn, capsys):
    no_gpio(monkeypatch)
    sound_devices(monkeypatch, present=True)
    assert main(["run", "--config", config]) == 2
    assert hearth_lines(capsys.readouterr().err) == ["hearth: no GPIO button found on BCM 17 (BadPinFactory): use --keyboard"]
    assert [str(w.message) for w in recwarn] == []


def test_run_with_no_sound_device_says_so_and_the_way_round_the_button_before_loading(monkeypatch, config, nothing_may_load, recwarn, capsys):
    no_gpio(monkeypatch)
    sound_devices(monkeypatch, present=False)
    assert main(["run", "--config", config]) == 2
    err = hearth_lines(capsys.readouterr().err)
    assert len(err) == 1
    assert err[0].startswith("hearth: cannot open the default output device: Error querying device -1")
    assert err[0].endswith("; and no GPIO button found on BCM 17 (BadPinFactory): use --keyboard")
    assert [str(w.message) for w in recwarn] == []


def test_run_with_the_keyboard_and_no_sound_device_names_only_the_sound(monkeypatch, config, nothing_may_load, capsys):
    sound_devices(monkeypatch, present=False)
    assert main(["run", "--keyboard", "--config", config]) == 2
    err = hearth_lines(capsys.readouterr().err)
    assert len(err) == 1 and err[0].startswith("hearth: cannot open the default output device: Error querying device -1")
    assert "GPIO" not in err[0]


@pytest.mark.parametrize("flag", ["--wyoming", "--web"])
def test_serve_says_a_port_is_taken_before_loading_anything(flag, config, nothing_may_load, capsys):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        address = f"tcp://127.0.0.1:{port}" if flag == "--wyoming" else f"127.0.0.1:{port}"
        assert main(["serve", "--no-device", flag, address, "--config", config]) == 2
    what = "the Wyoming server" if flag == "--wyoming" else "the companion page"
    assert hearth_lines(capsys.readouterr().err) == [f"hearth: {what} cannot listen on {address}: Address already in use"]


def test_a_data_folder_that_is_a_file_stops_the_appliance_before_loading(tmp_path: Path, monkeypatch, config, nothing_may_load, capsys):
    passwd = tmp_path / "passwd"
    passwd.write_text("root:x:0:0:root:/root:/bin/bash\n")
    monkeypatch.setenv("HEARTH_DATA_DIR", str(passwd))
    sound_devices(monkeypatch, present=True)
    assert main(["run", "--keyboard", "--config", config]) == 2
    assert hearth_lines(capsys.readouterr().err) == [f"hearth: $HEARTH_DATA_DIR {passwd}: a file, not a folder"]
