"""The op table: how each ember op of a trace is written as ONNX nodes (opset 17+).

One function per op (or family), registered with `symbolic(name, ...)`, called as
``fn(g, node, args)``: ``g`` is the Emitter, ``args`` the op's arguments bound to its
parameter names (defaults filled in), and the return value the ONNX names of the node's
outputs (a name, or a list for an op with several outputs).
"""
import inspect
import math

import numpy as np

from ember_tensor import _dtype as D

from .._graph import Value
from ._emitter import SymbolicError

__all__ = ["SYMBOLICS", "symbolic", "emit_node"]

SYMBOLICS = {}


def symbolic(*names):
    def register(fn):
        for name in names:
            SYMBOLICS[name] = fn
        return fn
    return register


def emit_node(g, node, consumers):
    """Write ``node`` into ``g``; bind its outputs' ONNX names."""
    fn = SYMBOLICS.get(node.kind)
    if fn is None:
        if node.kind.startswith("custom::"):
            raise SymbolicError(
                f"ONNX export: the custom kernel {node.kind[len('custom::'):]!r} (called at {node.source}) has no "
                f"ONNX form: ember.kernel ops run Python compiled by Numba, which ONNX runtimes cannot execute. "
                f"Export the model without it, or write it with built-in ops for export.")
        raise SymbolicError(f"ONNX export of operator '{node.kind}' is not supported (called at {node.source}); "
                            f"ember_export.onnx.supported_ops() lists the ops that are")
    args = _bind(node)
    g.current = node
    g.consumers = consumers
    names = fn(g, node, args)
    outs = node.outputs if isinstance(node.outputs, tuple) else (node.outputs,)
    names = names if isinstance(names, (list, tuple)) else [names]
    for value, name in zip(outs, names):
        if isinstance(value, Value) and name is not None:
            g.bind(value, name)


def _bind(node):
    signature = inspect.signature(node.op.impl)
    try:
        bound = signature.bind(*node.args, **node.kwargs)
    except TypeError:
        return {"args": node.args, **node.kwargs}
    bound.apply_defaults()
    arguments = dict(bound.arguments)
    for name, p in signature.parameters.items():  # *size varargs as a list
        if p.kind is p.VAR_POSITIONAL:
            arguments[name] = list(arguments.get(name, ()))
    return arguments


def _first(args):
    return next(iter(args.values()))


def _out(node, i=0):
    outs = node.outputs if isinstance(node.outputs, tuple) else (node.outputs,)
    return outs[i]


class _Operand:
    """What ember's promotion rules need to know of an operand: dtype and whether it is 0-d."""

    def __init__(self, value):
        self._dtype = value.dtype
        self._data = np.empty(value.shape, dtype=np.bool_)


def _promoted(*operands):
    return D.result_type_of([_Operand(a) if isinstance(a, Value) else a for a in operands if a is not None])


# --- elementwise --------------------------------------------------------------------------

_UNARY = {"neg": "Neg", "exp": "Exp", "log": "Log", "sqrt": "Sqrt", "abs": "Abs", "tanh": "Tanh",
          "sigmoid": "Sigmoid", "relu": "Relu", "sin": "Sin", "cos": "Cos", "tan": "Tan", "asin": "Asin",
          "acos": "Acos", "atan": "Atan", "sinh": "Sinh", "cosh": "Cosh", "asinh": "Asinh", "acosh": "Acosh",
          "atanh": "Atanh", "erf": "Erf", "floor": "Floor", "ceil": "Ceil", "reciprocal": "Reciprocal",
          "sign": "Sign", "logical_not": "Not", "isnan": "IsNaN", "isinf": "IsInf", "bitwise_not": "Not"}


def _unary(onnx_type):
    def emit(g, node, args):
        dtype = _out(node).dtype
        x = _first(args)
        source_dtype = dtype if onnx_type not in ("Not", "IsNaN", "IsInf") else x.dtype
        return g.op(onnx_type, g.operand(x, source_dtype))
    return emit


for _name, _type in _UNARY.items():
    symbolic(_name, _name + "_")(_unary(_type))


