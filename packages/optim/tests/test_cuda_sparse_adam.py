"""SparseAdam on CUDA parameters (Numba's CUDA simulator unless NUMBA_ENABLE_CUDASIM=0):
the same steps as on the CPU, computed on the device (nothing but one-element reads goes
back to the host), only the rows a gradient holds touched."""
import os
import sys
from pathlib import Path

import numpy as np
import pytest

os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")
if "numba" in sys.modules:  # numba read its config at import: make it see the variable
    from numba.core import config as _numba_config
    _numba_config.reload_config()

import ember_tensor as et  # noqa: E402
import ember_optim as optim  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tensor" / "tests"))
from cuda_guard import device_only  # noqa: E402

pytestmark = pytest.mark.skipif(not et.cuda.is_available(), reason="no CUDA and no simulator")


@pytest.mark.parametrize("maximize", [False, True])
def test_sparse_adam_on_cuda_matches_the_cpu(maximize):
    start = et.arange(12.0).reshape(6, 2) / 5
    results = {}
    for dev in ("cpu", "cuda"):
        w = start.clone().to(dev).requires_grad_()  # a copy: the step writes into it
        opt = optim.SparseAdam([w], lr=0.1, maximize=maximize)
        for rows, vals in (([[1, 4, 1]], [[1.0, -2.0], [0.5, 0.5], [3.0, 1.0]]), ([[0, 4]], [[-1.0, 2.0], [1.0, 1.0]])):
            w.grad = et.sparse_coo_tensor(et.tensor(rows, device=dev), et.tensor(vals, device=dev), (6, 2))
            if dev == "cuda":
                with device_only(allow_scalar_reads=True):
                    opt.step()
            else:
                opt.step()
        results[dev] = (w.detach(), opt.state[w]["exp_avg"], opt.state[w]["exp_avg_sq"])
    for got, want in zip(results["cuda"], results["cpu"]):
        assert got.device.type == "cuda"
        np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=1e-6, atol=1e-7)
    untouched = [2, 3, 5]  # rows no gradient held keep their values and zero moments
    np.testing.assert_array_equal(results["cuda"][0].cpu().numpy()[untouched], start.numpy()[untouched])
    assert not results["cuda"][1].cpu().numpy()[untouched].any()
