"""CUDA elementwise kernels: unary, binary and ternary ops over device arrays.

One executor, `run`, serves the built-in ops and `ember.kernel`'s alike, as on the CPU
(`_backends.cpu.elementwise`): it takes the kernels of a scalar function — a built-in
op's (`builtin`: generated into a module file, cached on disk) or a user function's
(`_backends.cuda.custom`: the same generator, compiled in memory) — and picks the variant
for the layout. Same-shape contiguous operands take a flat 1-d kernel (a NumPy scalar
operand is passed by value, a one-element device array read on the device), anything
else has its dims merged where memory allows and runs one 4-d strided kernel; more than
4 unmergeable dims loop over the leading ones on the host. Operands arrive broadcast and
in the compute dtype (float16 and bfloat16 compute in float32: the op layer casts).
"""
import numpy as np

from .arrays import empty, flat, is_array, is_c, upload
from .kernels.loops import VARIANTS, loops
from .launch import grid_stride, run_strided

__all__ = ["run", "builtin", "unary", "binary", "ternary", "unary_fresh", "binary_fresh", "binary_scalar_fresh"]


def same_c(x, out):
    return is_array(x) and x.shape == out.shape and is_c(x)


class BuiltinLoops:
    """The kernels of built-in op `name` of arity `kind` ("unary", "binary", "ternary"):
    the variants of `kernels.loops.VARIANTS`, from the op's generated module."""

    __slots__ = ("module", "variants")

    def __init__(self, kind, name):
        self.module = loops(kind, name)
        self.variants = frozenset(VARIANTS[kind])

    def has(self, kinds):
        """Whether a kernel over operands of `kinds` exists."""
        return kinds in self.variants

    def kernel(self, kinds):
        """The kernel over operands of `kinds`."""
        return getattr(self.module, kinds)


_builtins = {}


def builtin(kind, name):
    """The kernels of built-in op `name` (a function of `_backends.scalar`), made once."""
    found = _builtins.get((kind, name))
    if found is None:
        found = _builtins[kind, name] = BuiltinLoops(kind, name)
    return found


def _flat_kinds(operands, out):
    """The operands' kinds for a flat kernel ('c' same-shape contiguous array, 'v' host
    scalar, 'e' one-element device array), or None when one needs the strided kernel."""
    kinds = ""
    for x in operands:
        if not is_array(x):
            kinds += "v"
        elif same_c(x, out):
            kinds += "c"
        elif x.size == 1:
            kinds += "e"
        else:
            return None
    return kinds


def run(f_loops, operands, out, into=None):
    """out[...] = f(*operands[...]) with the kernels of scalar function f (a `builtin`, or a
    user function's): operands are device arrays broadcast to out's shape, or NumPy
    scalars. `into` (the operand that is `out`, as the CPU's) changes nothing here: a
    thread reads its element's operands before it writes that element."""
    if out.size == 0:
        return out
    if not any(is_array(x) for x in operands):  # all values: one becomes a device array
        operands = (scalar_array(operands[0]),) + tuple(operands[1:])
    if is_c(out):
        kinds = _flat_kinds(operands, out)
        if kinds is not None and f_loops.has(kinds):
            args = [x if kind == "v" else flat(x) for x, kind in zip(operands, kinds)]
            grid_stride(f_loops.kernel(kinds), out.size, *args, flat(out))
            return out
    kinds = "".join("s" if is_array(x) else "v" for x in operands)
    if not f_loops.has(kinds):  # no kernel takes these values: they go as device arrays
        operands, kinds = tuple(x if is_array(x) else scalar_array(x) for x in operands), "s" * len(operands)
    run_strided(f_loops.kernel(kinds), operands, out)
    return out


def unary(name, a, out):
    """out[...] = name(a[...]); `a` already broadcast to out's shape and compute dtype."""
    return run(builtin("unary", name), (a,), out)


def binary(name, a, b, out):
    """out[...] = name(a[...], b[...]); a, b: device arrays broadcastable to out, or NumPy scalars."""
    return run(builtin("binary", name), (a, b), out)


def ternary(name, a, b, c, out):
    """out[...] = name(a[...], b[...], c[...]) for operands broadcastable to out."""
    return run(builtin("ternary", name), (a, b, c), out)


def scalar_array(value):
    """A 0-d device array holding `value` (in its NumPy dtype)."""
    return upload(np.array(value))


def unary_fresh(name, a):
    """Fast path: a new array = name(a) for a C-contiguous array, else None."""
    if not is_c(a):
        return None
    return unary(name, a, empty(a.shape, a.dtype))


def binary_fresh(name, a, b):
    """Fast path: a new array = name(a, b) for same-shape C-contiguous arrays, else None."""
    if a.shape != b.shape or not (is_c(a) and is_c(b)):
        return None
    return binary(name, a, b, empty(a.shape, a.dtype))


def binary_scalar_fresh(name, a, scalar, tensor_first):
    """Fast path: name(a, scalar) (or name(scalar, a)) into a new array, or None."""
    if not is_c(a):
        return None
    out = empty(a.shape, a.dtype)
    return binary(name, a, scalar, out) if tensor_first else binary(name, scalar, a, out)