@symbolic("rsqrt", "rsqrt_")
def _rsqrt(g, node, args):
    return g.op("Reciprocal", g.op("Sqrt", g.operand(_first(args), _out(node).dtype)))


@symbolic("square", "square_")
def _square(g, node, args):
    x = g.operand(_first(args), _out(node).dtype)
    return g.op("Mul", x, x)


@symbolic("log2", "log2_", "log10", "log10_")
def _log_base(g, node, args):
    dtype = _out(node).dtype
    base = 2.0 if node.kind.startswith("log2") else 10.0
    return g.op("Div", g.op("Log", g.operand(_first(args), dtype)), g.operand(math.log(base), dtype))


@symbolic("log1p", "log1p_")
def _log1p(g, node, args):
    dtype = _out(node).dtype
    return g.op("Log", g.op("Add", g.operand(_first(args), dtype), g.operand(1, dtype)))


@symbolic("expm1", "expm1_")
def _expm1(g, node, args):
    dtype = _out(node).dtype
    return g.op("Sub", g.op("Exp", g.operand(_first(args), dtype)), g.operand(1, dtype))


_BINARY = {"add": "Add", "sub": "Sub", "mul": "Mul", "div": "Div", "true_divide": "Div", "pow": "Pow",
           "maximum": "Max", "minimum": "Min", "fmax": "Max", "fmin": "Min"}


def _binary(onnx_type):
    def emit(g, node, args):
        values = list(args.values())
        a, b = values[0], values[1]
        dtype = _out(node).dtype
        alpha = args.get("alpha", 1)
        rounding = args.get("rounding_mode")
        left, right = g.operand(a, dtype), g.operand(b, dtype)
        if alpha not in (1, None):
            right = g.op("Mul", right, g.operand(alpha, dtype))
        if onnx_type == "Div" and rounding is not None and dtype.is_floating_point:
            quotient = g.op("Div", left, right)
            return g.op("Floor", quotient) if rounding == "floor" else g.op(
                "Mul", g.op("Sign", quotient), g.op("Floor", g.op("Abs", quotient)))
        return g.op(onnx_type, left, right)
    return emit


for _name, _type in _BINARY.items():
    symbolic(_name, _name + "_")(_binary(_type))

_COMPARE = {"eq": "Equal", "lt": "Less", "le": "LessOrEqual", "gt": "Greater", "ge": "GreaterOrEqual",
            "logical_and": "And", "logical_or": "Or", "logical_xor": "Xor"}


def _compare(onnx_type):
    def emit(g, node, args):
        a, b = list(args.values())[:2]
        dtype = D.bool if onnx_type in ("And", "Or", "Xor") else _promoted(a, b)
        return g.op(onnx_type, g.operand(a, dtype), g.operand(b, dtype))
    return emit


for _name, _type in _COMPARE.items():
    symbolic(_name)(_compare(_type))


def _bitwise(logic, bitwise):
    def emit(g, node, args):
        a, b = list(args.values())[:2]
        dtype = _out(node).dtype
        if dtype is D.bool:
            return g.op(logic, g.operand(a, dtype), g.operand(b, dtype))
        if g.opset < 18:
            raise SymbolicError(f"ONNX export: {node.kind} on integer tensors (at {node.source}) needs "
                                f"opset_version=18 or newer")
        return g.op(bitwise, g.operand(a, dtype), g.operand(b, dtype))
    return emit


for _name, (_logic, _bits) in {"bitwise_and": ("And", "BitwiseAnd"), "bitwise_or": ("Or", "BitwiseOr"),
                               "bitwise_xor": ("Xor", "BitwiseXor")}.items():
    symbolic(_name)(_bitwise(_logic, _bits))


@symbolic("ne")
def _ne(g, node, args):
    a, b = list(args.values())[:2]
    dtype = _promoted(a, b)
    return g.op("Not", g.op("Equal", g.operand(a, dtype), g.operand(b, dtype)))


