"""``hearth cadence``: a reply on stdin, its units and pauses as JSON on stdout, as the speaker cuts them."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from agent.speaking.cadence import speech_pauses, split_units
from firmware_py.cli import main

# The seed's example (a copy of tests/test_cadence.py's UMBRELLA).
UMBRELLA = (
    "우산은 젖은 채로 접어두면 곰팡이 슬어버리니까 현관에 그냥 펼쳐두지 마. "
    "물기 털고 반쯤 펴서 통풍되는 데 두고, 완전히 마르면 그때 접어. "
    "근데 접이식은 살대 이음새에 물이 고여서 아무리 말려도 녹슬긴 해. "
    "오래 쓸 생각이면 장우산이 답이야."
)


@pytest.fixture(autouse=True)
def _no_user_config(monkeypatch: pytest.MonkeyPatch) -> None:
    """The built-in defaults, not whatever hearth.toml the machine running the tests has."""
    monkeypatch.setattr("firmware_py.config.DEFAULT_CONFIG_PATHS", ())


def _stdin(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))


def _run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], data: bytes, *flags: str) -> tuple[int, str, str]:
    _stdin(monkeypatch, data)
    code = main(["cadence", *flags])
    out, err = capsys.readouterr()
    return code, out, err


def test_the_umbrella_reply_comes_out_in_its_five_units_with_the_speakers_pauses(monkeypatch, capsys):
    code, out, _ = _run(monkeypatch, capsys, UMBRELLA.encode("utf-8"), "--language", "ko")
    assert code == 0
    result = json.loads(out)
    assert set(result) == {"units", "pauses_s"}
    assert len(result["units"]) == 5
    assert result["units"] == split_units(UMBRELLA)  # exactly as cut, trailing spaces included
    assert "".join(result["units"]) == UMBRELLA
    assert result["pauses_s"] == [round(p, 3) for p in speech_pauses(result["units"])]
    assert result["pauses_s"][0] == 0
    assert "우산은" in out  # not ASCII-escaped


def test_closeness_below_one_shortens_the_pauses(monkeypatch, capsys):
    _, default_out, _ = _run(monkeypatch, capsys, UMBRELLA.encode("utf-8"), "--language", "ko")
    code, close_out, _ = _run(monkeypatch, capsys, UMBRELLA.encode("utf-8"), "--language", "ko", "--closeness", "0.5")
    default, close = json.loads(default_out), json.loads(close_out)
    assert code == 0
    assert close["units"] == default["units"]  # weights change the pauses, never the cuts
    assert sum(close["pauses_s"]) < sum(default["pauses_s"])
    assert all(c <= d for c, d in zip(close["pauses_s"], default["pauses_s"]))


@pytest.mark.parametrize("flags", [["--closeness", "0"], ["--busy", "11"], ["--mood", "-1"]])
def test_a_weight_outside_the_allowed_range_is_one_line_and_exit_2(monkeypatch, capsys, flags):
    code, out, err = _run(monkeypatch, capsys, b"Hello there.", *flags)
    assert code == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1
    assert f"cadence.{flags[0][2:]}" in err
    assert "Traceback" not in err


def test_invalid_utf8_on_stdin_is_one_line_and_exit_2(monkeypatch, capsys):
    code, out, err = _run(monkeypatch, capsys, "우산".encode("utf-8")[:-1] + b"\xff and more")
    assert code == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1
    assert "UTF-8" in err
    assert "Traceback" not in err


def test_empty_input_gives_no_units(monkeypatch, capsys):
    code, out, _ = _run(monkeypatch, capsys, b"")
    assert code == 0
    assert json.loads(out) == {"units": [], "pauses_s": []}


def test_lang_defaults_to_the_configured_language(monkeypatch, capsys, tmp_path: Path):
    config = tmp_path / "hearth.toml"
    config.write_text('language = "ko"\n', encoding="utf-8")
    code, out, _ = _run(monkeypatch, capsys, UMBRELLA.encode("utf-8"), "--config", str(config))
    assert code == 0
    assert json.loads(out)["units"] == split_units(UMBRELLA)


def _console_script() -> list[str]:
    script = Path(sys.executable).parent / "hearth"
    if not script.exists():
        pytest.fail(f"{script} is missing: install hearth into this environment (pip install -e .)", pytrace=False)
    return [str(script)]


@pytest.mark.parametrize("command", ["console-script", "module"])
def test_the_real_command_reads_korean_on_stdin_and_prints_json(command, tmp_path: Path):
    argv = _console_script() if command == "console-script" else [sys.executable, "-m", "firmware_py.cli"]
    # An empty config file: the built-in defaults, whatever the machine's own hearth.toml says.
    config = tmp_path / "hearth.toml"
    config.write_text("", encoding="utf-8")
    done = subprocess.run(
        [*argv, "cadence", "--lang", "ko", "--config", str(config)],
        input=UMBRELLA.encode("utf-8"),
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode("utf-8", "replace")
    result = json.loads(done.stdout.decode("utf-8"))
    assert result["units"] == split_units(UMBRELLA)
    assert result["pauses_s"] == [round(p, 3) for p in speech_pauses(result["units"])]
