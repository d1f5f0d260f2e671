"""ONNX forms of the nn kernels: softmax, convolution, pooling, norms, embedding, pad (see _symbolic)."""
import numpy as np

from .._graph import Value
from ._emitter import SymbolicError
from ._symbolic import first, output_of, symbolic


# --- nn -------------------------------------------------------------------------------------

@symbolic("softmax", "log_softmax")
def _softmax(g, node, args):
    x = first(args)
    dtype = output_of(node).dtype
    return g.op("Softmax" if node.kind == "softmax" else "LogSoftmax", g.operand(x, dtype),
                axis=args["dim"] % max(len(x.shape), 1))


@symbolic("softplus")
def _softplus(g, node, args):
    # ONNX's Softplus is log(exp(x) + 1) computed stably; like PyTorch's exporter, ours
    # leaves `threshold` to it (above beta x = 20 the two differ by under exp(-20)).
    values = list(args.values())
    dtype = output_of(node).dtype
    x = g.operand(values[0], dtype)
    beta = float(args.get("beta", values[1] if len(values) > 1 else 1.0))
    if beta == 1.0:
        return g.op("Softplus", x)
    scale = g.operand(beta, dtype)
    return g.op("Div", g.op("Softplus", g.op("Mul", x, scale)), scale)


@symbolic("hardtanh", "hardtanh_")
def _hardtanh(g, node, args):
    # Max then Min, as clamp exports (PyTorch writes a Clip): the same values, -0.0 kept.
    values = list(args.values())
    dtype = output_of(node).dtype
    low = args.get("min_val", values[1] if len(values) > 1 else -1.0)
    high = args.get("max_val", values[2] if len(values) > 2 else 1.0)
    x = g.operand(values[0], dtype)
    return g.op("Min", g.op("Max", x, g.operand(low, dtype)), g.operand(high, dtype))


def _tuple(value, n):
    return list(value) if isinstance(value, (list, tuple)) else [value] * n


@symbolic("convolution")
def _convolution(g, node, args):
    x, weight, bias = args["input"], args["weight"], args.get("bias")
    nd = len(weight.shape) - 2
    padding = args.get("padding", 0)
    attrs = {"strides": _tuple(args.get("stride", 1), nd), "dilations": _tuple(args.get("dilation", 1), nd),
             "group": int(args.get("groups", 1))}
    if isinstance(padding, str):
        attrs["auto_pad"] = "SAME_UPPER" if padding == "same" else "VALID"
    else:
        attrs["pads"] = _tuple(padding, nd) * 2
    inputs = [g.name_of(x), g.name_of(weight)] + ([g.name_of(bias)] if isinstance(bias, Value) else [])
    if args.get("transposed"):
        return g.op("ConvTranspose", *inputs, output_padding=_tuple(args.get("output_padding", 0), nd), **attrs)
    return g.op("Conv", *inputs, **attrs)


def _pool_attrs(args, nd):
    kernel = _tuple(args["kernel_size"], nd)
    stride = args.get("stride")
    stride = kernel if stride in (None, [], ()) else _tuple(stride, nd)
    return {"kernel_shape": kernel, "strides": stride, "pads": _tuple(args.get("padding", 0), nd) * 2,
            "ceil_mode": int(bool(args.get("ceil_mode", False)))}


@symbolic("max_pool_with_indices")
def _max_pool(g, node, args):
    x = args["input"]
    nd = len(x.shape) - 2
    indices = output_of(node, 1)
    if id(indices) in g.consumers:
        raise SymbolicError(f"ONNX export: max pooling indices (return_indices=True, at {node.source}) are not "
                            f"supported: ONNX numbers them differently")
    attrs = _pool_attrs(args, nd)
    attrs["dilations"] = _tuple(args.get("dilation", 1), nd)
    return [g.op("MaxPool", g.name_of(x), **attrs), None]


