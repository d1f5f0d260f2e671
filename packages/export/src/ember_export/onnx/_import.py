"""``load(path)``: an ONNX model as a runnable, trainable ember callable.

Initializers become tensors that require grad (``parameters()``/``named_parameters()``),
so a model exported by any framework can be fine-tuned with ember's autograd and
optimizers; each ONNX node runs as ember ops. The opset subset is the one the exporter
writes (see the package README); another op raises a clear error naming it.
"""
import numpy as np
import onnx
from onnx import numpy_helper

import ember_tensor as et
from ember_tensor import dispatch as _dispatch
from ember_tensor import nn_ops

__all__ = ["load", "OnnxModule"]

_DTYPES = {1: et.float32, 11: et.float64, 10: et.float16, 16: et.bfloat16, 7: et.int64, 6: et.int32,
           5: et.int16, 3: et.int8, 2: et.uint8, 9: et.bool}


def _op(name):
    # The registry itself, not operators() (which copies it): this runs for every node.
    return _dispatch.get_operator(name)


def _ints(t):
    return [int(v) for v in t.tolist()]


def _reduce(name):
    def run(attrs, x, axes=None):
        dims = attrs.get("axes") if axes is None else _ints(axes)
        keep = bool(attrs.get("keepdims", 1))
        dims = list(range(x.dim())) if dims is None else dims
        if name == "logsumexp":
            return et.logsumexp(x, dim=dims, keepdim=keep)
        if name in ("amax", "amin", "prod"):
            result = x
            for d in sorted((d % x.dim() for d in dims), reverse=True):
                result = getattr(et, name)(result, d, keepdim=keep) if name == "prod" else getattr(et, name)(
                    result, dim=d, keepdim=keep)
            return result
        return getattr(et, name)(x, dim=dims, keepdim=keep)
    return run


def _slice(attrs, x, starts, ends, axes=None, steps=None):
    starts, ends = _ints(starts), _ints(ends)
    axes = _ints(axes) if axes is not None else list(range(len(starts)))
    steps = _ints(steps) if steps is not None else [1] * len(starts)
    key = [slice(None)] * x.dim()
    for s, e, a, st in zip(starts, ends, axes, steps):
        key[a % x.dim()] = slice(s, min(e, x.shape[a % x.dim()]), st)
    return x[tuple(key)]


def _reshape(attrs, x, shape):
    target = [x.shape[i] if v == 0 else v for i, v in enumerate(_ints(shape))]
    return x.reshape(target)


def _conv(attrs, x, w, b=None, transposed=False):
    nd = w.dim() - 2
    pads = attrs.get("pads", [0] * 2 * nd)
    if pads[:nd] != pads[nd:]:
        raise NotImplementedError("ONNX import: asymmetric Conv pads are not supported")
    padding = "same" if attrs.get("auto_pad") == "SAME_UPPER" else pads[:nd]
    return _op("convolution")(x, w, b, attrs.get("strides", [1] * nd), padding, attrs.get("dilations", [1] * nd),
                              transposed, attrs.get("output_padding", [0] * nd), attrs.get("group", 1))


def _pool_args(attrs, x):
    nd = x.dim() - 2
    kernel = attrs["kernel_shape"]
    pads = attrs.get("pads", [0] * 2 * nd)
    return kernel, attrs.get("strides", kernel), pads[:nd], bool(attrs.get("ceil_mode", 0))


def _max_pool(attrs, x):
    kernel, stride, padding, ceil = _pool_args(attrs, x)
    return _op("max_pool_with_indices")(x, kernel, stride, padding, attrs.get("dilations", [1] * len(kernel)),
                                        ceil)[0]


def _avg_pool(attrs, x):
    kernel, stride, padding, ceil = _pool_args(attrs, x)
    return _op("avg_pool")(x, kernel, stride, padding, ceil, bool(attrs.get("count_include_pad", 0)))


def _pad(attrs, x, pads, value=None):
    pads = _ints(pads)
    n = x.dim()
    torch_pad = []
    for d in reversed(range(n)):
        torch_pad += [pads[d], pads[d + n]]
    return _op("constant_pad_nd")(x, torch_pad, 0 if value is None else value.item())


def _split(attrs, x, split=None):
    axis = attrs.get("axis", 0)
    sizes = _ints(split) if split is not None else attrs.get("split")
    return tuple(et.split(x, sizes, dim=axis))


