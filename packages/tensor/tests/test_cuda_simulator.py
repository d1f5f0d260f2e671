"""ember's repair of Numba's CUDA simulator: shared arrays are made under a lock, one per
call site and block, so every thread of a block sees the same array and two arrays of
one kernel never alias."""
import numpy as np
import pytest
from numba import cuda  # a global: the simulator swaps it for its fake module in kernels

import ember_tensor as et

pytestmark = pytest.mark.skipif(
    not et.cuda.is_available() or "simulator" not in et.cuda.get_device_name().lower(),
    reason="checks a repair of Numba's CUDA simulator")


def test_shared_arrays_are_per_call_site_and_shared_by_the_block():
    et.ones(1, device="cuda")  # starts ember's CUDA backend, which repairs the simulator

    @cuda.jit
    def two_sums(out):
        a = cuda.shared.array(32, dtype=np.float64)
        b = cuda.shared.array(32, dtype=np.float64)
        t = cuda.threadIdx.x
        a[t] = t
        b[t] = 100.0 * t
        cuda.syncthreads()
        if t == 0:
            sa = 0.0
            sb = 0.0
            for i in range(cuda.blockDim.x):
                sa += a[i]
                sb += b[i]
            out[cuda.blockIdx.x, 0] = sa
            out[cuda.blockIdx.x, 1] = sb

    out = np.zeros((3, 2))
    two_sums[3, 32](out)
    assert out.tolist() == [[496.0, 49600.0]] * 3
