"""ONNX forms of shape ops, indexing and reductions (see _symbolic)."""
import numpy as np

import ember_tensor as D

from .._graph import Value
from ._emitter import SymbolicError
from ._symbolic import first, output_of, symbolic


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
    x = first(args)
    out = output_of(node)
    shape = _leading_copies(x.shape, out.shape) if len(x.shape) and len(out.shape) else list(out.shape)
    return g.op("Reshape", g.name_of(x), g.ints(shape))


@symbolic("unsqueeze", "squeeze")
def _squeeze_like(g, node, args):
    x = first(args)
    out = output_of(node)
    return g.op("Reshape", g.name_of(x), g.ints(_leading_copies(x.shape, out.shape) if out.shape else []))


@symbolic("permute", "transpose", "t", "swapaxes", "swapdims", "movedim")
def _transpose(g, node, args):
    x = first(args)
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


# nondeterministic_backward: ember-nn's mark on the ops whose backward PyTorch refuses
# under deterministic algorithms; the forward is the input.
@symbolic("contiguous", "clone", "detach", "alias", "positive", "nondeterministic_backward")
def _identity(g, node, args):
    return g.op("Identity", g.name_of(first(args)))


@symbolic("to", "type_as", "float", "double", "half", "long", "int", "bool")
def _to(g, node, args):
    x, out = first(args), output_of(node)
    return g.op("Identity", g.name_of(x)) if x.dtype is out.dtype else g.cast(g.name_of(x), out.dtype)


@symbolic("expand", "expand_as", "broadcast_to")
def _expand(g, node, args):
    return g.op("Expand", g.name_of(first(args)), g.ints(output_of(node).shape))


@symbolic("cat", "concat", "concatenate")
def _cat(g, node, args):
    tensors, dim = list(args.values())[:2]
    dtype = output_of(node).dtype
    tensors = [t for t in tensors if t.shape != (0,)]
    return g.op("Concat", *(g.operand(t, dtype) for t in tensors), axis=dim % len(output_of(node).shape))


@symbolic("stack")
def _stack(g, node, args):
    tensors, dim = list(args.values())[:2]
    dim = dim % len(output_of(node).shape)
    dtype = output_of(node).dtype
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
    """Indexing with integer index tensors on consecutive dims and full slices (``:``)
    elsewhere: one index is a Gather on its dim; several (``x[rows, cols]``) are a GatherND
    over their broadcast coordinates, its dims moved to the front and back around it."""
    positions = [i for i, k in enumerate(key) if isinstance(k, Value)]
    first_pos, count = positions[0], len(positions)
    plain = all(k == slice(None) for i, k in enumerate(key) if i not in positions)
    if (not plain or positions != list(range(first_pos, first_pos + count))
            or any(key[i].dtype is D.bool or key[i].dtype.is_floating_point for i in positions)):
        raise SymbolicError(f"ONNX export: index tensors must be integer tensors on consecutive dims, with full "
                            f"slices (:) on the others (at {node.source})")
    if count == 1:
        return g.op("Gather", g.name_of(x), g.name_of(key[first_pos]), axis=first_pos)
    ndim, out_shape = len(x.shape), output_of(node).shape
    index_shape = out_shape[first_pos:first_pos + len(out_shape) - (ndim - count)]
    coordinates = [g.op("Unsqueeze", g.op("Expand", g.operand(key[i], D.int64), g.ints(index_shape)),
                        g.ints([len(index_shape)])) for i in positions]
    indices = g.op("Concat", *coordinates, axis=len(index_shape))
    data = g.name_of(x)
    if first_pos:  # the indexed dims first, as GatherND takes them
        order = [*range(first_pos, first_pos + count), *range(first_pos), *range(first_pos + count, ndim)]
        data = g.op("Transpose", data, perm=order)
    gathered = g.op("GatherND", data, indices)
    if not first_pos:
        return gathered
    lead, rest = len(index_shape), ndim - count - first_pos  # back to x's dims before, index dims, after
    return g.op("Transpose", gathered, perm=[*range(lead, lead + first_pos), *range(lead),
                                             *range(lead + first_pos, lead + first_pos + rest)])


@symbolic("split", "chunk", "unbind", "tensor_split")
def _split(g, node, args):
    x = first(args)
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
        x = first(args)
        out = output_of(node)
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
    x = first(args)
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
    x = first(args)
    name = g.name_of(x)
    dim = args.get("dim")
    if dim is None:
        name, dim = g.op("Reshape", name, g.ints([-1])), 0
    return g.op("ArgMax" if node.kind == "argmax" else "ArgMin", name, axis=dim % max(len(x.shape), 1),
                keepdims=int(bool(args.get("keepdim", False))))


