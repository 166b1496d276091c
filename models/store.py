"""Where installed models live, and whether they are whole.

``check`` is meant for start-up: it only compares sizes (and file counts for
directory trees), which catches the usual damage, a truncated copy or a
missing file, in milliseconds.  ``verify`` hashes everything and is what
``hearth models verify`` runs.

A tree (a directory of many files, e.g. espeak-ng's data) is pinned by one
digest: the sha256 of its listing, the text ``"<sha256>  <relative path>\\n"``
for every regular file, sorted by path (what ``sha256sum`` prints).  The
installer writes that listing into the model's install record, so that when
the tree's digest is wrong ``verify`` can still name the file that changed.

Files whose hash the manifest leaves empty (URL sources) are trusted on first
use: the install record holds what the installer computed, and later checks
compare against that.
"""

from __future__ import annotations

import hashlib
import logging
import os
import stat
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from models.manifest import Digest, Manifest, ModelEntry, ModelError, load_manifest

logger = logging.getLogger(__name__)

RECORD_NAME = ".install.json"
CHUNK = 1 << 20

__all__ = [
    "InstallRecord",
    "ModelError",
    "ModelStore",
    "Problem",
    "default_models_dir",
    "sha256_file",
    "tree_digest",
    "tree_listing",
]


def default_models_dir() -> Path:
    """``$HEARTH_MODELS_DIR``, else ``$XDG_DATA_HOME/hearth/models``, else ``~/.local/share/hearth/models``."""
    env = os.environ.get("HEARTH_MODELS_DIR")
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base).expanduser() / "hearth" / "models"


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        while block := stream.read(CHUNK):
            digest.update(block)
    return digest.hexdigest()


def tree_digest(listing: Mapping[str, str]) -> str:
    """sha256 of the sorted ``sha256sum``-style listing of a tree (relative path -> file sha256)."""
    text = "".join(f"{listing[rel]}  {rel}\n" for rel in sorted(listing))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _walk_files(root: Path) -> Iterable[tuple[str, os.stat_result]]:
    for dirpath, _dirnames, filenames in os.walk(root):
        for filename in filenames:
            full = os.path.join(dirpath, filename)
            st = os.lstat(full)
            if stat.S_ISREG(st.st_mode):  # links are never installed; a link here is not ours
                yield os.path.relpath(full, root).replace(os.sep, "/"), st


def tree_listing(root: Path) -> dict[str, str]:
    """Relative path -> sha256 of every regular file under ``root``."""
    return {rel: sha256_file(root / rel) for rel, _st in _walk_files(root)}


def _short(path: Path) -> str:
    """The path as a person would type it: the home directory as ``~``."""
    home = str(Path.home())
    text = str(path)
    if home not in ("", "/") and (text == home or text.startswith(home + os.sep)):
        return "~" + text[len(home):]
    return text


class InstallRecord(BaseModel):
    """Written by the installer as ``<model dir>/.install.json`` after the files are in place."""

    model_config = ConfigDict(extra="ignore")

    name: str
    installed_at: str
    platform: str
    source: str
    source_sha256: str = ""
    files: dict[str, Digest]
    """Relative path -> digest as installed (for a tree, its tree digest, size and count)."""
    trees: dict[str, dict[str, str]] = {}
    """Tree path -> its listing (relative path -> sha256)."""
    trusted_on_first_use: list[str] = []


class Problem(BaseModel):
    """One missing or damaged file; ``str()`` gives the one-line message with the fix."""

    model_config = ConfigDict(frozen=True)

    model: str
    path: Path
    kind: Literal["missing", "size", "sha256", "unpinned"]
    detail: str
    fix: str

    def describe(self) -> str:
        return f"model file {_short(self.path)} {self.detail}"

    def __str__(self) -> str:
        return f"{self.describe()}: run `{self.fix}`"


