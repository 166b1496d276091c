"""The packaged manifest, and what the store says about missing, truncated and corrupt files."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest
from pydantic import ValidationError

from models.cli import main
from models.manifest import ModelError, PypiSource, UrlSource, load_manifest, parse_manifest
from models.store import InstallRecord, ModelStore, default_models_dir, tree_digest

EXPECTED_LAYOUT = {
    "smollm2-135m-instruct": {"model.gguf"},
    "gemma3-270m": {"model.gguf", "GEMMA_TERMS.html"},
    "whisper-tiny-en": {"model.bin", "config.json", "tokenizer.json", "vocabulary.txt"},
    "whisper-base": {"model.bin", "config.json", "tokenizer.json", "vocabulary.txt"},
    "moonshine-base-en": {"encoder.onnx", "decoder.onnx", "tokenizer.bin"},
    "silero-vad": {"silero_vad.onnx"},
    "smart-turn-v3": {"smart-turn-v3.2-cpu.onnx", "LICENSE"},
    "piper-en-joe": {"model.onnx", "tokens.txt", "model.onnx.json"},
    "espeak-ng": {"espeakbridge.so", "espeak-ng-data"},
    "kokoro-82m-ja": {"model.onnx", "voices.npz", "vocab.json", "NOTICE"},
    "zipformer-en-streaming": {"encoder.onnx", "decoder.onnx", "joiner.onnx", "tokens.txt"},
    "qwen2.5-1.5b-instruct": {"model.gguf"},
    "qwen2.5-coder-1.5b": {"model.gguf"},
    "qwen2.5-coder-0.5b": {"model.gguf"},
}
DEFAULT_SET = {"smollm2-135m-instruct", "whisper-tiny-en", "whisper-base", "moonshine-base-en", "silero-vad", "smart-turn-v3", "piper-en-joe", "espeak-ng",
               "kokoro-82m-ja", "qwen2.5-coder-1.5b", "qwen2.5-coder-0.5b"}


# ---- the packaged manifest ----


def test_packaged_manifest_has_the_fixed_layout() -> None:
    manifest = load_manifest()
    assert {entry.name: {spec.rel for spec in entry.files} for entry in manifest.model} == EXPECTED_LAYOUT
    assert set(manifest.default_names()) == DEFAULT_SET


@pytest.mark.parametrize("platform", ["linux-x86_64", "linux-aarch64"])
def test_every_default_file_is_pinned(platform: str) -> None:
    for entry in load_manifest().model:
        if not entry.default:
            continue
        assert isinstance(entry.source, PypiSource), entry.name
        for spec in [*entry.inputs, *entry.files]:
            digest = spec.expected(platform)
            assert digest is not None, f"{entry.name}/{spec.path} is not pinned for {platform}"
            assert re.fullmatch(r"[0-9a-f]{64}", digest.sha256)
            assert digest.size > 0
            if spec.tree:
                assert digest.count and digest.count > 0


def test_registry_sources_pin_exact_versions() -> None:
    for entry in load_manifest().model:
        if isinstance(entry.source, PypiSource):
            for package in entry.source.packages:
                assert re.fullmatch(r"\d+(\.\d+)*", package.version), package


def test_url_sources_are_optional_and_trusted_on_first_use() -> None:
    urls = [entry for entry in load_manifest().model if isinstance(entry.source, UrlSource)]
    assert {entry.name for entry in urls} == {"zipformer-en-streaming", "qwen2.5-1.5b-instruct"}
    for entry in urls:
        assert not entry.default
        assert entry.source.url.startswith("https://")
        assert all(spec.expected("linux-x86_64") is None for spec in entry.files)


MINIMAL = """
schema = 1
[[model]]
name = "tiny"
role = "vad"
language = "en"
licence = "MIT"
default = {default}
source = {{ kind = "pypi", packages = [{{ name = "tiny-pkg", version = "1.0" }}] }}
[[model.files]]
path = "{path}"
parts = [{{ package = "{package}", member = "tiny_pkg/blob" }}]
{pin}
"""


def _minimal(
    path: str = "blob.bin", package: str = "tiny-pkg", default: str = "false", pin: str = ""
) -> str:
    return MINIMAL.format(path=path, package=package, default=default, pin=pin)


def test_minimal_manifest_parses() -> None:
    manifest = parse_manifest(_minimal())
    assert manifest.get("tiny").files[0].expected() is None


@pytest.mark.parametrize("path", ["../escape.bin", "/etc/passwd", "a/../../b"])
def test_manifest_refuses_paths_leaving_the_model_dir(path: str) -> None:
    with pytest.raises(ValidationError, match="relative path"):
        parse_manifest(_minimal(path=path))


def test_manifest_refuses_unpinned_default_model() -> None:
    with pytest.raises(ValidationError, match="default models must pin"):
        parse_manifest(_minimal(default="true"))


def test_manifest_refuses_part_from_unlisted_package() -> None:
    with pytest.raises(ValidationError, match="unknown package"):
        parse_manifest(_minimal(package="other-pkg"))


def test_manifest_refuses_half_a_pin() -> None:
    with pytest.raises(ValidationError, match="both sha256 and size"):
        parse_manifest(_minimal(pin=f'sha256 = "{"0" * 64}"'))


def test_unknown_model_is_a_model_error() -> None:
    with pytest.raises(ModelError, match="unknown model 'nope'"):
        load_manifest().get("nope")


# ---- models directory ----


def test_default_models_dir_precedence(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("HEARTH_MODELS_DIR", raising=False)
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    assert default_models_dir() == tmp_path / "home" / ".local" / "share" / "hearth" / "models"
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert default_models_dir() == tmp_path / "xdg" / "hearth" / "models"
    monkeypatch.setenv("HEARTH_MODELS_DIR", str(tmp_path / "explicit"))
    assert default_models_dir() == tmp_path / "explicit"


# ---- the store: check, require, verify ----

BLOB = b"hearth test model bytes\n" * 1000
TREE = {"a.txt": b"alpha\n", "sub/b.txt": b"beta\n" * 10, "sub/deeper/c.bin": bytes(range(256))}


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _store_manifest() -> str:
    listing = {rel: _sha(data) for rel, data in TREE.items()}
    return f"""
