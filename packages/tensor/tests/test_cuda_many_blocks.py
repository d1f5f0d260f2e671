"""Index ops over many CUDA blocks and scan chunks: atomics under contention (heavy
repeats), long scans, a grid of blocks. At 300 elements on Numba's simulator the kernels
take their multi-block code paths; at 2^20 on a real GPU (tests marked `gpu`) the blocks
really run at once. Each op is compared with the CPU, computed on the device; the ops'
results for every dtype and layout on every device are the generic tests' (test_indexing,
test_index_ops, test_shape_ops).
"""
import numpy as np
import pytest

import ember_tensor as et
from cuda_guard import matches_the_cpu

pytestmark = pytest.mark.skipif(not et.cuda.is_available(), reason="no CUDA and no simulator")


def check(call, *args, tol=1e-6):
    """call(*args) on CUDA gives the CPU's result, computed on the device."""
    matches_the_cpu(call, args, getattr(call, "__name__", "call"), reads_a_flag=True, tol=tol)


def _many_blocks_cases(n):
    """Index ops at size n (many blocks and chunks on a GPU: atomics under contention,
    long scans) compared with the CPU."""
    rng = np.random.default_rng(1)
    x = et.tensor(rng.standard_normal(n).astype(np.float32))
    idx = et.tensor(rng.integers(0, 64, n))                          # heavy repeats
    check(lambda t: t.nonzero(), x > 0.5)
    check(lambda t: t[t > 0], x)
    # thousands of float32 adds per bin, in another order than the CPU's: rounding differs
    check(lambda t, i: t.new_zeros(64).index_put_((i,), t, accumulate=True), x, idx, tol=1e-2)
    check(lambda i: i.new_zeros(64).scatter_add(0, i, i), idx)
    check(lambda t, i: t.new_zeros(64).scatter_reduce(0, i, t, "amax", include_self=False), x, idx)
    check(lambda t, i: t.gather(0, i), x, idx)
    check(lambda t: t.flip(0), x)
    check(lambda c: et.repeat_interleave(c), idx[:n // 64])


def test_many_blocks_code_path_on_the_simulator():
    """The multi-block code paths, at a size the simulator runs in seconds."""
    _many_blocks_cases(300)


@pytest.mark.gpu
def test_many_blocks_on_a_real_gpu():
    """The same at 2^20 elements: thousands of blocks at once."""
    _many_blocks_cases(1 << 20)
