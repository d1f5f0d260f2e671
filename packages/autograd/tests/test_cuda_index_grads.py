"""Gradients through advanced indexing on CUDA tensors equal the CPU's and are summed on
the device (duplicate indices accumulate by index_add_, no host round trip).

Runs on Numba's CUDA simulator unless NUMBA_ENABLE_CUDASIM=0 is set.
"""
import os
import sys
from pathlib import Path

os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")
if "numba" in sys.modules:  # numba read its config at import: make it see the variable
    from numba.core import config as _numba_config
    _numba_config.reload_config()

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import ember_autograd  # noqa: E402,F401 - installs the rules
import ember_tensor as et  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tensor" / "tests"))
from cuda_guard import device_only  # noqa: E402

pytestmark = pytest.mark.skipif(not et.cuda.is_available(), reason="no CUDA and no simulator")

KEYS = {
    "repeated rows": lambda dev: (et.tensor([0, 2, 2, 4], device=dev),),
    "rows and columns": lambda dev: (et.tensor([[1, 1], [3, 0]], device=dev), et.tensor([2, 2], device=dev)),
    "mask": lambda dev: (et.tensor([True, False, True, True, False], device=dev),),
}


@pytest.mark.parametrize("dtype", [et.float32, et.float64])
@pytest.mark.parametrize("key", KEYS)
def test_index_backward_on_cuda_matches_the_cpu(key, dtype):
    base = et.arange(20.0, dtype=dtype).reshape(5, 4) / 7
    grads = {}
    for dev in ("cpu", "cuda"):
        x = base.detach().to(dev).requires_grad_()  # detach: to("cpu") would return base itself
        index = KEYS[key](dev)
        with device_only(allow_scalar_reads=True) if dev == "cuda" else _nothing():
            out = x[index]
            (out * (et.arange(out.numel(), dtype=dtype, device=dev).reshape(out.shape) + 1)).sum().backward()
        grads[dev] = x.grad
    assert grads["cuda"].device.type == "cuda" and grads["cuda"].dtype == dtype
    np.testing.assert_allclose(grads["cuda"].cpu().numpy(), grads["cpu"].numpy(), rtol=1e-6)


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
