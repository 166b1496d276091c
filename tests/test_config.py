"""Configuration: defaults, overrides, and one-line errors naming the key."""

from __future__ import annotations

import os
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
        ("[llm]\nthreads = 2\n", "llm.threads: unknown key (allowed here: model, n_threads, n_ctx, max_tokens, temperature, kept_heads, jump_forward)"),
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


# -- every bad file is one line naming the file (issue: tracebacks on these) -------------------------


def _one_line_error(path: Path, overrides: dict | None = None) -> str:
    with pytest.raises(ConfigError) as info:
        load_config(path, overrides)
    message = str(info.value)
    assert "\n" not in message
    return message


def test_a_file_that_is_not_utf8_is_one_line_naming_the_file_and_the_byte(tmp_path: Path):
    path = tmp_path / "hearth.toml"
    path.write_bytes(b'# a comment\nlanguage = "\xff"\n')
    assert _one_line_error(path) == f"{path}: not UTF-8 text (line 2: byte 0xff)"


def test_a_byte_order_mark_is_read_past(tmp_path: Path):
    path = tmp_path / "hearth.toml"
    path.write_bytes(b'\xef\xbb\xbflanguage = "ko"\n')
    assert load_config(path).language == "ko"


def test_an_unknown_user_in_the_config_path_is_one_line():
    message = _one_line_error(Path("~nosuchuser-hearth/hearth.toml"))
    assert message == "~nosuchuser-hearth/hearth.toml: cannot expand ~nosuchuser-hearth: no such user"


@pytest.mark.parametrize("key", ["models_dir", "tools.data_dir", "tools.recipes_dir", "tools.forecast_file"])
def test_an_unknown_user_in_a_path_value_is_one_line_naming_the_key(tmp_path: Path, key: str):
    path = tmp_path / "hearth.toml"
    section, _, leaf = key.rpartition(".")
    path.write_text((f"[{section}]\n" if section else "") + f'{leaf} = "~nosuchuser-hearth/x"\n')
    message = _one_line_error(path)
    assert message.startswith(f"{path}: {key}: cannot expand ~nosuchuser-hearth: no such user")


