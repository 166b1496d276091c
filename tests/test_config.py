"""Configuration: defaults, overrides, and one-line errors naming the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from firmware_py.config import ConfigError, HearthConfig, load_config, parse_config


def test_no_file_gives_the_embedded_default(tmp_path: Path):
    config = parse_config({})
    assert config == HearthConfig()
    assert config.language == "en"
    assert config.button.pin == 17
    assert config.llm.model == "smollm2-135m-instruct"


def test_file_values_and_overrides(tmp_path: Path):
    path = tmp_path / "hearth.toml"
    path.write_text('language = "ko"\n[llm]\nn_threads = 4\n[button]\npin = 27\n')
    config = load_config(path, {"llm.max_tokens": 64})
    assert (config.language, config.llm.n_threads, config.button.pin, config.llm.max_tokens) == ("ko", 4, 27, 64)


@pytest.mark.parametrize(
    "toml, expected",
    [
        ("[llm]\nn_threads = 0\n", "llm.n_threads: Input should be greater than or equal to 1 (got 0)"),
        ('language = "fr"\n', "language: Input should be 'en' or 'ko' (got 'fr')"),
        ("[button]\npin = 40\n", "button.pin: Input should be less than or equal to 27 (got 40)"),
        ("[llm]\nthreads = 2\n", "llm.threads: unknown key (allowed here: model, n_threads, n_ctx, max_tokens, temperature, kept_heads)"),
        ("[vad]\nthreshold = 'high'\n", "vad.threshold: Input should be a valid number"),
    ],
)
def test_bad_value_is_one_line_naming_key_and_what_is_allowed(tmp_path: Path, toml: str, expected: str):
    path = tmp_path / "hearth.toml"
    path.write_text(toml)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"{path}: ")
    assert expected in message


def test_broken_toml_and_missing_file_are_one_line(tmp_path: Path):
    path = tmp_path / "hearth.toml"
    path.write_text("[llm\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(path)
    with pytest.raises(ConfigError, match="no such configuration file"):
        load_config(tmp_path / "absent.toml")


def test_hearth_models_uses_the_configured_models_dir(tmp_path: Path, monkeypatch, capsys):
    from firmware_py import config as config_module
    from firmware_py.cli import main

    conf = tmp_path / "hearth.toml"
    conf.write_text(f'models_dir = "{tmp_path / "elsewhere"}"\n')
    monkeypatch.delenv("HEARTH_MODELS_DIR", raising=False)
    monkeypatch.setattr(config_module, "DEFAULT_CONFIG_PATHS", (conf,))
    main(["models", "list"])
    assert str(tmp_path / "elsewhere") in capsys.readouterr().out