@symbolic("avg_pool")
def _avg_pool(g, node, args):
    x = args["input"]
    if args.get("divisor_override") is not None:
        raise SymbolicError(f"ONNX export: avg_pool with divisor_override (at {node.source}) is not supported")
    attrs = _pool_attrs(args, len(x.shape) - 2)
    return g.op("AveragePool", g.name_of(x), count_include_pad=int(bool(args.get("count_include_pad", True))),
                **attrs)


@symbolic("native_batch_norm")
def _batch_norm(g, node, args):
    x = args["input"]
    if args.get("training") and not isinstance(args.get("running_mean"), Value):
        raise SymbolicError(f"ONNX export: batch_norm in training mode without running statistics (at "
                            f"{node.source}); call model.eval() before exporting")
    channels = x.shape[1]
    dtype = x.dtype
    weight = g.name_of(args["weight"]) if isinstance(args.get("weight"), Value) else g.const(
        np.ones(channels, dtype.np))
    bias = g.name_of(args["bias"]) if isinstance(args.get("bias"), Value) else g.const(np.zeros(channels, dtype.np))
    out = g.op("BatchNormalization", g.name_of(x), weight, bias, g.name_of(args["running_mean"]),
               g.name_of(args["running_var"]), epsilon=float(args["eps"]))
    return [out, None, None]


@symbolic("native_layer_norm")
def _layer_norm(g, node, args):
    x = args["input"]
    shape = list(args["normalized_shape"])
    dtype = x.dtype
    weight = g.name_of(args["weight"]) if isinstance(args.get("weight"), Value) else g.const(np.ones(shape, dtype.np))
    bias = g.name_of(args["bias"]) if isinstance(args.get("bias"), Value) else g.const(np.zeros(shape, dtype.np))
    out = g.op("LayerNormalization", g.name_of(x), weight, bias, axis=-len(shape), epsilon=float(args["eps"]))
    return [out, None, None]


@symbolic("native_group_norm")
def _group_norm(g, node, args):
    x = args["input"]
    groups, eps = int(args["num_groups"]), float(args["eps"])
    c = x.shape[1]
    grouped = g.op("Reshape", g.name_of(x), g.ints([0, groups, -1]))
    mean = g.op("ReduceMean", grouped, axes=[2], keepdims=1) if g.opset < 18 else g.op(
        "ReduceMean", grouped, g.ints([2]), keepdims=1)
    centered = g.op("Sub", grouped, mean)
    square = g.op("Mul", centered, centered)
    var = g.op("ReduceMean", square, axes=[2], keepdims=1) if g.opset < 18 else g.op(
        "ReduceMean", square, g.ints([2]), keepdims=1)
    normed = g.op("Div", centered, g.op("Sqrt", g.op("Add", var, g.const(np.array(eps, x.dtype.np)))))
    out = g.op("Reshape", normed, g.op("Shape", g.name_of(x)))
    affine_shape = [1, c] + [1] * (len(x.shape) - 2)
    if isinstance(args.get("weight"), Value):
        out = g.op("Mul", out, g.op("Reshape", g.name_of(args["weight"]), g.ints(affine_shape)))
    if isinstance(args.get("bias"), Value):
        out = g.op("Add", out, g.op("Reshape", g.name_of(args["bias"]), g.ints(affine_shape)))
    return [out, None, None]


@symbolic("embedding")
def _embedding(g, node, args):
    return g.op("Gather", g.name_of(args["weight"]), g.name_of(args["indices"]), axis=0)


@symbolic("constant_pad_nd")
def _pad(g, node, args):
    x = args["input"]
    pad = list(args["pad"])
    ndim = len(x.shape)
    begins, ends = [0] * ndim, [0] * ndim
    for i in range(len(pad) // 2):  # PyTorch pads the last dim first
        begins[ndim - 1 - i], ends[ndim - 1 - i] = pad[2 * i], pad[2 * i + 1]
    value = g.const(np.array(args.get("value", 0), dtype=x.dtype.np))
    return g.op("Pad", g.name_of(x), g.ints(begins + ends), value, mode="constant")
