"""CUDA elementwise kernels: unary, binary and ternary ops over device arrays.

They run like the CPU's (`_backends.cpu.elementwise`): same-shape contiguous operands
take a flat 1-d kernel (a NumPy scalar operand is passed by value), anything else has
its dims merged where memory allows and runs one 4-d strided kernel; more than 4
unmergeable dims loop over the leading ones on the host. Operands arrive broadcast and
in the compute dtype (float16 and bfloat16 compute in float32: the op layer casts).
"""
import numpy as np

from .arrays import empty, flat, is_array, is_c, upload
from .kernels.loops import loops
from .launch import grid_stride, run_strided

__all__ = ["unary", "binary", "ternary", "unary_fresh", "binary_fresh", "binary_scalar_fresh"]


def same_c(x, out):
    return is_array(x) and x.shape == out.shape and is_c(x)


def unary(name, a, out):
    """out[...] = name(a[...]); `a` already broadcast to out's shape and compute dtype."""
    if out.size == 0:
        return out
    mod = loops("unary", name)
    if is_c(out) and same_c(a, out):
        grid_stride(mod.c, out.size, flat(a), flat(out))
    else:
        run_strided(mod.s, (a,), out)
    return out


def binary(name, a, b, out):
    """out[...] = name(a[...], b[...]); a, b: device arrays broadcastable to out, or NumPy scalars."""
    if out.size == 0:
        return out
    mod = loops("binary", name)
    a_arr, b_arr = is_array(a), is_array(b)
    if not (a_arr or b_arr):
        a, a_arr = scalar_array(a), True
    if is_c(out):
        a_c, b_c = same_c(a, out), same_c(b, out)
        if a_c and b_c:
            grid_stride(mod.cc, out.size, flat(a), flat(b), flat(out))
            return out
        if a_c and not b_arr:
            grid_stride(mod.cv, out.size, flat(a), b, flat(out))
            return out
        if b_c and not a_arr:
            grid_stride(mod.vc, out.size, a, flat(b), flat(out))
            return out
    kernel = mod.ss if (a_arr and b_arr) else (mod.sv if a_arr else mod.vs)
    run_strided(kernel, (a, b), out)
    return out


def ternary(name, a, b, c, out):
    """out[...] = name(a[...], b[...], c[...]) for operands broadcastable to out."""
    if out.size == 0:
        return out
    mod = loops("ternary", name)
    ops = tuple(x if is_array(x) else scalar_array(x) for x in (a, b, c))
    if is_c(out) and all(same_c(x, out) for x in ops):
        grid_stride(mod.ccc, out.size, *(flat(x) for x in ops), flat(out))
    else:
        run_strided(mod.sss, ops, out)
    return out


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
