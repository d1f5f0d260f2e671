"""The custom family on CUDA: ember.kernel's, raw_kernel's and reduce_kernel's kernels.

`launch_elementwise` runs kernels around a user's scalar function (a numba.cuda device
function), per arity; `launch_raw` launches a user's ``cuda.jit`` kernel with one thread
per output element; `launch_reduce` runs a combine function with a thread per row.
Compiled kernels are kept per user function (weakly: a redefined kernel drops them).

The same scalar Python source the CPU loops inline becomes a CUDA device function; the
kernels are grid-stride loops over contiguous operands or 4-d strided views, launched
through ember's CUDA backend (its stream, its launch configuration).
"""
import weakref

import numpy as np
from numba import cuda

from .. import codegen

from . import arrays, elementwise, launch
from .storage import from_numpy

__all__ = ["launch_elementwise", "launch_raw", "launch_reduce"]

# user function -> its compiled kernels (CudaKernels, a raw kernel, a reduce kernel)
_elementwise = weakref.WeakKeyDictionary()
_raw = weakref.WeakKeyDictionary()
_reduce = weakref.WeakKeyDictionary()


def _flat_source(pattern):
    args = ", ".join(f"x{i}" for i in range(len(pattern)))
    call = ", ".join(f"x{i}[i]" if kind == "a" else f"x{i}[0]" for i, kind in enumerate(pattern))
    return (f"def kernel({args}, out):\n"
            f"    for i in range(cuda.grid(1), out.shape[0], cuda.gridsize(1)):\n"
            f"        out[i] = f({call})\n")


def _strided_source(arity):
    args = ", ".join(f"x{i}" for i in range(arity))
    call = ", ".join(f"x{i}[i0, i1, i2, i3]" for i in range(arity))
    return (f"def kernel({args}, out):\n"
            f"    n0, n1, n2, n3 = out.shape\n"
            f"    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):\n"
            f"        i3 = i % n3\n"
            f"        r = i // n3\n"
            f"        i2 = r % n2\n"
            f"        r = r // n2\n"
            f"        i1 = r % n1\n"
            f"        i0 = r // n1\n"
            f"        out[i0, i1, i2, i3] = f({call})\n")


class CudaKernels:
    """The compiled CUDA kernels of one user function (each variant compiled on first launch)."""

    def __init__(self, fn):
        self.fn = fn
        self._device_fn = cuda.jit(device=True)(fn)
        self._kernels = {}

    def _kernel(self, key, source):
        kernel = self._kernels.get(key)
        if kernel is None:
            kernel = codegen.compile_function(source, "kernel", {"f": self._device_fn, "cuda": cuda},
                                              f"<ember kernel {self.fn.__name__}>")
            kernel = self._kernels[key] = cuda.jit(kernel)
        return kernel

    def run(self, operands, out):
        """``out[...] = fn(*operands[...])``; operands are device arrays broadcast to out, or scalars."""
        if out.size == 0:
            return out
        operands = [x if arrays.is_array(x) else elementwise._scalar_array(x) for x in operands]
        if arrays.is_c(out) and all(elementwise._same_c(x, out) or x.size == 1 for x in operands):
            pattern = "".join("a" if elementwise._same_c(x, out) else "s" for x in operands)
            args = [arrays.flat(x) for x in operands]
            launch.grid_stride(self._kernel(("flat", pattern), _flat_source(pattern)), out.size, *args,
                             arrays.flat(out))
            return out
        launch.run_strided(self._kernel(("strided", len(operands)), _strided_source(len(operands))),
                              operands, out)
        return out


def launch_elementwise(fn, operands, out):
    """``out[...] = fn(*operands[...])`` (ember.kernel): operands are device arrays
    broadcast to `out`'s shape, or scalars; `fn` compiles on first launch, per layout."""
    kernels = _elementwise.get(fn)
    if kernels is None:
        kernels = _elementwise[fn] = CudaKernels(fn)
    return kernels.run(operands, out)


def launch_raw(cpu_loop, cuda_kernel, name, out, args):
    """Launch raw_kernel's ``cuda_kernel(out, *args)`` (compiled with ``cuda.jit`` on first
    launch) with a thread per output element; `cpu_loop` is the CPU backend's."""
    if cuda_kernel is None:
        raise RuntimeError(f"{name}(): this kernel has no CUDA version (pass cuda= to raw_kernel)")
    kernel = _raw.get(cuda_kernel)
    if kernel is None:
        kernel = _raw[cuda_kernel] = cuda.jit(cuda_kernel)
    launch.grid_stride(kernel, max(out.size, 1), out, *args)
    return out


# Built with `cuda` as a global of the kernel's namespace: the simulator swaps it for its
# own module there (not in a closure).
_REDUCE = """
def kernel(x, out, identity):
    for o in range(cuda.grid(1), x.shape[0], cuda.gridsize(1)):
        acc = identity[0]
        for i in range(x.shape[1]):
            acc = f(acc, x[o, i])
        out[o] = acc
"""


def launch_reduce(combine, matrix, out, identity):
    """``out[o] = combine(...combine(identity, matrix[o, 0])..., matrix[o, -1])`` for every
    row `o` of the C-contiguous 2-d device `matrix` (reduce_kernel); `identity` a NumPy
    scalar (uploaded as a one-element array, so every dtype passes the same way)."""
    kernel = _reduce.get(combine)
    if kernel is None:
        kernel = codegen.compile_function(_REDUCE, "kernel", {"cuda": cuda, "f": cuda.jit(device=True)(combine)},
                                          f"<ember reduce kernel {combine.__name__}>")
        kernel = _reduce[combine] = cuda.jit(kernel)
    launch.grid_stride(kernel, matrix.shape[0], matrix, out, from_numpy(np.array([identity])))
    return out
