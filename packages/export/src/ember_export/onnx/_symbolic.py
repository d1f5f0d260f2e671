"""The op table: how each ember op of a trace is written as ONNX nodes (opset 17+).

The table is filled by one module per family: `_symbolic_math` (elementwise, linear
algebra), `_symbolic_shape` (shapes, indexing, reductions), `_symbolic_nn` (nn kernels).

One function per op (or family), registered with `symbolic(name, ...)`, called as
``fn(g, node, args)``: ``g`` is the Emitter, ``args`` the op's arguments bound to its
parameter names (defaults filled in), and the return value the ONNX names of the node's
outputs (a name, or a list for an op with several outputs).
"""
import inspect

import numpy as np

import ember_tensor as D
from ember_tensor.dispatch import result_type_of

from .._graph import Value
from ._emitter import SymbolicError

__all__ = ["SYMBOLICS", "symbolic", "emit_node", "first", "output_of", "promoted"]

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


def first(args):
    return next(iter(args.values()))


def output_of(node, i=0):
    outs = node.outputs if isinstance(node.outputs, tuple) else (node.outputs,)
    return outs[i]


class _Operand:
    """What ember's promotion rules need to know of an operand: dtype and whether it is 0-d."""

    def __init__(self, value):
        self._dtype = value.dtype
        self._data = np.empty(value.shape, dtype=np.bool_)


def promoted(*operands):
    return result_type_of([_Operand(a) if isinstance(a, Value) else a for a in operands if a is not None])


from . import _symbolic_math, _symbolic_nn, _symbolic_shape  # noqa: E402,F401 -- fill SYMBOLICS
