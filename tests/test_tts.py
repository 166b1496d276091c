"""The piper voice converter: it writes what sherpa-onnx reads and refuses voices without espeak phonemes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from models.piper_voice import prepare_piper_voice

SHERPA_KEYS = {"model_type", "comment", "language", "voice", "has_espeak", "n_speakers", "sample_rate"}


def onnx_metadata(path: Path) -> dict[str, str]:
    import onnx

    model = onnx.load(str(path), load_external_data=False)
    return {prop.key: prop.value for prop in model.metadata_props}


# ---------------------------------------------------------------- conversion (no models needed)


def _tiny_piper_voice(tmp_path: Path) -> tuple[Path, Path, dict]:
    import onnx
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Identity", ["input"], ["output"])],
        "voice",
        [helper.make_tensor_value_info("input", TensorProto.INT64, [1, None])],
        [helper.make_tensor_value_info("output", TensorProto.INT64, [1, None])],
    )
    model = helper.make_model(graph)
    stale = model.metadata_props.add()
    stale.key, stale.value = "sample_rate", "8000"
    onnx_path = tmp_path / "voice.onnx"
    onnx.save(model, str(onnx_path))
    config = {
        "audio": {"sample_rate": 22050},
        "espeak": {"voice": "en-us"},
        "language": {"code": "en_US", "name_english": "English"},
        "num_speakers": 1,
        "phoneme_type": "espeak",
        "phoneme_id_map": {"_": [0], "^": [1], "$": [2], " ": [3], "\n": [4], "ˈ": [5], "ɛ": [6], "t": [7]},
    }
    json_path = tmp_path / "voice.onnx.json"
    json_path.write_text(json.dumps(config, ensure_ascii=False), encoding="utf-8")
    return onnx_path, json_path, config


def test_conversion_writes_what_sherpa_reads(tmp_path: Path) -> None:
    onnx_path, json_path, config = _tiny_piper_voice(tmp_path)
    out = tmp_path / "out"
    prepare_piper_voice(onnx_path, json_path, out)

    assert sorted(p.name for p in out.iterdir()) == ["model.onnx", "model.onnx.json", "tokens.txt"]
    lines = (out / "tokens.txt").read_text(encoding="utf-8").splitlines()
    # sherpa-onnx's reader takes a line holding only an id as the space symbol.
    assert " 3" in lines
    parsed = {(line.split()[0] if len(line.split()) == 2 else " "): int(line.split()[-1]) for line in lines}
    expected = {s: ids[0] for s, ids in config["phoneme_id_map"].items() if s != "\n"}
    assert parsed == expected

    meta = onnx_metadata(out / "model.onnx")
    assert SHERPA_KEYS <= meta.keys()
    assert meta["model_type"] == "vits" and meta["comment"] == "piper" and meta["has_espeak"] == "1"
    assert meta["sample_rate"] == "22050", "an existing key must be replaced, not duplicated"
    assert meta["n_speakers"] == "1" and meta["voice"] == "en-us" and meta["language"] == "English"
    assert json.loads((out / "model.onnx.json").read_text(encoding="utf-8")) == config
    assert not [p for p in out.iterdir() if p.name.startswith(".")], "temporary files left behind"


def test_conversion_refuses_non_espeak_voices(tmp_path: Path) -> None:
    onnx_path, json_path, config = _tiny_piper_voice(tmp_path)
    config["phoneme_type"] = "pinyin"
    json_path.write_text(json.dumps(config), encoding="utf-8")
    with pytest.raises(ValueError, match="pinyin"):
        prepare_piper_voice(onnx_path, json_path, tmp_path / "out")
    assert not (tmp_path / "out" / "model.onnx").exists()


# ---------------------------------------------------------------- the installed voice