schema = 1
[[model]]
name = "tiny"
role = "asr"
language = "en"
licence = "MIT"
default = true
source = {{ kind = "pypi", packages = [{{ name = "tiny-pkg", version = "1.0" }}] }}
[[model.files]]
path = "model.bin"
parts = [{{ package = "tiny-pkg", member = "tiny_pkg/model.bin" }}]
sha256 = "{_sha(BLOB)}"
size = {len(BLOB)}
[[model.files]]
path = "data"
tree = true
parts = [{{ package = "tiny-pkg", member = "tiny_pkg/data" }}]
sha256 = "{tree_digest(listing)}"
size = {sum(len(d) for d in TREE.values())}
count = {len(TREE)}
"""


@pytest.fixture
def store(tmp_path: Path) -> ModelStore:
    return ModelStore(tmp_path / "models", parse_manifest(_store_manifest()))


def _lay_out(store: ModelStore) -> Path:
    model_dir = store.root / "tiny"
    (model_dir / "data").mkdir(parents=True)
    (model_dir / "model.bin").write_bytes(BLOB)
    for rel, data in TREE.items():
        (model_dir / "data" / rel).parent.mkdir(parents=True, exist_ok=True)
        (model_dir / "data" / rel).write_bytes(data)
    listing = {rel: _sha(data) for rel, data in TREE.items()}
    record = InstallRecord(
        name="tiny", installed_at="now", platform="test", source="test",
        files={}, trees={"data": listing},
    )
    (model_dir / ".install.json").write_text(record.model_dump_json())
    return model_dir


def test_constructor_touches_nothing(tmp_path: Path) -> None:
    ModelStore(tmp_path / "not-there")
    assert not (tmp_path / "not-there").exists()


def test_intact_model_passes_check_and_verify(store: ModelStore) -> None:
    _lay_out(store)
    assert store.check(["tiny"]) == []
    assert store.verify(["tiny"]) == []
    store.require(["tiny"])
    assert store.path("tiny") == store.root / "tiny"


def test_missing_file_gives_one_line_with_the_fix(store: ModelStore) -> None:
    with pytest.raises(ModelError) as caught:
        store.require(["tiny"])
    message = str(caught.value)
    assert "\n" not in message
    assert f"{store.root / 'tiny' / 'model.bin'} is missing" in message
    assert f"run `hearth models install tiny --models-dir {store.root}`" in message
    assert "(and 1 more)" in message  # the data tree is missing too
    kinds = [(p.path.name, p.kind) for p in store.check(["tiny"])]
    assert kinds == [("model.bin", "missing"), ("data", "missing")]


def test_fix_command_omits_models_dir_when_it_is_the_default(
    store: ModelStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HEARTH_MODELS_DIR", str(store.root))
    with pytest.raises(ModelError, match=r"run `hearth models install tiny`$"):
        store.require(["tiny"])


def test_paths_under_home_are_shown_with_tilde(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    store = ModelStore(tmp_path / ".local/share/hearth/models", parse_manifest(_store_manifest()))
    with pytest.raises(ModelError, match=r"^model file ~/\.local/share/hearth/models/tiny/model\.bin is missing"):
        store.require(["tiny"])


def test_truncated_file_is_caught_by_the_fast_check(store: ModelStore) -> None:
    model_dir = _lay_out(store)
    (model_dir / "model.bin").write_bytes(BLOB[:-100])
    problems = store.check(["tiny"])
    assert [(p.path, p.kind) for p in problems] == [(model_dir / "model.bin", "size")]
    with pytest.raises(ModelError, match=rf"model\.bin is {len(BLOB) - 100} bytes, expected {len(BLOB)}"):
        store.require(["tiny"])


def test_flipped_byte_passes_check_but_not_verify(store: ModelStore) -> None:
    model_dir = _lay_out(store)
    data = bytearray(BLOB)
    data[1234] ^= 0x01
    (model_dir / "model.bin").write_bytes(bytes(data))
    assert store.check(["tiny"]) == []
    problems = store.verify(["tiny"])
    assert [(p.path, p.kind) for p in problems] == [(model_dir / "model.bin", "sha256")]
    assert "is corrupt" in str(problems[0]) and "hearth models install tiny" in str(problems[0])


def test_file_missing_from_a_tree_is_caught_by_the_fast_check(store: ModelStore) -> None:
    model_dir = _lay_out(store)
    (model_dir / "data" / "sub" / "b.txt").unlink()
    problems = store.check(["tiny"])
    assert [(p.path, p.kind) for p in problems] == [(model_dir / "data", "size")]
    assert "holds 2 files, expected 3" in problems[0].detail


def test_verify_names_the_corrupt_file_inside_a_tree(store: ModelStore) -> None:
    model_dir = _lay_out(store)
    (model_dir / "data" / "sub" / "deeper" / "c.bin").write_bytes(bytes(reversed(range(256))))
    assert store.check(["tiny"]) == []
    problems = store.verify(["tiny"])
    assert [(p.path, p.kind) for p in problems] == [(model_dir / "data" / "sub" / "deeper" / "c.bin", "sha256")]


def test_verify_without_install_record_still_flags_the_tree(store: ModelStore) -> None:
    model_dir = _lay_out(store)
    (model_dir / ".install.json").unlink()
    (model_dir / "data" / "a.txt").write_bytes(b"ALPHA\n")
    problems = store.verify(["tiny"])
    assert [(p.path, p.kind) for p in problems] == [(model_dir / "data", "sha256")]


# ---- the command line, against the packaged manifest ----


def test_cli_verify_on_an_empty_dir_names_every_missing_default_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["verify", "--models-dir", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert f"model file {tmp_path}/whisper-base/model.bin is missing" in out
    assert f"hearth models install espeak-ng --models-dir {tmp_path}" in out
    assert "gemma3-270m" not in out  # not default, not installed


def test_cli_list_shows_every_model_as_missing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models", "list", "--models-dir", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = {line.split()[0]: line.split() for line in lines[1:-1]}
    assert set(rows) == set(EXPECTED_LAYOUT)
    assert rows["whisper-base"][1:5] == ["asr", "multi", "yes", "missing"]
    assert rows["gemma3-270m"][3] == "no"


def test_cli_install_refuses_unknown_names(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["install", "--models-dir", str(tmp_path), "no-such-model"]) == 2
    assert "unknown model 'no-such-model'" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())
