"""Launching CUDA kernels: grid-stride launches, configured launches (cached), launches
over a merged strided layout, and the simulator's shapes.

Every kernel runs on the current stream of the current device (`runtime`). With
CUDA_LAUNCH_BLOCKING=1 (read at first CUDA use) every launch waits for its kernel, so a
failing kernel is reported at the op that launched it. Under Numba's simulator kernels
launch as one small block, which still exercises every grid-stride loop.
"""
import os
import sys

import numpy as np
from numba import cuda

from . import runtime
from ..plan import merged_layout
from .arrays import broadcast_to, is_array, restride
from .kernels.loops import SIMULATOR

__all__ = ["SIMULATOR", "LAUNCH_BLOCKING", "grid_stride", "max_blocks", "launch_grid", "configured",
           "sim_launch_synced", "run_strided"]

_BLOCK = 256

_max_blocks = None


def grid_stride(kernel, n, *args):
    """Run grid-stride `kernel` over n elements on the current stream (nothing when n is 0)."""
    if n == 0:
        return
    if SIMULATOR:
        # The simulator runs a Python thread per CUDA thread: one small block is fastest,
        # and with fewer threads than elements the grid-stride loop is still exercised.
        configured(kernel, 1, min(n, 4), 0)(*args)
        return
    launch_grid(kernel, min((n + _BLOCK - 1) // _BLOCK, max_blocks()), _BLOCK, *args)


def max_blocks():
    """Blocks worth launching for a grid-stride kernel: 32 per multiprocessor (a GPU)."""
    global _max_blocks
    if _max_blocks is None:
        _max_blocks = 32 * cuda.get_current_device().MULTIPROCESSOR_COUNT
    return _max_blocks


def launch_grid(kernel, grid, block, *args, shared=0):
    """Run `kernel[grid, block]` with `shared` bytes of dynamic shared memory per block
    on the current stream (a GPU); with CUDA_LAUNCH_BLOCKING=1 wait for it to finish."""
    configured(kernel, grid, block, runtime.current_numba_stream(), shared)(*args)
    if LAUNCH_BLOCKING:
        cuda.synchronize()


_launchers = {}


def configured(kernel, grid, block, stream, shared=0):
    """`kernel[grid, block, stream, shared]`, cached: configuring a launch costs microseconds.

    `shared` is the dynamic shared memory per block, in bytes. The cache holds the stream
    (so its id, part of the key, cannot be reused) and is cleared when it grows past a
    few thousand entries. Under the simulator nothing is cached: there `kernel[grid,
    block]` sets the launch shape on the kernel object itself and returns it, so two
    cached shapes of one kernel would be the same object.
    """
    if SIMULATOR:
        return kernel[grid, block, stream, shared]
    key = (kernel, grid, block, id(stream) if stream else 0, shared)
    launcher = _launchers.get(key)
    if launcher is None:
        if len(_launchers) > 4096:
            _launchers.clear()
        launcher = _launchers[key] = kernel[grid, block, stream, shared]
    return launcher


# CUDA_LAUNCH_BLOCKING=1 (read at first CUDA use): every launch waits for its kernel, so
# a failing kernel is reported at the op that launched it. The simulator always is.
LAUNCH_BLOCKING = os.environ.get("CUDA_LAUNCH_BLOCKING", "0") not in ("", "0")


def sim_launch_synced(kernel, grid, block, *args, shared=0):
    """Launch a kernel that calls syncthreads() on the simulator, quickly.

    The simulator's syncthreads() hands the GIL between Python threads that poll: a short
    switch interval while the kernel runs makes that about 10x faster.
    """
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-4)
    try:
        kernel[grid, block, 0, shared](*args)
    finally:
        sys.setswitchinterval(interval)


def merged(operands, out):
    """4-d views of `operands` (arrays; other values pass through) and `out`, dims merged.

    Returns (views, extra): extra > 0 when more than 4 dims could not be merged; the
    views then have 4 + extra dims and the caller loops over the leading ones.
    """
    arrays = [x for x in operands if is_array(x)] + [out]
    arrays = [x if x.shape == out.shape else broadcast_to(x, out.shape) for x in arrays]
    shape, strides, extra = merged_layout(out.shape, [list(x.strides) for x in arrays])
    views = iter([restride(x, shape, st) for x, st in zip(arrays, strides)])
    result = [next(views) if is_array(x) else x for x in operands]
    result.append(next(views))
    return result, extra


def run_strided(kernel, operands, out):
    """Launch 4-d strided `kernel` over `operands` (arrays or scalars) and `out`, dims merged."""
    views, extra = merged(operands, out)
    if extra <= 0:
        grid_stride(kernel, out.size, *views)
        return
    # Rare: more than 4 unmergeable dims. One launch per index of the leading dims.
    lead = views[-1].shape[:extra]
    for idx in np.ndindex(*lead):
        sub = []
        for v in views:
            if not is_array(v):
                sub.append(v)
                continue
            offset = sum(i * s for i, s in zip(idx, v.strides[:extra]))
            sub.append(restride(v, v.shape[extra:], v.strides[extra:], offset))
        grid_stride(kernel, sub[-1].size, *sub)
