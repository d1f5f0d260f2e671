"""``export(model, args, f, ...)``: trace the model, write ONNX, check it."""
import os
import warnings

import onnx
from onnx import helper

from .._graph import Value
from .._trace import _named_tensors, record
from ._emitter import Emitter, SymbolicError, value_info
from ._symbolic import SYMBOLICS, emit_node

__all__ = ["export", "SymbolicError", "MIN_OPSET", "DEFAULT_OPSET"]

MIN_OPSET = 17
DEFAULT_OPSET = 17


def _leaves(outputs):
    if isinstance(outputs, Value):
        return [outputs]
    return [v for item in outputs for v in _leaves(item)]


def _live_nodes(graph):
    """The nodes the outputs depend on (a trace also holds ops whose results only steered Python)."""
    needed = {id(v) for v in _leaves(graph.outputs)}
    live = []
    for node in reversed(graph.nodes):
        if any(id(v) in needed for v in node.output_values()):
            live.append(node)
            for arg in _flat_args(node):
                needed.add(id(arg))
    live.reverse()
    return live, needed


def _flat_args(node):
    stack = list(node.args) + list(node.kwargs.values())
    while stack:
        item = stack.pop()
        if isinstance(item, Value):
            yield item
        elif isinstance(item, (list, tuple)):
            stack.extend(item)


def _dynamic_axes(dynamic_axes, name):
    axes = (dynamic_axes or {}).get(name)
    if axes is None:
        return None
    if isinstance(axes, dict):
        return {int(k): v for k, v in axes.items()}
    return {int(a): f"{name}_dynamic_axes_{i + 1}" for i, a in enumerate(axes)}


_exporting = 0  # how many exports are recording their model now


def is_in_onnx_export():
    """Whether an ONNX export is running the model now (``torch.onnx.is_in_onnx_export``)."""
    return _exporting > 0


def build_model(model, args, input_names=None, output_names=None, opset_version=None, dynamic_axes=None,
                export_params=True):
    """The checked onnx.ModelProto of ``model(*args)``."""
    opset = DEFAULT_OPSET if opset_version is None else int(opset_version)
    if opset < MIN_OPSET:
        raise ValueError(f"ember exports ONNX opset {MIN_OPSET} and newer; opset_version={opset} was asked for")
    args = (args,) if not isinstance(args, (tuple, list)) else tuple(args)
    training = getattr(model, "training", None)
    if training and hasattr(model, "train"):
        model.train(False)  # export is of the inference graph: dropout off, batch norm on running stats
    try:
        # A composite op with no ONNX form of its own (mse_loss, say) is exported as its parts.
        global _exporting
        _exporting += 1
        try:
            graph = record(model, args, _named_tensors(model), expand=lambda op: op.name not in SYMBOLICS)
        finally:
            _exporting -= 1
    finally:
        if training and hasattr(model, "train"):
            model.train(True)
    nodes, needed = _live_nodes(graph)
    g = Emitter(opset)
    consumers = needed
    inputs = []
    for i, value in enumerate(graph.inputs):
        name = input_names[i] if input_names and i < len(input_names) else f"input_{i}"
        g.bind(value, name)
        inputs.append(value_info(name, value, _dynamic_axes(dynamic_axes, name)))
    for value in graph.params + graph.constants:
        if id(value) in needed:
            name = value.name if value.kind == "param" else g.fresh("const")
            g.bind(value, name)
            if export_params or value.kind == "const":
                g.initializers.append(onnx.numpy_helper.from_array(value.tensor.detach().cpu().numpy(), name))
    for node in nodes:
        emit_node(g, node, consumers)
    outputs = []
    for i, value in enumerate(_leaves(graph.outputs)):
        name = output_names[i] if output_names and i < len(output_names) else f"output_{i}"
        g.nodes.append(helper.make_node("Identity", [g.name_of(value)], [name]))
        outputs.append(value_info(name, value, _dynamic_axes(dynamic_axes, name)))
    onnx_graph = helper.make_graph(g.nodes, type(model).__name__ if not callable(model) or hasattr(model, "forward")
                                   else getattr(model, "__name__", "graph"), inputs, outputs, g.initializers)
    proto = helper.make_model(onnx_graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="ember")
    proto.ir_version = min(proto.ir_version, 10)
    onnx.checker.check_model(proto, full_check=True)
    if dynamic_axes:
        _check_dynamic_axes(model, args, proto, [v.name for v in inputs], dynamic_axes)
    return proto


