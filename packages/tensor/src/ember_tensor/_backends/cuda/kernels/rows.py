"""The block-wide merges of the CUDA row kernels (softmax, loss, normalization: the
`kernels.softmax`, `kernels.loss` and `kernels.normalization` modules share them).

Their hosts (`_backends.cuda.softmax`, `loss`, `normalization`) bring every operand to
a C-contiguous 1-d device array in its compute dtype (float32 or float64) first
(`_backends.cuda.rows`), so each kernel sees flat buffers and a few sizes. Two launch
shapes:

  row kernels      one thread block per row (blocks stride over the rows); the threads
                   fold strided shares of the row and merge them through a float64
                   shared-memory tree (`block_sum`, `block_max`). The block size is
                   chosen per launch (a power of two up to THREADS), so short rows do
                   not leave most of a block idle.
  flat kernels     grid-stride loops, one element (or sample, or channel) per step.

The merge scratch is dynamic shared memory (`cuda.shared.array(0, ...)`, sized by the
launch): the simulator's static shared arrays are looked up per thread in a dict that
two threads can both find empty, leaving them with different arrays (a flaky merge).

Statistics accumulate in float64, as the CPU kernels do. Under Numba's simulator
device code runs as Python (`math.log(0.0)` raises there, 1.0 / 0.0 too), so the
few places that could meet a zero or a NaN test for it explicitly: the results are
the same on both.
"""
import math

from numba import cuda
from numba.cuda import libdevice

from .loops import SIMULATOR

__all__ = ["THREADS", "INF", "NAN", "block_sum", "block_max", "inverse_sqrt"]

# The largest block of a row kernel (a power of two: the tree merge halves it). The
# simulator runs a Python thread per CUDA thread: a tiny block that still merges.
THREADS = 4 if SIMULATOR else 256
INF = math.inf
NAN = math.nan


# --- block-wide merges ---------------------------------------------------------------------

@cuda.jit(device=True)
def block_sum(part, value):
    """The sum of `value` over the block's threads, returned to every thread."""
    tid = cuda.threadIdx.x
    part[tid] = value
    cuda.syncthreads()
    width = cuda.blockDim.x // 2
    while width > 0:
        if tid < width:
            part[tid] += part[tid + width]
        cuda.syncthreads()
        width //= 2
    total = part[0]
    cuda.syncthreads()  # `part` is written again by the next merge
    return total


@cuda.jit(device=True)
def block_max(part, value):
    """The largest `value` over the block's threads (NaN wins), returned to every thread."""
    tid = cuda.threadIdx.x
    part[tid] = value
    cuda.syncthreads()
    width = cuda.blockDim.x // 2
    while width > 0:
        if tid < width:
            other = part[tid + width]
            if other > part[tid] or other != other:
                part[tid] = other
        cuda.syncthreads()
        width //= 2
    peak = part[0]
    cuda.syncthreads()
    return peak


@cuda.jit(device=True)
def inverse_sqrt(v):
    """1 / sqrt(v): inf at 0, NaN below (CUDA's answers, without Python's exceptions)."""
    if v > 0.0:
        return 1.0 / math.sqrt(v)
    if v == 0.0:
        return INF
    return NAN


def _product_rn(a, b):
    return libdevice.dmul_rn(a, b)


def _product(a, b):
    return a * b


# A float64 product that NVVM may not contract with the add or subtract after it into one
# fused multiply-add. Whether it contracts depends on the code around it (a branch between
# the two, an index computed in between), so two kernels of the same arithmetic — eager's
# layer norm and a fused layer norm prologue — could round it differently (seen on an
# H200). libdevice's round-to-nearest multiply is never contracted; the simulator runs
# Python floats (nothing to contract; libdevice's functions are stubs there).
exact_product = cuda.jit(device=True)(_product if SIMULATOR else _product_rn)
