"""The page's token is judged as passwords are guessed: runs, sequences, repeats and words are refused."""

from __future__ import annotations

import secrets
import tomllib
from pathlib import Path

import pytest

from firmware_py.config import ConfigError, MAKE_TOKEN, load_config, parse_config

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize(("token", "found"), [
    ("abcdefghijklmnop", "a sequence"),  # 16 different characters: "64 bits" by their counts alone
    ("zyxwvutsrqponmlk", "a sequence"),
    ("0123456789abcdef", "a sequence"),
    ("poiuytrewqlkjhgf", "a keyboard run"),
    ("qwertyuiopasdfghjkl", "a common password"),
    ("1qaz2wsx3edc4rfv", "a common password"),
    ("passwordpassword", "a repeat"),
    ("kitchenkitchenkitchen", "a repeat"),
    ("correcthorsebatterystaple", "words"),
    ("hearthkitchentoken", "words"),
    ("2024-01-01-2024-12-31", "a date"),
    ("kitchen-token-2024", "fewer than 10^14 guesses"),
])
def test_a_token_made_of_a_run_a_sequence_a_repeat_or_words_is_refused(tmp_path: Path, token: str, found: str) -> None:
    path = tmp_path / "hearth.toml"
    path.write_text(f'[serve]\nweb_token = "{token}"\n')
    with pytest.raises(ConfigError) as info:
        load_config(path)
    message = str(info.value)
    assert "\n" not in message and message.startswith(f"{path}: serve.web_token: too easy to guess"), message
    assert found in message, message
    assert MAKE_TOKEN in message
    assert token not in message  # a secret, even a poor one, is not repeated into the log


def test_random_tokens_and_a_phrase_with_its_own_spelling_are_accepted() -> None:
    for _ in range(50):
        token = secrets.token_urlsafe(24)
        assert parse_config({"serve": {"web_token": token}}).serve.web_token == token
    for token in ("xK9#mQ2$vL7@nP4!", "a-secret-of-sixteen-or-more", secrets.token_urlsafe(60) * 2):
        assert parse_config({"serve": {"web_token": token}}).serve.web_token == token


def test_zxcvbn_is_a_dependency_of_hearth() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert any(d.replace(" ", "").startswith("zxcvbn>=") for d in project["dependencies"]), project["dependencies"]