def _grown(tensor, axes):
    """``tensor`` one larger along each of ``axes`` (its first slice repeated: valid indices stay valid)."""
    import ember_tensor

    for axis in axes:
        tensor = ember_tensor.cat([tensor, tensor.narrow(axis, 0, 1)], dim=axis)
    return tensor


def _check_dynamic_axes(model, args, proto, input_names, dynamic_axes):
    """Run the exported graph (with ember's ONNX importer) at other sizes of the dynamic axes.

    A trace records sizes as numbers: a size the model computed from a dynamic axis (an
    initial state of batch size, a reshape to (seq, batch * heads, ...)) is baked in and
    would make the graph wrong at any other size. Checking here means a graph that cannot
    honour ``dynamic_axes`` is refused instead of silently written.
    """
    import ember_autograd
    import ember_tensor

    from ._import import OnnxModule

    grown = [_grown(a, sorted(_dynamic_axes(dynamic_axes, name) or {})) for a, name in zip(args, input_names)]
    if all(g.shape == a.shape for g, a in zip(grown, args)):
        return
    training = getattr(model, "training", None)
    if training and hasattr(model, "train"):
        model.train(False)
    try:
        with ember_autograd.no_grad():
            expected = model(*grown)
            try:
                got = OnnxModule(proto)(*grown)
            except Exception as error:  # a baked shape no longer fits
                got = error
    finally:
        if training and hasattr(model, "train"):
            model.train(True)
    expected = expected if isinstance(expected, (tuple, list)) else (expected,)
    got_list = got if isinstance(got, (tuple, list)) else (got,)
    same = not isinstance(got, Exception) and all(
        tuple(g.shape) == tuple(e.shape) and ember_tensor.allclose(g.detach(), e.detach(), rtol=1e-3, atol=1e-5)
        for g, e in zip(got_list, expected))
    if not same:
        raise SymbolicError(
            "ONNX export: the traced graph does not honour dynamic_axes: the model computes sizes from a dynamic "
            "axis (an initial state or mask of batch size, a reshape to batch * heads, ...), and the trace "
            "recorded them as constants, so the graph is only right at the example's sizes. Export without "
            "dynamic_axes for this model (a fixed-size graph)" + (f"; running it at other sizes failed: {got}"
                                                                  if isinstance(got, Exception) else ""))


def export(model, args, f, export_params=True, verbose=False, training=None, input_names=None, output_names=None,
           operator_export_type=None, opset_version=None, do_constant_folding=True, dynamic_axes=None,
           keep_initializers_as_inputs=None, custom_opsets=None, export_modules_as_functions=False, dynamo=False,
           **kwargs):
    """Export ``model(*args)`` to ONNX at ``f`` (a path or a binary file), as ``torch.onnx.export``.

    The model is traced in eval mode; parameters become initializers named after their
    state_dict keys; ``dynamic_axes`` ({input or output name: {axis: name} or [axes]})
    marks axes (the batch, usually) as symbolic. Every model is checked with
    ``onnx.checker.check_model``. An op with no ONNX form raises `SymbolicError` naming
    the op and the line of the model that called it.
    """
    if training not in (None, False) and str(training).lower().endswith("training"):
        warnings.warn("ember exports the inference graph only (training=TrainingMode.EVAL)")
    proto = build_model(model, args, input_names, output_names, opset_version, dynamic_axes, export_params)
    if verbose:
        print(helper.printable_graph(proto.graph))
    if isinstance(f, (str, os.PathLike)):
        onnx.save_model(proto, os.fspath(f))
    else:
        f.write(proto.SerializeToString())
    return None