class ModelStore:
    """The models directory: ``<root>/<model name>/...`` as the manifest lays it out."""

    def __init__(self, root: Path, manifest: Manifest | None = None) -> None:
        self.root = Path(root)
        self._manifest = manifest

    @classmethod
    def default(cls, manifest: Manifest | None = None) -> ModelStore:
        return cls(default_models_dir(), manifest)

    @property
    def manifest(self) -> Manifest:
        if self._manifest is None:
            self._manifest = load_manifest()
        return self._manifest

    def path(self, name: str) -> Path:
        """The directory of model ``name`` (which need not be installed)."""
        self.manifest.get(name)
        return self.root / name

    def fix_command(self, names: Sequence[str]) -> str:
        command = "hearth models install " + " ".join(names)
        if self.root.resolve() != default_models_dir().resolve():
            command += f" --models-dir {_short(self.root)}"
        return command

    def read_record(self, name: str) -> InstallRecord | None:
        path = self.root / name / RECORD_NAME
        try:
            return InstallRecord.model_validate_json(path.read_bytes())
        except FileNotFoundError:
            return None
        except (ValidationError, ValueError, OSError) as exc:
            logger.warning("ignoring unreadable install record %s: %s", path, exc)
            return None

    def check(self, names: Sequence[str] | None = None) -> list[Problem]:
        """Fast check (existence and sizes) of ``names`` (default: the default set)."""
        return self._inspect(names, full=False)

    def verify(self, names: Sequence[str] | None = None) -> list[Problem]:
        """Full check: every file's sha256 against the manifest (or the install record when trusted on first use)."""
        return self._inspect(names, full=True)

    def require(self, names: Sequence[str] | None = None, full: bool = False) -> None:
        """Raise :class:`ModelError` with a one-line message unless every file of ``names`` looks
        intact (sizes), or with ``full`` is intact (hashes)."""
        problems = self._inspect(names, full)
        if not problems:
            return
        broken = list(dict.fromkeys(p.model for p in problems))
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise ModelError(f"{problems[0].describe()}{more}: run `{self.fix_command(broken)}`")

    def installed_names(self) -> list[str]:
        """Models whose directory exists, in manifest order."""
        return [name for name in self.manifest.names if (self.root / name).is_dir()]

    def _inspect(self, names: Sequence[str] | None, full: bool) -> list[Problem]:
        selected = self.manifest.default_names() if names is None else list(names)
        problems: list[Problem] = []
        for name in selected:
            problems.extend(self._inspect_model(self.manifest.get(name), full))
        return problems

    def _inspect_model(self, entry: ModelEntry, full: bool) -> list[Problem]:
        model_dir = self.root / entry.name
        fix = self.fix_command([entry.name])
        record: InstallRecord | None = None
        record_read = False
        problems: list[Problem] = []

        def problem(path: Path, kind: Literal["missing", "size", "sha256", "unpinned"], detail: str) -> None:
            problems.append(Problem(model=entry.name, path=path, kind=kind, detail=detail, fix=fix))

        for spec in entry.files:
            target = model_dir / spec.rel
            exists = target.is_dir() if spec.tree else target.is_file()
            if not exists:
                problem(target, "missing", "is missing")
                continue
            expected = spec.expected()
            if expected is None:
                if not record_read:
                    record, record_read = self.read_record(entry.name), True
                expected = record.files.get(spec.rel) if record else None
                if expected is None:
                    problem(target, "unpinned", "has no recorded sha256 (install record missing)")
                    continue
            if spec.tree:
                if not record_read and full:
                    record, record_read = self.read_record(entry.name), True
                trusted = record.trees.get(spec.rel) if record else None
                for found in _inspect_tree(target, expected, trusted, full):
                    problem(*found)
            else:
                size = target.stat().st_size
                if size != expected.size:
                    problem(target, "size", f"is {size} bytes, expected {expected.size} (truncated or corrupt)")
                elif full:
                    actual = sha256_file(target)
                    if actual != expected.sha256:
                        problem(target, "sha256", f"is corrupt (sha256 {actual[:12]}…, expected {expected.sha256[:12]}…)")
        return problems


def _inspect_tree(
    root: Path, expected: Digest, trusted: Mapping[str, str] | None, full: bool
) -> list[tuple[Path, Literal["missing", "size", "sha256", "unpinned"], str]]:
    files = list(_walk_files(root))
    count = len(files)
    size = sum(st.st_size for _rel, st in files)
    found: list[tuple[Path, Literal["missing", "size", "sha256", "unpinned"], str]] = []
    if not full:
        if expected.count is not None and count != expected.count:
            found.append((root, "size", f"holds {count} files, expected {expected.count}"))
        elif size != expected.size:
            found.append((root, "size", f"holds {size} bytes, expected {expected.size}"))
        return found
    listing = {rel: sha256_file(root / rel) for rel, _st in files}
    if tree_digest(listing) == expected.sha256:
        return found
    # Name the culprits when the install record's listing is the one the manifest pins.
    if trusted is not None and tree_digest(trusted) == expected.sha256:
        for rel in sorted(set(trusted) | set(listing)):
            if rel not in listing:
                found.append((root / rel, "missing", "is missing"))
            elif rel not in trusted:
                found.append((root / rel, "sha256", "should not be there"))
            elif listing[rel] != trusted[rel]:
                found.append((root / rel, "sha256", "is corrupt (sha256 differs from the installed copy)"))
        if found:
            return found
    found.append((root, "sha256", f"is corrupt (tree sha256 differs from {expected.sha256[:12]}…)"))
    return found