@symbolic("remainder", "remainder_")
def _remainder(g, node, args):
    a, b = list(args.values())[:2]
    dtype = _out(node).dtype
    x, y = g.operand(a, dtype), g.operand(b, dtype)
    if not dtype.is_floating_point:
        return g.op("Mod", x, y, fmod=0)
    return g.op("Sub", x, g.op("Mul", g.op("Floor", g.op("Div", x, y)), y))  # Python's sign rule


@symbolic("fmod", "fmod_")
def _fmod(g, node, args):
    a, b = list(args.values())[:2]
    dtype = _out(node).dtype
    return g.op("Mod", g.operand(a, dtype), g.operand(b, dtype), fmod=1)


@symbolic("where")
def _where(g, node, args):
    cond, x, y = list(args.values())[:3]
    dtype = _out(node).dtype
    return g.op("Where", g.operand(cond, D.bool), g.operand(x, dtype), g.operand(y, dtype))


@symbolic("clamp", "clamp_", "clip", "clamp_min", "clamp_max")
def _clamp(g, node, args):
    values = list(args.values())
    x = values[0]
    dtype = _out(node).dtype
    low = args.get("min") if node.kind != "clamp_max" else None
    high = args.get("max") if node.kind != "clamp_min" else None
    if node.kind == "clamp_min":
        low = values[1]
    if node.kind == "clamp_max":
        high = values[1]
    result = g.operand(x, dtype)
    if low is not None:
        result = g.op("Max", result, g.operand(low, dtype))
    if high is not None:
        result = g.op("Min", result, g.operand(high, dtype))
    return result


# --- linear algebra -----------------------------------------------------------------------

@symbolic("matmul", "mm", "bmm", "mv", "dot")
def _matmul(g, node, args):
    a, b = list(args.values())[:2]
    dtype = _out(node).dtype
    return g.op("MatMul", g.operand(a, dtype), g.operand(b, dtype))


@symbolic("addmm")
def _addmm(g, node, args):
    dtype = _out(node).dtype
    return g.op("Gemm", g.operand(args["mat1"], dtype), g.operand(args["mat2"], dtype),
                g.operand(args["input"], dtype), alpha=float(args.get("alpha", 1)), beta=float(args.get("beta", 1)))


@symbolic("linear")
def _linear(g, node, args):
    values = list(args.values())
    x, weight = values[0], values[1]
    bias = values[2] if len(values) > 2 else None
    dtype = _out(node).dtype
    out = g.op("MatMul", g.operand(x, dtype), g.op("Transpose", g.operand(weight, dtype), perm=[1, 0]))
    return g.op("Add", out, g.operand(bias, dtype)) if isinstance(bias, Value) else out


@symbolic("outer")
def _outer(g, node, args):
    a, b = list(args.values())[:2]
    dtype = _out(node).dtype
    return g.op("Mul", g.op("Unsqueeze", g.operand(a, dtype), g.ints([1])),
                g.op("Unsqueeze", g.operand(b, dtype), g.ints([0])))


# --- shapes -------------------------------------------------------------------------------

def _leading_copies(in_shape, out_shape):
    """ONNX Reshape's 0 ("copy this input dim") for leading dims that keep their size,
    so that a dynamic batch dimension stays dynamic."""
    shape = list(out_shape)
    for i, (a, b) in enumerate(zip(in_shape, out_shape)):
        if a != b:
            break
        shape[i] = 0
        break  # only the batch dimension: inner sizes stay explicit
    return shape


@symbolic("view", "reshape", "flatten", "unflatten", "view_as", "reshape_as")
def _reshape(g, node, args):
    x = _first(args)
    out = _out(node)
    shape = _leading_copies(x.shape, out.shape) if len(x.shape) and len(out.shape) else list(out.shape)
    return g.op("Reshape", g.name_of(x), g.ints(shape))


@symbolic("unsqueeze", "squeeze")
def _squeeze_like(g, node, args):
    x = _first(args)
    out = _out(node)
    return g.op("Reshape", g.name_of(x), g.ints(_leading_copies(x.shape, out.shape) if out.shape else []))


