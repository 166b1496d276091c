"""The data folder: where timers, lists, notes and the conversation record are kept, and what named it.

Every command that reads or writes the household's data finds it the same way: ``--data-dir``,
else ``tools.data_dir`` in the configuration, else ``$HEARTH_DATA_DIR``, else
``~/.local/share/hearth/data``.  A message about the folder names what chose it, so a wrong
``$HEARTH_DATA_DIR`` is not blamed on the configuration file.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from firmware_py.config import ConfigError, HearthConfig, expand_path

RECORD_NAME = "conversation.sqlite3"
"""The conversation record's file in the data folder."""

ENV = "HEARTH_DATA_DIR"


@dataclass(frozen=True)
class DataFolder:
    """A data folder, and what chose it."""

    path: Path
    named_by: str
    """What chose it, as a message says it: "--data-dir", "tools.data_dir", "$HEARTH_DATA_DIR" or "the default"."""

    @property
    def record(self) -> Path:
        """The conversation record in it (``hearth history`` reads it)."""
        return self.path / RECORD_NAME

    def problem(self, what: str) -> ConfigError:
        """A one-line error about this folder, naming what chose it."""
        return ConfigError(f"{self.named_by} {self.path}: {what}")


def default_folder() -> Path:
    return Path.home() / ".local" / "share" / "hearth" / "data"


def data_folder(config: HearthConfig, flag: str | None = None) -> DataFolder:
    """The data folder for ``config`` and the ``--data-dir`` flag's text (None: not given);
    ConfigError, one line, for a flag or ``$HEARTH_DATA_DIR`` that names no path."""
    if flag is not None:
        if not flag.strip():
            raise ConfigError("--data-dir '': an empty name; give a folder, or leave --data-dir out")
        return DataFolder(expand_path(Path(flag), "--data-dir"), "--data-dir")
    if config.tools.data_dir is not None:
        return DataFolder(config.tools.data_dir, "tools.data_dir")
    env = os.environ.get(ENV)
    if env:  # set but empty is taken as unset, as a shell's `HEARTH_DATA_DIR= hearth ...` means
        return DataFolder(expand_path(Path(env), f"${ENV}"), f"${ENV}")
    return DataFolder(default_folder(), "the default")


def check_folder(folder: DataFolder, *, create: bool) -> None:
    """Raise ConfigError (one line) unless ``folder`` is a folder, or (``create``) can be made one.

    Without ``create`` a folder not there yet is fine: nothing is recorded in it yet.
    """
    path = folder.path
    if path.exists():
        if not path.is_dir():
            raise folder.problem("a file, not a folder")
        return
    # Path.exists() is False for a path through a file (/etc/passwd/data): say which part is the file.
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                raise folder.problem(f"{parent} is a file, not a folder")
            break
    if create:
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise folder.problem(f"cannot be made ({exc.strerror or exc})") from None
