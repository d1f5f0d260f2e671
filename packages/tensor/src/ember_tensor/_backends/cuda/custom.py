"""The custom family on CUDA: ember.kernel's, raw_kernel's and reduce_kernel's kernels.

`launch_elementwise` runs kernels around a user's scalar function (a numba.cuda device
function), per arity; `launch_raw` launches a user's ``cuda.jit`` kernel with one thread
per output element; `launch_reduce` runs a combine function with a thread per row.
Compiled kernels are kept per user function (weakly: a redefined kernel drops them).

The same scalar Python source the CPU loops inline becomes a CUDA device function; the
kernels are grid-stride loops over contiguous operands or 4-d strided views, written by
the generator of the built-in ops' kernels (`kernels.loops.kernel_source`) and launched
through ember's CUDA backend (its stream, its launch configuration).
"""
import weakref

import numpy as np
from numba import cuda

from .. import codegen
from . import elementwise, launch
from . import fused_elementwise as _fused_elementwise
from . import fused_layer_norm as _fused_layer_norm
from . import fused_reduction as _fused_reduction
from . import fused_softmax as _fused_softmax
from .kernels.loops import kernel_source
from .storage import from_numpy

__all__ = ["launch_elementwise", "launch_fused", "launch_fused_layer_norm", "launch_fused_reduce",
           "launch_fused_softmax", "launch_raw", "launch_reduce"]

# user function -> its compiled kernels (CudaKernels, a raw kernel, a reduce kernel)
_elementwise = weakref.WeakKeyDictionary()
_raw = weakref.WeakKeyDictionary()
_reduce = weakref.WeakKeyDictionary()


class CudaKernels:
    """The compiled CUDA kernels of one user function (each variant compiled on first
    launch, in memory): what `elementwise.builtin` is for a built-in op, so that
    `elementwise.run` executes both."""

    def __init__(self, fn):
        self.fn = fn
        self._device_fn = cuda.jit(device=True)(fn)
        self._kernels = {}

    def kernel(self, kinds):
        """The kernel over operands of `kinds` (the built-in ops' letters), compiled once."""
        kernel = self._kernels.get(kinds)
        if kernel is None:
            source = kernel_source("kernel", kinds)  # the generator of the built-in ops' kernels
            kernel = codegen.compile_function(source, "kernel", {"f": self._device_fn, "cuda": cuda},
                                              f"<ember kernel {self.fn.__name__}>")
            kernel = self._kernels[kinds] = cuda.jit(kernel)
        return kernel

    def has(self, kinds):
        """Every layout has its kernel: a user function's compile on demand."""
        return True


def launch_elementwise(fn, operands, out):
    """``out[...] = fn(*operands[...])`` (ember.kernel): operands are device arrays
    broadcast to `out`'s shape, or scalars; `fn` compiles on first launch, per layout."""
    kernels = _elementwise.get(fn)
    if kernels is None:
        kernels = _elementwise[fn] = CudaKernels(fn)
    return elementwise.run(kernels, operands, out)  # the built-in ops' executor


_fused = {}   # module name -> its FusedKernels
_programs = {}   # module name -> the program's scalar function (the row and reduction kernels')


def launch_fused(module_name, scalar_source, name, used, np_dtype, operands, out, into=None):
    """``out[...] = name(*operands[...])`` for a fused program (``ember_tensor.fusion``):
    `scalar_source` defines `name` over the scalar functions `used` (the CUDA kernels'
    twins of them); its kernels are generated into a module file and cached on disk
    (`fused_elementwise`). `into` (the operand that is `out`) needs nothing here: a thread
    reads its element's operands before writing that element."""
    kernels = _fused.get(module_name)
    if kernels is None:
        kernels = _fused[module_name] = _fused_elementwise.FusedKernels(
            module_name, scalar_source, name, used, np_dtype, len(operands))
    return elementwise.run(kernels, operands, out)


def _program_function(module_name, scalar_source, name, used, np_dtype):
    """A fused program's scalar function over the CUDA twins of the scalar functions
    `used` (the fused reduction, softmax and layer norm kernels close over it), compiled
    in memory once per process; on a GPU its products are ones NVVM cannot contract into
    a neighbouring add (`twins.UNCONTRACTED_PRODUCTS`: eager's bits)."""
    fn = _programs.get(module_name)
    if fn is None:
        namespace = _fused_elementwise.device_functions(used, np.dtype(np_dtype).name)
        namespace["T"] = np.dtype(np_dtype).type
        fn = _programs[module_name] = codegen.compile_function(scalar_source, name, namespace,
                                                               f"<ember fused {module_name}>")
    return fn


def launch_fused_reduce(module_name, scalar_source, name, used, np_dtype, kind, operands, dims, out, epilogue=None):
    """``out`` = reduction `kind` over `dims` of ``name(*operands)`` computed inside eager's
    reduction kernels (a fused reduction of ``ember_tensor.fusion``; see the CPU
    backend's): operands are non-empty device arrays of one shape, `out` the flat
    contiguous array of the kept dims; `epilogue` as the CPU backend's. Compiled in
    memory once per process."""
    program = _program_function(module_name, scalar_source, name, used, np_dtype)
    final = None
    if epilogue is not None:
        final = _program_function(module_name + "_epilogue", epilogue[0], epilogue[1], epilogue[2], np_dtype)
    return _fused_reduction.run(module_name, program, kind, np_dtype, operands, dims, out, final,
                                lambda values: launch_elementwise(final, [values], values))


def launch_fused_softmax(module_name, scalar_source, name, used, np_dtype, log, operands, axis, out):
    """``out`` = softmax (`log`: log_softmax) along `axis` of ``name(*operands)`` computed
    inside eager's softmax row kernel (a fused softmax of ``ember_tensor.fusion``; see
    the CPU backend's): operands are non-empty device arrays of one shape whose dims
    after `axis` have size 1, `out` the C-contiguous (rows, size) result. Compiled in memory
    once per process."""
    program = _program_function(module_name, scalar_source, name, used, np_dtype)
    return _fused_softmax.run(module_name, program, np_dtype, log, operands, axis, out)


def launch_fused_layer_norm(module_name, scalar_source, name, used, np_dtype, operands, k, weight, bias, eps, out):
    """``out`` = layer norm over the trailing `k` dims of ``name(*operands)`` with `weight`
    and `bias` (device arrays of those dims, or None), computed inside eager's layer norm
    row kernel (a fused layer norm of ``ember_tensor.fusion``; see the CPU backend's):
    operands are non-empty device arrays of one shape, `out` the C-contiguous (rows, size)
    result. Compiled in memory once per process."""
    program = _program_function(module_name, scalar_source, name, used, np_dtype)
    return _fused_layer_norm.run(module_name, program, np_dtype, operands, k, weight, bias, eps, out)


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
