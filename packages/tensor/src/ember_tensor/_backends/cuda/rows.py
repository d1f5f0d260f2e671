"""The plumbing of the CUDA row kernels (softmax, loss, normalization): flat operands and
the two launch shapes of `kernels.rows`.

Every operand is brought to a flat C-contiguous device array (with at most one
device-side copy: `flat_operand`), the kernels see flat buffers and a few sizes, and a
result is given its shape back as a C-contiguous view (`shaped`): nothing goes through
the host. Row kernels run one block per row (`launch_rows`), flat kernels are
grid-stride loops (`launch_flat`).
"""
import numpy as np

from . import arrays, launch, storage
from .kernels import rows as K
from .kernels.loops import SIMULATOR

__all__ = ["flat_operand", "optional_operand", "shaped", "blocks", "launch_rows", "launch_flat"]


def flat_operand(a, np_dtype=None):
    """`a` as a flat C-contiguous device array of `np_dtype` (default: a's own dtype)."""
    want = np.dtype(np_dtype or a.dtype)
    if a.dtype != want or not arrays.is_c(a):
        a = storage.astype(a, want)
    return arrays.flat(a)


def optional_operand(a, placeholder, np_dtype=None):
    """(flat array, present flag) of an optional per-channel array; kernels skip a placeholder."""
    if a is None:
        return placeholder, False
    return flat_operand(a, np_dtype), True


def shaped(flat, shape):
    """Flat C-contiguous array `flat` viewed with `shape` (no copy)."""
    strides, step = [], flat.dtype.itemsize
    for n in reversed(tuple(shape)):
        strides.append(step)
        step *= max(n, 1)
    return arrays.restride(flat, tuple(shape), tuple(reversed(strides)))


def blocks(n):
    """Blocks worth launching for `n` independent tasks (at least one)."""
    return max(1, min(n, launch.max_blocks()))


def launch_rows(kernel, n_rows, row_size, *args):
    """One block per row (blocks stride over rows), sized to the row: a power of two
    from a warp up to THREADS (under the simulator from 1, to keep it quick), with a
    float64 of dynamic shared memory per thread for the block's merges."""
    block = 1 if SIMULATOR else 32
    while block < min(row_size, K.THREADS):
        block *= 2
    if SIMULATOR:
        launch.sim_launch_synced(kernel, 1, block, *args, shared=block * 8)
        return
    launch.launch_grid(kernel, blocks(n_rows), block, *args, shared=block * 8)


def launch_flat(kernel, n, *args):
    """Grid-stride `kernel` over `n` elements (nothing when n is 0)."""
    if n:
        launch.grid_stride(kernel, n, *args)
