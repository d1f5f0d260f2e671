"""What the random tests on every device share: `SAMPLERS`, every way to draw a tensor
(name -> fn(dtype, n, device)), with the dtypes each takes (`cases`) and the mean and
standard deviation of its distribution (`MOMENTS`); the in-place fills (`IN_PLACE_FILLS`);
`host(t)`, a draw as a NumPy array; and `on_device_only(device)`, a block in which a CUDA
draw may neither read values back to the host nor upload any (it was sampled on the
host), nothing on the CPU.

CUDA numbers are not the CPU's for a seed (Philox, as in PyTorch), so these tests check
what holds on every device: reproducible for a seed, the distributions' moments and bounds,
the CPU's errors.
"""
import contextlib
import math

import numpy as np
import pytest

import ember_tensor as et
from cuda_guard import device_only

__all__ = ["N", "FLOATS", "INTS", "SAMPLERS", "READS_A_FLAG", "FLOAT_ONLY", "MOMENTS", "IN_PLACE_FILLS", "cases",
           "host", "on_device_only"]

N = 4096  # near 4k draws: Numba's CUDA simulator runs one Python thread per CUDA thread
FLOATS = [et.float32, et.float64, et.float16, et.bfloat16]
INTS = [et.int8, et.int16, et.int32, et.int64, et.uint8]


@contextlib.contextmanager
def on_device_only(device="cuda", allow_scalar_reads=False):
    """On CUDA: no device-to-host copy (but of one flag, if allowed) and no upload of host
    values inside the block. On the CPU: nothing."""
    if device == "cpu":
        yield
        return
    from ember_tensor._backends.cuda import storage  # here, not at import: collecting needs no GPU
    original = storage.from_numpy

    def refuse(arr, *args, **kwargs):
        raise AssertionError(f"host-to-device upload of a {np.shape(arr)} array: sampled on the host")

    storage.from_numpy = refuse
    try:
        with device_only(allow_scalar_reads):
            yield
    finally:
        storage.from_numpy = original


def host(t):
    """A draw's values as a NumPy array (half types as float32)."""
    return (t.float() if t.dtype in (et.float16, et.bfloat16) else t).cpu().numpy()


# Every sampler: name -> fn(dtype, n, device) making a fresh sample of n values.
SAMPLERS = {
    "rand": lambda dt, n, dev: et.rand(n, device=dev, dtype=dt),
    "randn": lambda dt, n, dev: et.randn(n, device=dev, dtype=dt),
    "rand_like": lambda dt, n, dev: et.rand_like(et.empty(n, device=dev, dtype=dt)),
    "randn_like": lambda dt, n, dev: et.randn_like(et.empty(n, device=dev, dtype=dt)),
    "normal(float, float, size)": lambda dt, n, dev: et.normal(2.0, 3.0, (n,), device=dev, dtype=dt),
    "normal(tensor, tensor)": lambda dt, n, dev: et.normal(et.full((n,), 2.0, device=dev, dtype=dt),
                                                        et.full((1,), 3.0, device=dev, dtype=dt)),
    "normal(tensor, float)": lambda dt, n, dev: et.normal(et.full((n,), 2.0, device=dev, dtype=dt), 3.0),
    "normal(float, tensor)": lambda dt, n, dev: et.normal(2.0, et.full((n,), 3.0, device=dev, dtype=dt)),
    "uniform_": lambda dt, n, dev: et.empty(n, device=dev, dtype=dt).uniform_(-2, 6),
    "normal_": lambda dt, n, dev: et.empty(n, device=dev, dtype=dt).normal_(2.0, 3.0),
    "exponential_": lambda dt, n, dev: et.empty(n, device=dev, dtype=dt).exponential_(2.0),
    "log_normal_": lambda dt, n, dev: et.empty(n, device=dev, dtype=dt).log_normal_(0.0, 0.5),
    "cauchy_": lambda dt, n, dev: et.empty(n, device=dev, dtype=dt).cauchy_(1.0, 2.0),
    "geometric_": lambda dt, n, dev: et.empty(n, device=dev, dtype=dt).geometric_(0.25),
    "bernoulli_(float)": lambda dt, n, dev: et.empty(n, device=dev, dtype=dt).bernoulli_(0.3),
    "bernoulli_(tensor)": lambda dt, n, dev: et.empty(n, device=dev, dtype=dt).bernoulli_(
        et.full((1,), 0.3, device=dev)),
    "bernoulli(tensor)": lambda dt, n, dev: et.bernoulli(et.full((n,), 0.3, device=dev, dtype=dt)),
    "bernoulli(tensor, p)": lambda dt, n, dev: et.bernoulli(et.empty(n, device=dev, dtype=dt), 0.3),
    "randint": lambda dt, n, dev: et.randint(-3, 9, (n,), device=dev, dtype=dt),
    "randint_like": lambda dt, n, dev: et.randint_like(et.empty(n, device=dev, dtype=dt), 3, 9),
    "random_(from, to)": lambda dt, n, dev: et.empty(n, device=dev, dtype=dt).random_(1, 7),
}
# Samplers that check a tensor of parameters on the device and read back the one flag.
READS_A_FLAG = {"normal(tensor, tensor)", "normal(float, tensor)", "bernoulli_(tensor)", "bernoulli(tensor)"}
FLOAT_ONLY = {"rand", "randn", "rand_like", "randn_like", "uniform_", "normal_", "exponential_", "log_normal_",
              "cauchy_", "bernoulli(tensor)"} | {k for k in SAMPLERS if k.startswith("normal(")}

