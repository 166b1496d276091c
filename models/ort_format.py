"""An ORT-format model (``.ort``) written back as a plain ONNX model.

Moonshine's English weights ship only as ``.ort`` files.  onnxruntime runs them
as they are, but an ``.ort`` file is frozen at the optimisation level it was
saved with: these were saved with their int8 weights dequantised by Cast, Mul
and Add nodes that run on every call, and the tied output projection transposes
the whole 32,768-token embedding on every call too.  That is four fifths of a
decoder step (about 50 of 60 ms a token on two x86 cores).  As plain ONNX the
same graph is constant-folded when a session loads it, and a step costs what
its multiplications cost.

The conversion copies every node, attribute, initializer and subgraph as it is;
then :func:`fold_constant_arithmetic` computes the dequantised weights once, so that
the file holds float32 weights (four times the bytes) and a session loading it does
not keep both forms in memory.
"""

from __future__ import annotations

import importlib
import logging
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)


def _schema() -> Any:
    """onnxruntime's own flatbuffer bindings for the ORT format (shipped in its wheel)."""
    # The package puts its bindings' folder on sys.path when imported; the bindings import themselves by that name.
    importlib.import_module("onnxruntime.tools.ort_format_model")
    return importlib.import_module("ort_flatbuffers_py.fbs")


def _text(value: bytes | None) -> str:
    return value.decode() if value else ""


def _tensor(fbs: Any, tensor: Any) -> Any:
    import numpy as np
    from onnx import TensorProto, helper

    dims = [int(d) for d in tensor.DimsAsNumpy()] if not tensor.DimsIsNone() else []
    dtype = tensor.DataType()
    if tensor.ExternalDataOffset() >= 0 and tensor.RawDataIsNone():
        raise ValueError(f"initializer {_text(tensor.Name())!r} keeps its data outside the file")
    if dtype == TensorProto.STRING:
        values = [tensor.StringData(i) for i in range(tensor.StringDataLength())]
        return helper.make_tensor(_text(tensor.Name()), dtype, dims, values)
    raw = tensor.RawDataAsNumpy() if not tensor.RawDataIsNone() else np.zeros(0, np.uint8)
    return helper.make_tensor(_text(tensor.Name()), dtype, dims, raw.tobytes(), raw=True)


def _value_info(fbs: Any, arg: Any) -> Any:
    from onnx import helper

    name = _text(arg.Name())
    info = arg.Type()
    if info is None or info.ValueType() != fbs.TypeInfoValue.TypeInfoValue.tensor_type:
        return helper.make_empty_tensor_value_info(name)
    typed = fbs.TensorTypeAndShape.TensorTypeAndShape()
    value = info.Value()
    typed.Init(value.Bytes, value.Pos)
    shape = typed.Shape()
    dims: list[int | str | None] | None = None
    if shape is not None:
        dims = []
        for i in range(shape.DimLength()):
            dim = shape.Dim(i).Value()
            if dim is None or dim.DimType() == fbs.DimensionValueType.DimensionValueType.UNKNOWN:
                dims.append(None)
            elif dim.DimType() == fbs.DimensionValueType.DimensionValueType.VALUE:
                dims.append(int(dim.DimValue()))
            else:
                dims.append(_text(dim.DimParam()))
    return helper.make_tensor_value_info(name, typed.ElemType(), dims)


def _attribute(fbs: Any, attribute: Any) -> Any:
    from onnx import AttributeProto, helper

    kind = attribute.Type()
    name = _text(attribute.Name())
    kinds = fbs.AttributeType.AttributeType
    if kind == kinds.FLOAT:
        return helper.make_attribute(name, attribute.F(), attr_type=AttributeProto.FLOAT)
    if kind == kinds.INT:
        return helper.make_attribute(name, attribute.I(), attr_type=AttributeProto.INT)
    if kind == kinds.STRING:
        return helper.make_attribute(name, attribute.S() or b"", attr_type=AttributeProto.STRING)
    if kind == kinds.TENSOR:
        return helper.make_attribute(name, _tensor(fbs, attribute.T()), attr_type=AttributeProto.TENSOR)
    if kind == kinds.GRAPH:
        return helper.make_attribute(name, _graph(fbs, attribute.G(), name), attr_type=AttributeProto.GRAPH)
    if kind == kinds.FLOATS:
        return helper.make_attribute(name, [float(x) for x in attribute.FloatsAsNumpy()] if attribute.FloatsLength() else [], attr_type=AttributeProto.FLOATS)
    if kind == kinds.INTS:
        return helper.make_attribute(name, [int(x) for x in attribute.IntsAsNumpy()] if attribute.IntsLength() else [], attr_type=AttributeProto.INTS)
    if kind == kinds.STRINGS:
        return helper.make_attribute(name, [attribute.Strings(i) for i in range(attribute.StringsLength())], attr_type=AttributeProto.STRINGS)
    if kind == kinds.TENSORS:
        return helper.make_attribute(name, [_tensor(fbs, attribute.Tensors(i)) for i in range(attribute.TensorsLength())], attr_type=AttributeProto.TENSORS)
    if kind == kinds.GRAPHS:
        return helper.make_attribute(name, [_graph(fbs, attribute.Graphs(i), name) for i in range(attribute.GraphsLength())], attr_type=AttributeProto.GRAPHS)
    raise ValueError(f"attribute {name!r} has a type this converter does not read ({kind})")