@symbolic("permute", "transpose", "t", "swapaxes", "swapdims", "movedim")
def _transpose(g, node, args):
    x = _first(args)
    ndim = len(x.shape)
    if node.kind == "permute":
        dims = args.get("dims")
        perm = list(dims[0] if len(dims) == 1 and isinstance(dims[0], (list, tuple)) else dims)
    elif node.kind == "t":
        perm = list(range(ndim))[::-1]
    elif node.kind == "movedim":
        perm = _movedim_perm(ndim, args["source"], args["destination"])
    else:
        d0, d1 = list(args.values())[1:3]
        perm = list(range(ndim))
        perm[d0 % ndim], perm[d1 % ndim] = perm[d1 % ndim], perm[d0 % ndim]
    return g.op("Transpose", g.name_of(x), perm=[p % max(ndim, 1) for p in perm])


def _movedim_perm(ndim, source, destination):
    source = [s % ndim for s in ([source] if isinstance(source, int) else source)]
    destination = [d % ndim for d in ([destination] if isinstance(destination, int) else destination)]
    rest = iter(d for d in range(ndim) if d not in source)
    perm = [None] * ndim
    for s, d in zip(source, destination):
        perm[d] = s
    return [p if p is not None else next(rest) for p in perm]


@symbolic("contiguous", "clone", "detach", "alias", "positive")
def _identity(g, node, args):
    return g.op("Identity", g.name_of(_first(args)))


@symbolic("to", "type_as", "float", "double", "half", "long", "int", "bool")
def _to(g, node, args):
    x, out = _first(args), _out(node)
    return g.op("Identity", g.name_of(x)) if x.dtype is out.dtype else g.cast(g.name_of(x), out.dtype)


@symbolic("expand", "expand_as", "broadcast_to")
def _expand(g, node, args):
    return g.op("Expand", g.name_of(_first(args)), g.ints(_out(node).shape))


@symbolic("cat", "concat", "concatenate")
def _cat(g, node, args):
    tensors, dim = list(args.values())[:2]
    dtype = _out(node).dtype
    tensors = [t for t in tensors if t.shape != (0,)]
    return g.op("Concat", *(g.operand(t, dtype) for t in tensors), axis=dim % len(_out(node).shape))


@symbolic("stack")
def _stack(g, node, args):
    tensors, dim = list(args.values())[:2]
    dim = dim % len(_out(node).shape)
    dtype = _out(node).dtype
    return g.op("Concat", *(g.op("Unsqueeze", g.operand(t, dtype), g.ints([dim])) for t in tensors), axis=dim)


@symbolic("getitem")
def _getitem(g, node, args):
    x, key = list(args.values())[:2]
    key = key if isinstance(key, tuple) else (key,)
    if any(isinstance(k, Value) for k in key):
        return _gather_index(g, node, x, key)
    if any(isinstance(k, (list, np.ndarray)) for k in key):
        raise SymbolicError(f"ONNX export: indexing with a Python list (at {node.source}) is not supported; "
                            f"use a tensor index")
    name = g.name_of(x)
    starts, ends, axes, steps, squeeze, inserted = [], [], [], [], [], []
    ndim = len(x.shape)
    n_real = sum(1 for k in key if k is not None and k is not Ellipsis)
    axis = out_axis = 0
    for k in key:
        if k is Ellipsis:
            axis += ndim - n_real
            out_axis += ndim - n_real
            continue
        if k is None:
            inserted.append(out_axis)
            out_axis += 1
            continue
        if isinstance(k, int):
            start = k % x.shape[axis]
            starts, ends, axes, steps = starts + [start], ends + [start + 1], axes + [axis], steps + [1]
            squeeze.append(axis)
        elif isinstance(k, slice):
            start, stop, step = k.indices(x.shape[axis])
            if (start, stop, step) != (0, x.shape[axis], 1):
                starts, ends, axes, steps = starts + [start], ends + [stop], axes + [axis], steps + [step]
            out_axis += 1
        axis += 1
    if axes:
        name = g.op("Slice", name, g.ints(starts), g.ints(ends), g.ints(axes), g.ints(steps))
    if squeeze:
        name = g.op("Squeeze", name, g.ints(squeeze))
    if inserted:
        name = g.op("Unsqueeze", name, g.ints(inserted))
    return name if (axes or squeeze or inserted) else g.op("Identity", name)