# name -> (mean, standard deviation) of the distribution (None: not checked that way)
MOMENTS = {
    "rand": (0.5, math.sqrt(1 / 12)), "rand_like": (0.5, math.sqrt(1 / 12)),
    "randn": (0.0, 1.0), "randn_like": (0.0, 1.0),
    "normal(float, float, size)": (2.0, 3.0), "normal(tensor, tensor)": (2.0, 3.0),
    "normal(tensor, float)": (2.0, 3.0), "normal(float, tensor)": (2.0, 3.0), "normal_": (2.0, 3.0),
    "uniform_": (2.0, 8 / math.sqrt(12)), "exponential_": (0.5, 0.5),
    "geometric_": (4.0, math.sqrt(0.75) / 0.25),
    "bernoulli_(float)": (0.3, math.sqrt(0.21)), "bernoulli_(tensor)": (0.3, math.sqrt(0.21)),
    "bernoulli(tensor)": (0.3, math.sqrt(0.21)), "bernoulli(tensor, p)": (0.3, math.sqrt(0.21)),
    "randint": (2.5, math.sqrt((12 ** 2 - 1) / 12)), "randint_like": (5.5, math.sqrt((6 ** 2 - 1) / 12)),
    "random_(from, to)": (3.5, math.sqrt((6 ** 2 - 1) / 12)),
}


def cases(names, dtypes):
    """(name, dtype) params for every sampler in `names` that takes the dtype."""
    for name in names:
        for dt in dtypes:
            if dt.is_floating_point or name not in FLOAT_ONLY and not (name == "randint" and dt is et.uint8):
                yield pytest.param(name, dt, id=f"{name}-{dt}")


# The in-place fills: name -> fill(target), in place on `target`, wherever it lies.
IN_PLACE_FILLS = {
    "uniform_": lambda t: t.uniform_(), "normal_": lambda t: t.normal_(), "random_": lambda t: t.random_(0, 5),
    "bernoulli_": lambda t: t.bernoulli_(0.5), "exponential_": lambda t: t.exponential_(),
    "log_normal_": lambda t: t.log_normal_(), "cauchy_": lambda t: t.cauchy_(),
    "geometric_": lambda t: t.geometric_(0.5),
    "bernoulli_(tensor)": lambda t: t.bernoulli_(et.full((1,) * t.dim(), 0.5, device=t.device)),
}
