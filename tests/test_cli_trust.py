"""The command line speaks plainly: a version, quiet logs, one line for a missing button or a
model of the wrong kind, and the state shown in keyboard mode."""

from __future__ import annotations

import argparse
import asyncio
import io
import logging

import pytest

from agent.events import State
from firmware_py.cli import build_parser, main
from firmware_py.config import parse_config
from firmware_py.gpio import ConsoleLight, GpioButton, NoButton
from firmware_py.wiring import StartupError, check_roles, model_store


def test_version(capsys) -> None:
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out.startswith("hearth ")


def test_logs_are_warnings_unless_asked(monkeypatch) -> None:
    levels = []
    monkeypatch.setattr(logging, "basicConfig", lambda **kw: levels.append(kw["level"]))
    monkeypatch.setattr("firmware_py.cli._run_bench", lambda config, args, argv: asyncio.sleep(0, 0))
    for argv in (["bench"], ["bench", "-v"], ["bench", "-vv"]):
        assert main([*argv, "--suite", "en-kitchen", "--out", "unused"]) == 0
    assert levels == [logging.WARNING, logging.INFO, logging.DEBUG]


@pytest.mark.parametrize(
    ("overrides", "key"),
    [
        ({"llm.model": "whisper-tiny-en"}, "llm.model = 'whisper-tiny-en' is a asr model"),
        ({"asr.model_en": "piper-en-joe"}, "asr.model_en = 'piper-en-joe' is a tts model"),
        ({"listen.end_of_turn_model": "silero-vad"}, "listen.end_of_turn_model = 'silero-vad' is a vad model"),
        ({"llm.model": "no-such-model"}, "llm.model = 'no-such-model' is not a model hearth knows"),
    ],
)
def test_a_model_of_the_wrong_kind_names_its_key(overrides: dict, key: str) -> None:
    config = parse_config({})
    for dotted, value in overrides.items():
        section, field = dotted.split(".")
        config = config.model_copy(update={section: getattr(config, section).model_copy(update={field: value})})
    with pytest.raises(StartupError, match="^" + key.replace("(", r"\(")):
        check_roles(config, model_store(config))
    check_roles(parse_config({}), model_store(parse_config({})))  # the defaults are all of the right kind


async def test_no_gpio_is_one_line_that_names_the_way_out(monkeypatch) -> None:
    from gpiozero import Device

    # As on a machine without GPIO, whatever machine runs the test: no pin factory can be loaded.
    monkeypatch.setattr(Device, "pin_factory", None)
    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "no-such-pin-factory")
    with pytest.raises(NoButton, match="use --keyboard$"):
        GpioButton(17, 0.0, asyncio.get_running_loop()).open(lambda t: None, lambda t: None)


def test_keyboard_mode_shows_the_state() -> None:
    out = io.StringIO()
    light = ConsoleLight(out)
    for state in (State.LISTENING, State.THINKING, State.SPEAKING, State.PAUSING, State.SPEAKING, State.IDLE):
        light.show(state)
    assert out.getvalue().split() == ["[listening]", "[thinking]", "[speaking]", "[idle]"]


def test_no_sound_card_and_no_gpio_say_both_in_one_line(tmp_path, monkeypatch, capsys) -> None:
    import firmware_py.wiring as wiring
    import sounddevice as sd
    from gpiozero import Device

    from audio.portaudio import SoundDeviceSpeaker
    from audio.protocols import AudioDeviceError
    from tests.test_turn import make_deps

    # A machine with neither: no pin factory can be loaded, and PortAudio opens no output.
    monkeypatch.setattr(Device, "pin_factory", None)
    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "no-such-pin-factory")

    async def no_sound_card(self) -> None:
        raise AudioDeviceError("cannot open the default output device: Error querying device -1 (PortAudio sees no devices at all)")

    def no_device(**settings) -> None:
        raise sd.PortAudioError("Error querying device -1")

    # Checked before the models load (firmware_py/preflight.py), and again as the speaker opens.
    monkeypatch.setattr(sd, "check_output_settings", no_device)
    monkeypatch.setattr(sd, "check_input_settings", no_device)

    async def deps_over(config, speaker):
        return make_deps(speaker=speaker)

    monkeypatch.setattr(SoundDeviceSpeaker, "start", no_sound_card)
    monkeypatch.setattr(wiring, "build_turn_deps", deps_over)
    monkeypatch.setattr(wiring, "verify_models", lambda config: None)
    path = tmp_path / "hearth.toml"
    path.write_text("[echo]\nenabled = false\n")
    assert main(["run", "--config", str(path)]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("hearth: ") and "cannot open" in line]
    assert len(err) == 1
    assert "cannot open the default output device" in err[0] and err[0].endswith("use --keyboard")


@pytest.mark.parametrize(("argv", "level"), [
    (["-v", "history", "--config", "{config}"], logging.INFO),
    (["history", "--config", "{config}", "-v"], logging.INFO),
    (["-vv", "history", "--config", "{config}"], logging.DEBUG),
    (["-v", "history", "-v", "--config", "{config}"], logging.DEBUG),
    (["history", "--config", "{config}"], logging.WARNING),
    (["-v", "models", "list", "--models-dir", "{models}"], logging.INFO),
    (["models", "-v", "list", "--models-dir", "{models}"], logging.INFO),
    (["models", "list", "--models-dir", "{models}", "-vv"], logging.DEBUG),
    (["--verbose", "cadence", "--config", "{config}"], logging.INFO),
    (["cadence", "--config", "{config}", "-vv"], logging.DEBUG),
])
def test_v_is_one_flag_for_every_command_before_or_after_it(argv, level, tmp_path, monkeypatch) -> None:
    levels = []
    monkeypatch.setattr(logging, "basicConfig", lambda **kw: levels.append(kw["level"]))
    monkeypatch.setattr("sys.stdin", io.StringIO("It is noon."))
    empty = tmp_path / "hearth.toml"
    empty.write_text("")
    assert main([a.format(config=empty, models=tmp_path / "models") for a in argv]) == 0
    assert levels == [level]


def test_every_command_takes_v(capsys) -> None:
    def commands(parser, path=()):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    yield (*path, name), sub
                    yield from commands(sub, (*path, name))

    found = list(commands(build_parser()))
    assert {"demo", "run", "serve", "bench", "history", "mic-check", "cadence", "models"} <= {p[0] for p, _ in found}
    for path, parser in found:
        assert any("-v" in a.option_strings for a in parser._actions), f"hearth {' '.join(path)} has no -v"