def test_path_values_are_expanded_once_when_read(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    path = tmp_path / "hearth.toml"
    path.write_text('models_dir = "~/models"\n[tools]\ndata_dir = "~/data"\n')
    config = load_config(path)
    assert (config.models_dir, config.tools.data_dir) == (tmp_path / "models", tmp_path / "data")


def test_an_empty_path_value_is_refused_not_read_as_the_working_directory(tmp_path: Path):
    path = tmp_path / "hearth.toml"
    path.write_text('[tools]\nrecipes_dir = ""\n')
    assert "tools.recipes_dir: an empty path" in _one_line_error(path)


def test_a_directory_given_as_the_config_is_one_line(tmp_path: Path):
    assert _one_line_error(tmp_path) == f"{tmp_path}: is a directory, not a configuration file"


def test_a_fifo_given_as_the_config_is_refused_without_waiting_for_a_writer(tmp_path: Path):
    fifo = tmp_path / "hearth.toml"
    os.mkfifo(fifo)
    assert _one_line_error(fifo) == f"{fifo}: not a regular file"


def test_a_huge_file_is_refused_before_it_is_parsed(tmp_path: Path):
    path = tmp_path / "hearth.toml"
    path.write_bytes(b"#" * (2 << 20))
    assert "larger than 1024 KiB" in _one_line_error(path)


@pytest.mark.parametrize(
    "toml, expected",
    [
        ("a = " + "[" * 3000 + "]" * 3000 + "\n", "not valid TOML (nested too deeply)"),
        ("language = " + "9" * 5000 + "\n", "not valid TOML (Exceeds the limit"),
        ("[llm]\ntemperature = nan\n", "llm.temperature: Input should be a finite number"),
        ("[cadence]\nmood = inf\n", "cadence.mood: Input should be a finite number"),
    ],
)
def test_toml_that_python_chokes_on_is_one_line(tmp_path: Path, toml: str, expected: str):
    path = tmp_path / "hearth.toml"
    path.write_text(toml)
    message = _one_line_error(path)
    assert message.startswith(f"{path}: ") and expected in message, message


def test_a_long_bad_value_is_shortened_in_the_message(tmp_path: Path):
    path = tmp_path / "hearth.toml"
    path.write_text(f'language = "{"x" * 5000}"\n')
    message = _one_line_error(path)
    assert len(message) < len(str(path)) + 200, message


@pytest.mark.parametrize("section", ["button", "cadence", "llm"])
def test_a_section_that_is_not_a_table_with_a_dotted_override_is_one_line(tmp_path: Path, section: str):
    path = tmp_path / "hearth.toml"
    path.write_text(f"{section} = 3\n")
    message = _one_line_error(path, {f"{section}.kind": "keyboard", "language": "ko"})
    assert message == f"{path}: {section}: should be a table of settings (a [{section}] section), got 3"


def test_a_bad_override_is_blamed_on_the_command_line_not_the_file(tmp_path: Path):
    path = tmp_path / "hearth.toml"
    path.write_text('language = "en"\n')
    message = _one_line_error(path, {"models_dir": "~nosuchuser-hearth/m"})
    assert message.startswith("command line: models_dir: cannot expand ~nosuchuser-hearth")


@pytest.mark.parametrize(
    "argv, expected",
    [
        (["run", "--keyboard", "--config", "{dir}/button.toml"], "{dir}/button.toml: button: should be a table of settings"),
        (["history", "--config", "{dir}/latin1.toml"], "{dir}/latin1.toml: not UTF-8 text (line 1: byte 0xe9)"),
        (["history", "--config", "{dir}"], "{dir}: is a directory, not a configuration file"),
        (["history", "--config", "~nosuchuser-hearth/h.toml"], "~nosuchuser-hearth/h.toml: cannot expand ~nosuchuser-hearth"),
        (["history", "--models-dir", "~nosuchuser-hearth/m"], "command line: models_dir: cannot expand ~nosuchuser-hearth"),
        (["demo", "--data-dir", "~nosuchuser-hearth/d", "--config", "{dir}/ok.toml"], "--data-dir ~nosuchuser-hearth/d: cannot expand"),
    ],
)
def test_the_command_prints_one_line_without_a_traceback_and_exits_2(tmp_path: Path, capsys, argv: list[str], expected: str):
    from firmware_py.cli import main

    (tmp_path / "button.toml").write_text("button = 3\n")
    (tmp_path / "latin1.toml").write_bytes('language = "café"\n'.encode("latin-1"))
    (tmp_path / "ok.toml").write_text("")
    code = main([a.replace("{dir}", str(tmp_path)) for a in argv])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("hearth: " + expected.replace("{dir}", str(tmp_path))), err


@pytest.mark.parametrize("token", [
    " " * 16, "\t" * 20, "a" * 64, "ab" * 16, "password" * 2, "   0123456789abc   ", "0123456789abcde",
])
def test_a_web_token_that_is_blank_or_easy_to_guess_is_refused_in_one_line_saying_how_to_make_one(tmp_path: Path, token: str):
    path = tmp_path / "hearth.toml"
    path.write_text(f'[serve]\nweb_token = "{token}"\n')
    message = _one_line_error(path)
    assert message.startswith(f"{path}: serve.web_token: "), message
    assert 'python -c "import secrets; print(secrets.token_urlsafe(24))"' in message
    if token.strip():
        assert token.strip() not in message  # a secret, even a poor one, is not repeated into the log


def test_a_web_token_made_as_the_message_says_is_accepted():
    import secrets

    for _ in range(200):  # a random token of 32 URL-safe characters is always well above the bar
        token = secrets.token_urlsafe(24)
        assert parse_config({"serve": {"web_token": token}}).serve.web_token == token
    assert parse_config({"serve": {"web_token": "a-secret-of-sixteen-or-more"}}).serve.web_token == "a-secret-of-sixteen-or-more"
    assert parse_config({}).serve.web_token is None


def test_a_place_name_with_control_characters_is_refused_in_one_line(tmp_path: Path):
    path = tmp_path / "hearth.toml"
    path.write_text('[tools]\nhome = "Ilsan\\u001b[2J\\u001b]0;pwned\\u0007"\n')
    message = _one_line_error(path)
    # It is in the words the recognizer expects, so it could come back in a transcript and be kept.
    assert message.startswith(f"{path}: tools.home: a name cannot hold control characters"), message
    assert "\x1b" not in message and "\\x1b[2J" in message


def test_the_start_up_line_shows_configured_names_escaped(tmp_path: Path, capsys, monkeypatch):
    from firmware_py.cli import main

    async def ran(config, choice) -> int:
        return 0

    async def all_there(config, choice) -> None:
        pass  # no sound card or GPIO needed to show the line

    monkeypatch.setattr("firmware_py.serve.run", ran)
    monkeypatch.setattr("firmware_py.preflight.preflight", all_there)
    path = tmp_path / "hearth.toml"
    path.write_text('[llm]\nmodel = "smollm\\u001b[2J"\n')
    assert main(["run", "--config", str(path)]) == 0
    err = capsys.readouterr().err
    assert "talker smollm\\x1b[2J" in err and "\x1b" not in err
