"""``make try-ha``: the scratch Home Assistant core a newcomer tries home control with; its pieces,
without a core (the core itself: tests/test_home_assistant_scratch_core.py)."""

from __future__ import annotations

import stat
from pathlib import Path

from bench.home_assistant.core import HomeAssistantCore
from bench.home_assistant.scratch import hearth_settings, main, write_files
from firmware_py.config import load_config
from firmware_py.home_tools import home_assistant_token

ROOT = Path(__file__).resolve().parent.parent


def test_the_files_it_writes_connect_hearth_to_the_core(tmp_path) -> None:
    core = HomeAssistantCore("http://127.0.0.1:41234", "a-long-lived-token", tmp_path / "ha-config", None, 41234)
    token_file, config_file = write_files(core, tmp_path)
    # Read as hearth reads them: the configuration file names the core and the token file.
    config = load_config(config_file)
    assert config.home_assistant.url == "http://127.0.0.1:41234"
    assert config.home_assistant.token_file == token_file and config.home_assistant.area == "Kitchen"
    assert home_assistant_token(config) == "a-long-lived-token"
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    assert config_file.read_text() == hearth_settings(core.url, token_file)


def test_a_folder_with_quotes_in_its_name_is_written_as_toml_reads_it(tmp_path) -> None:
    odd = tmp_path / 'a "quoted" \\ folder'
    odd.mkdir()
    core = HomeAssistantCore("http://127.0.0.1:8123", "t", odd / "ha-config", None, 8123)
    token_file, config_file = write_files(core, odd)
    assert load_config(config_file).home_assistant.token_file == token_file


def test_without_make_setup_ha_it_says_so_in_one_line(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("HEARTH_HA_VENV", str(tmp_path / "no-venv"))
    assert main([]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines() == [f"hearth: no Home Assistant core in {tmp_path / 'no-venv'}: run `make setup-ha` first (about 1.5 minutes)"]


def test_make_try_ha_sets_the_core_up_and_runs_it() -> None:
    makefile = (ROOT / "Makefile").read_text()
    assert "\ntry-ha: setup-code setup-ha\n\t$(VENV)/bin/python -m bench.home_assistant.scratch\n" in makefile
    assert "make try-ha" in (ROOT / "docs" / "home-control.md").read_text()
