"""CUDA kernels around a user's scalar function (numba.cuda device function), per arity.

The same scalar Python source the CPU loops inline becomes a CUDA device function; the
kernels are grid-stride loops over contiguous operands or 4-d strided views, launched
through ember's CUDA backend (its stream, its launch configuration).
"""
from numba import cuda

from .._backends import codegen
from .._backends.cuda import arrays, elementwise, launch

__all__ = ["CudaKernels"]


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
