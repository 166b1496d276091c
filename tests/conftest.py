"""Shared fixtures.

Integration tests use the real models in the models directory (``HEARTH_MODELS_DIR``,
default ``~/.local/share/hearth/models``).  A missing model is a failure, never a
skip: CI installs them first with ``hearth models install``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest


def _models_dir() -> Path:
    env = os.environ.get("HEARTH_MODELS_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "hearth" / "models"


@pytest.fixture(scope="session")
def models_dir() -> Path:
    return _models_dir()


@pytest.fixture(scope="session")
def model_path(models_dir: Path):
    """Return a function that resolves a path inside the models directory or fails loudly."""

    def resolve(relative: str) -> Path:
        path = models_dir / relative
        if not path.exists():
            pytest.fail(
                f"model file {path} is missing: run `hearth models install` "
                f"(or set HEARTH_MODELS_DIR)",
                pytrace=False,
            )
        return path

    return resolve


# The PulseAudio null-sink fixture, for every test that plays or records through PortAudio.
from tests.pulse import pulse_null_sink  # noqa: E402,F401


@pytest.fixture(autouse=True)
def _scratch_data_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Timers, lists and indexes a test makes never land in the user's own data folder."""
    folder = tmp_path_factory.mktemp("hearth-data")
    monkeypatch.setenv("HEARTH_DATA_DIR", str(folder))
    return folder