def _gather_index(g, node, x, key):
    if len(key) != 1 or not isinstance(key[0], Value) or key[0].dtype is D.bool:
        raise SymbolicError(f"ONNX export: only one integer index tensor on the first dimension is supported "
                            f"(at {node.source})")
    return g.op("Gather", g.name_of(x), g.name_of(key[0]), axis=0)


@symbolic("split", "chunk", "unbind", "tensor_split")
def _split(g, node, args):
    x = _first(args)
    outs = node.outputs
    dim = args.get("dim", 0) % len(x.shape)
    sizes = [v.shape[dim] if node.kind != "unbind" else 1 for v in outs]
    parts = g.op("Split", g.name_of(x), g.ints(sizes), axis=dim, outputs=len(outs))
    parts = parts if isinstance(parts, list) else [parts]
    if node.kind == "unbind":
        return [g.op("Squeeze", p, g.ints([dim])) for p in parts]
    return parts


# --- reductions ---------------------------------------------------------------------------

def _axes(args, ndim):
    dim = args.get("dim")
    if dim is None or dim == []:
        return list(range(ndim))
    return [d % max(ndim, 1) for d in ([dim] if isinstance(dim, int) else dim)]


def _reduce(onnx_type):
    def emit(g, node, args):
        x = _first(args)
        out = _out(node)
        dtype = out.dtype if out.dtype.is_floating_point or onnx_type == "ReduceSum" else x.dtype
        name = g.operand(x, dtype)
        axes = _axes(args, len(x.shape))
        keep = int(bool(args.get("keepdim", False)))
        if not x.shape:
            return g.op("Identity", name)
        if onnx_type == "ReduceSum" or g.opset >= 18:
            return g.op(onnx_type, name, g.ints(axes), keepdims=keep)
        return g.op(onnx_type, name, axes=axes, keepdims=keep)
    return emit


for _name, _type in {"sum": "ReduceSum", "mean": "ReduceMean", "amax": "ReduceMax", "amin": "ReduceMin",
                     "prod": "ReduceProd", "logsumexp": "ReduceLogSumExp"}.items():
    symbolic(_name)(_reduce(_type))


@symbolic("max", "min")
def _max(g, node, args):
    x = _first(args)
    kind = "ReduceMax" if node.kind == "max" else "ReduceMin"
    if args.get("dim") is None and not isinstance(args.get("other"), Value):
        return _reduce(kind)(g, node, {"input": x, "dim": None, "keepdim": False})
    if isinstance(args.get("other"), Value) or isinstance(args.get("dim"), Value):
        other = args.get("other", args.get("dim"))
        return g.op("Max" if node.kind == "max" else "Min", g.name_of(x), g.name_of(other))
    axis = args["dim"] % len(x.shape)
    keep = int(bool(args.get("keepdim", False)))
    values = _reduce(kind)(g, node, {"input": x, "dim": axis, "keepdim": keep})
    indices = g.op("ArgMax" if node.kind == "max" else "ArgMin", g.name_of(x), axis=axis, keepdims=keep)
    return [values, indices]


@symbolic("argmax", "argmin")
def _argmax(g, node, args):
    x = _first(args)
    name = g.name_of(x)
    dim = args.get("dim")
    if dim is None:
        name, dim = g.op("Reshape", name, g.ints([-1])), 0
    return g.op("ArgMax" if node.kind == "argmax" else "ArgMin", name, axis=dim % max(len(x.shape), 1),
                keepdims=int(bool(args.get("keepdim", False))))


# --- nn -------------------------------------------------------------------------------------

@symbolic("softmax", "log_softmax")
def _softmax(g, node, args):
    x = _first(args)
    dtype = _out(node).dtype
    return g.op("Softmax" if node.kind == "softmax" else "LogSoftmax", g.operand(x, dtype),
                axis=args["dim"] % max(len(x.shape), 1))


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
    indices = _out(node, 1)
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
    n, c = x.shape[0], x.shape[1]
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
    del n
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
