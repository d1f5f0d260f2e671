"""CUDA's scalar kernels where compiled code and the CPU may part ways: special values
(poles, overflow, +-inf, NaN), shifts past the width, float-to-int casts of non-finite
values, and the CUDA twins of scalar functions compiled for a real GPU.

The op database itself runs on CUDA as the `device` parameter of test_ops.py and
test_reductions.py; these are the cases it does not sample.
"""
import os
import subprocess
import sys

import pytest

import ember_tensor as et
from ember_tensor._backends import scalar
from cuda_guard import matches_the_cpu

pytestmark = pytest.mark.skipif(not et.cuda.is_available(), reason="no CUDA and no simulator")


# Values where Python's math (which the simulator runs) and compiled code part ways: poles,
# overflow to inf, +-inf and NaN themselves.
SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, -3.0, 1e-30, 100.0, -100.0, 800.0, -800.0,
           1e300, -1e300, float("inf"), float("-inf"), float("nan")]
_FLOAT_UNARY = [name for name in scalar.UNARY if hasattr(et, name) and name not in (
    "bitwise_not", "logical_not", "copy")]


@pytest.mark.parametrize("dtype", [et.float32, et.float64, et.float16], ids=str)
def test_unary_kernels_at_special_values(dtype):
    x = et.tensor(SPECIAL, dtype=et.float64).to(dtype)
    for name in _FLOAT_UNARY:
        matches_the_cpu(getattr(et, name), [x], f"{name} at {SPECIAL}, {dtype}")
        matches_the_cpu(getattr(et, name), [x[1::3]], f"{name} strided, {dtype}")
        matches_the_cpu(getattr(et, name), [x[15]], f"{name} of 0-d inf, {dtype}")


@pytest.mark.parametrize("name", ["bitwise_left_shift", "bitwise_right_shift"])
@pytest.mark.parametrize("dtype", [et.int8, et.int16, et.int32, et.int64, et.uint8], ids=str)
def test_shifts_wrap_like_the_cpu(name, dtype):
    values = et.tensor([1, -1, 5, -7, 3, 100, -128, 127, 1, 1]).to(dtype)
    amounts = et.tensor([0, 1, 3, 7, 8, 15, 16, 31, 32, 63]).to(dtype)
    matches_the_cpu(getattr(et, name), [values, amounts], f"{name}, {dtype}")
    matches_the_cpu(getattr(et, name), [values, 7], f"{name} by a number, {dtype}")


def test_float_to_int_casts_of_non_finite_values_match_the_cpu():
    # C leaves these undefined; the simulator follows the CPU (a real GPU saturates).
    if "simulator" not in et.cuda.get_device_name().lower():
        pytest.skip("undefined in C: a real GPU gives its own (saturated) values")
    x = et.tensor([float("nan"), float("inf"), float("-inf"), 1e20, -3.7])
    for dtype in (et.int64, et.int32, et.int16, et.int8, et.uint8, et.bool):
        matches_the_cpu(lambda t, d=dtype: t.to(d), [x], f"float32 -> {dtype}")
    matches_the_cpu(lambda t: t.sum(dtype=et.int64), [x], "sum(dtype=int64)")


def test_cuda_scalar_twins_compile_for_a_real_gpu():
    # The twins that replace scalar functions on a GPU never run under the simulator:
    # compile them to PTX with the real numba.cuda (no GPU needed) in a fresh process.
    code = (
        "from numba import cuda, float32, float64\n"
        "from numba.cuda.cudadrv.error import NvvmSupportError\n"
        "from ember_tensor._backends.cuda.kernels import twins as tw\n"
        "try:\n"
        "    for name, fn in {**tw.CUDA_TWINS, **tw.GUARDED_TWINS}.items():\n"
        "        for ty in (float32, float64):\n"
        "            sig = (ty, ty) if name == 'fmod' else (ty,)\n"
        "            cuda.compile_ptx(fn, sig, device=True, cc=(7, 5))\n"
        "except NvvmSupportError:\n"
        "    print('no-nvvm')\n"
        "else:\n"
        "    print('compiled')\n")
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="0", PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                            timeout=300, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    if result.stdout.strip() == "no-nvvm":
        pytest.skip("libNVVM is not installed: cannot compile for a GPU here")
    assert result.stdout.strip() == "compiled"