_HANDLERS = {
    "Add": lambda a, x, y: x + y, "Sub": lambda a, x, y: x - y, "Mul": lambda a, x, y: x * y,
    "Div": lambda a, x, y: x / y if x.is_floating_point() else et.div(x, y, rounding_mode="trunc"),
    "Pow": lambda a, x, y: x ** y, "Neg": lambda a, x: -x, "Exp": lambda a, x: x.exp(), "Log": lambda a, x: x.log(),
    "Sqrt": lambda a, x: x.sqrt(), "Abs": lambda a, x: x.abs(), "Tanh": lambda a, x: x.tanh(),
    "Sigmoid": lambda a, x: x.sigmoid(), "Relu": lambda a, x: x.relu(), "Sin": lambda a, x: x.sin(),
    "Softplus": lambda a, x: nn_ops.softplus(x),
    "Cos": lambda a, x: x.cos(), "Erf": lambda a, x: x.erf(), "Floor": lambda a, x: x.floor(),
    "Ceil": lambda a, x: x.ceil(), "Reciprocal": lambda a, x: x.reciprocal(), "Sign": lambda a, x: x.sign(),
    "Not": lambda a, x: et.logical_not(x), "IsNaN": lambda a, x: x.isnan(),
    "Max": lambda a, *xs: _fold(et.maximum, xs), "Min": lambda a, *xs: _fold(et.minimum, xs),
    "Equal": lambda a, x, y: x == y, "Less": lambda a, x, y: x < y, "LessOrEqual": lambda a, x, y: x <= y,
    "Greater": lambda a, x, y: x > y, "GreaterOrEqual": lambda a, x, y: x >= y,
    "And": lambda a, x, y: et.logical_and(x, y), "Or": lambda a, x, y: et.logical_or(x, y),
    "Xor": lambda a, x, y: et.logical_xor(x, y), "Where": lambda a, c, x, y: et.where(c, x, y),
    "Mod": lambda a, x, y: et.fmod(x, y) if a.get("fmod") else et.remainder(x, y),
    "MatMul": lambda a, x, y: et.matmul(x, y),
    "Gemm": lambda a, x, y, c=None: _gemm(a, x, y, c),
    "Reshape": _reshape, "Identity": lambda a, x: x, "Dropout": lambda a, x, *rest: x,
    "Transpose": lambda a, x: x.permute(*(a.get("perm") or list(range(x.dim()))[::-1])),
    "Cast": lambda a, x: x.to(_DTYPES[a["to"]]),
    "Expand": lambda a, x, shape: x.expand(*et.broadcast_shapes(tuple(x.shape), tuple(_ints(shape)))),
    "Concat": lambda a, *xs: et.cat(list(xs), dim=a["axis"]),
    "Unsqueeze": lambda a, x, axes: _unsqueeze(x, _ints(axes)),
    "Squeeze": lambda a, x, axes=None: x.squeeze() if axes is None else x.squeeze(tuple(_ints(axes))),
    "Slice": _slice, "Gather": lambda a, x, i: _gather(x, i, a.get("axis", 0)), "Split": _split,
    "GatherND": lambda a, x, i: _gather_nd(x, i, a.get("batch_dims", 0)),
    "ReduceSum": _reduce("sum"), "ReduceMean": _reduce("mean"), "ReduceMax": _reduce("amax"),
    "ReduceMin": _reduce("amin"), "ReduceProd": _reduce("prod"), "ReduceLogSumExp": _reduce("logsumexp"),
    "ArgMax": lambda a, x: et.argmax(x, dim=a.get("axis", 0), keepdim=bool(a.get("keepdims", 1))),
    "ArgMin": lambda a, x: et.argmin(x, dim=a.get("axis", 0), keepdim=bool(a.get("keepdims", 1))),
    "Softmax": lambda a, x: _op("softmax")(x, a.get("axis", -1)),
    "LogSoftmax": lambda a, x: _op("log_softmax")(x, a.get("axis", -1)),
    "Conv": _conv, "ConvTranspose": lambda a, x, w, b=None: _conv(a, x, w, b, transposed=True),
    "MaxPool": _max_pool, "AveragePool": _avg_pool,
    "GlobalAveragePool": lambda a, x: x.mean(dim=tuple(range(2, x.dim())), keepdim=True),
    "BatchNormalization": lambda a, x, w, b, m, v: _op("native_batch_norm")(x, w, b, m, v, False, 0.1,
                                                                           a.get("epsilon", 1e-5))[0],
    "LayerNormalization": lambda a, x, w, b=None: _op("native_layer_norm")(
        x, list(x.shape[a.get("axis", -1) % x.dim():]), w, b, a.get("epsilon", 1e-5))[0],
    "Pad": _pad, "Shape": lambda a, x: et.tensor(list(x.shape), dtype=et.int64),
    "Flatten": lambda a, x: x.reshape(int(np.prod(x.shape[:a.get("axis", 1)])), -1),
}