def _graph(fbs: Any, graph: Any, name: str) -> Any:
    from onnx import helper

    if graph.SparseInitializersLength():
        raise ValueError(f"graph {name!r} has sparse initializers, which this converter does not read")
    args = {}
    for i in range(graph.NodeArgsLength()):
        arg = graph.NodeArgs(i)
        args[_text(arg.Name())] = arg
    nodes = []
    for i in range(graph.NodesLength()):
        node = graph.Nodes(i)
        nodes.append(helper.make_node(
            _text(node.OpType()),
            [_text(node.Inputs(j)) for j in range(node.InputsLength())],
            [_text(node.Outputs(j)) for j in range(node.OutputsLength())],
            name=_text(node.Name()),
            domain=_text(node.Domain()),
        ))
        nodes[-1].attribute.extend(_attribute(fbs, node.Attributes(j)) for j in range(node.AttributesLength()))
    initializers = [_tensor(fbs, graph.Initializers(i)) for i in range(graph.InitializersLength())]
    constant = {tensor.name for tensor in initializers}
    inputs = [_text(graph.Inputs(i)) for i in range(graph.InputsLength())]
    outputs = [_text(graph.Outputs(i)) for i in range(graph.OutputsLength())]
    return helper.make_graph(
        nodes, name,
        # ONNX lists an initializer among the inputs only when a caller may override it.
        [_value_info(fbs, args[n]) for n in inputs if n not in constant],
        [_value_info(fbs, args[n]) for n in outputs],
        initializers,
    )


def ort_to_onnx(source: Path) -> Any:
    """The ``.ort`` model at ``source`` as an ``onnx.ModelProto``."""
    from onnx import helper

    fbs = _schema()
    buffer = bytearray(Path(source).read_bytes())
    if not fbs.InferenceSession.InferenceSession.InferenceSessionBufferHasIdentifier(buffer, 0):
        raise ValueError(f"{source} is not an ORT-format model")
    model = fbs.InferenceSession.InferenceSession.GetRootAsInferenceSession(buffer, 0).Model()
    opsets = [
        helper.make_opsetid(_text(model.OpsetImport(i).Domain()), model.OpsetImport(i).Version())
        for i in range(model.OpsetImportLength())
    ]
    proto = helper.make_model(
        _graph(fbs, model.Graph(), Path(source).stem), opset_imports=opsets,
        producer_name=_text(model.ProducerName()), producer_version=_text(model.ProducerVersion()),
    )
    proto.ir_version = model.IrVersion()
    return proto


def convert_ort_model(source: Path, target: Path) -> None:
    """Write the ``.ort`` model at ``source`` to ``target`` as plain ONNX, its constant arithmetic folded."""
    import onnx

    proto = ort_to_onnx(source)
    folded = fold_constant_arithmetic(proto)
    target.parent.mkdir(parents=True, exist_ok=True)
    onnx.save_model(proto, str(target))
    logger.info("wrote %s (%d nodes, %d folded)", target, len(proto.graph.node), folded)


_FOLDED = {"Mul": "multiply", "Add": "add", "Sub": "subtract"}


def fold_constant_arithmetic(proto: Any) -> int:
    """Fold the main graph's Cast, Mul, Add and Sub nodes whose inputs are all initializers into
    initializers (how the weights were dequantised); return how many nodes went.

    numpy's element-wise float32 arithmetic is IEEE's, as onnxruntime's is, so the folded
    weights are the very numbers the nodes would have computed, on any machine.  Initializers
    nothing reads any more are dropped.
    """
    import numpy as np
    from onnx import helper, numpy_helper

    graph = proto.graph
    values = {tensor.name: tensor for tensor in graph.initializer}
    arrays: dict[str, Any] = {}

    def array(name: str) -> Any:
        if name not in arrays:
            arrays[name] = numpy_helper.to_array(values[name])
        return arrays[name]

    kept = []
    folded = 0
    for node in graph.node:
        constant = node.input and all(name in values for name in node.input) and node.op_type in ("Cast", *_FOLDED)
        if not constant:
            kept.append(node)
            continue
        if node.op_type == "Cast":
            to = next(a.i for a in node.attribute if a.name == "to")
            result = array(node.input[0]).astype(helper.tensor_dtype_to_np_dtype(to))
        else:
            left, right = array(node.input[0]), array(node.input[1])
            result = getattr(np, _FOLDED[node.op_type])(left, right).astype(np.result_type(left, right))
        arrays[node.output[0]] = result
        values[node.output[0]] = numpy_helper.from_array(result, node.output[0])
        folded += 1
    read = {name for node in kept for name in node.input}
    read |= {name for node in kept for name in _outer_names(node)}
    read |= {output.name for output in graph.output}
    initializers = [values[name] for name in values if name in read]
    del graph.node[:]
    graph.node.extend(kept)
    del graph.initializer[:]
    graph.initializer.extend(initializers)
    return folded


def _outer_names(node: Any) -> set[str]:
    """Every name the subgraphs of ``node`` read, at any depth (their own and, by ONNX's scoping,
    the outer graph's)."""
    names: set[str] = set()
    for a in node.attribute:
        for graph in [a.g] if a.HasField("g") else list(a.graphs):
            for inner in graph.node:
                names |= set(inner.input) | _outer_names(inner)
    return names