def _fold(fn, xs):
    result = xs[0]
    for x in xs[1:]:
        result = fn(result, x)
    return result


def _unsqueeze(x, axes):
    for a in sorted(a % (x.dim() + len(axes)) for a in axes):
        x = x.unsqueeze(a)
    return x


def _gather(x, index, axis):
    if index.dim() == 0:
        return x.select(axis, int(index.item()))
    flat = index.reshape(-1)
    picked = x.index_select(axis, flat) if hasattr(x, "index_select") else x[(slice(None),) * axis + (flat,)]
    return picked.reshape(*x.shape[:axis], *index.shape, *x.shape[axis + 1:])


def _gather_nd(x, indices, batch_dims):
    """ONNX GatherND (batch_dims 0): the last dim of `indices` holds coordinates into x's
    first dims; indexing with one index tensor per coordinate is the same."""
    if batch_dims:
        raise NotImplementedError("ONNX import: GatherND with batch_dims > 0 is not supported")
    return x[tuple(indices[..., k] for k in range(indices.shape[-1]))]


def _gemm(attrs, a, b, c):
    if attrs.get("transA"):
        a = a.t()
    if attrs.get("transB"):
        b = b.t()
    result = et.matmul(a, b) * attrs.get("alpha", 1.0)
    if c is not None:
        result = result + c * attrs.get("beta", 1.0)
    return result


def _attributes(node):
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


class OnnxModule:
    """A loaded ONNX graph: call it with tensors; its initializers are its parameters."""

    def __init__(self, proto):
        onnx.checker.check_model(proto)
        self.proto = proto
        graph = proto.graph
        self._initializers = {t.name: et.from_numpy(numpy_helper.to_array(t).copy()) for t in graph.initializer}
        # Floating-point initializers are the weights; integer ones are shapes and indices.
        self._params = {n: t.requires_grad_() for n, t in self._initializers.items() if t.is_floating_point()}
        self.input_names = [i.name for i in graph.input if i.name not in self._initializers]
        self.output_names = [o.name for o in graph.output]
        for node in graph.node:
            if node.op_type not in _HANDLERS and node.op_type != "Constant":
                raise NotImplementedError(f"ONNX import: operator {node.op_type!r} (node {node.name or node.output[0]!r}) "
                                          f"is not supported; supported: {', '.join(sorted(_HANDLERS))}")

    def named_parameters(self):
        return list(self._params.items())

    def parameters(self):
        return list(self._params.values())

    def __call__(self, *inputs):
        if len(inputs) != len(self.input_names):
            raise TypeError(f"the ONNX model takes {len(self.input_names)} inputs ({', '.join(self.input_names)}), "
                            f"got {len(inputs)}")
        env = dict(self._initializers)
        env.update(zip(self.input_names, inputs))
        for node in self.proto.graph.node:
            attrs = _attributes(node)
            if node.op_type == "Constant":
                env[node.output[0]] = et.from_numpy(numpy_helper.to_array(attrs["value"]).copy())
                continue
            args = [env[name] if name else None for name in node.input]
            while args and args[-1] is None:
                args.pop()
            result = _HANDLERS[node.op_type](attrs, *args)
            results = result if isinstance(result, tuple) else (result,)
            for name, value in zip(node.output, results):
                env[name] = value
        outputs = [env[name] for name in self.output_names]
        return outputs[0] if len(outputs) == 1 else tuple(outputs)


def load(f):
    """An ONNX model (a path, a binary file or a ModelProto) as a callable `OnnxModule`."""
    proto = f if isinstance(f, onnx.ModelProto) else onnx.load(f)
    return OnnxModule(proto)
