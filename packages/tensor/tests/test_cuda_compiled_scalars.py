"""What only CUDA's compiled scalar code has: float-to-int casts of non-finite values,
which C leaves undefined (the simulator follows the CPU, a real GPU saturates), and the
CUDA twins of scalar functions, compiled for a real GPU.

Special values (poles, overflow, +-inf, NaN) and shifts past the width are op-database
samples (the `extremal` ones, the shift entries' int8 and int16): test_ops.py checks them
against NumPy on the CPU and against the CPU on CUDA.
"""
import os
import subprocess
import sys

import pytest

import ember_tensor as et
from cuda_guard import matches_the_cpu

pytestmark = pytest.mark.skipif(not et.cuda.is_available(), reason="no CUDA and no simulator")


def test_float_to_int_casts_of_non_finite_values_match_the_cpu():
    """NaN, +-inf and out-of-range floats cast to each integer type (and summed as int64)
    as the CPU casts them, on the simulator."""
    # C leaves these undefined; the simulator follows the CPU (a real GPU saturates).
    if "simulator" not in et.cuda.get_device_name().lower():
        pytest.skip("undefined in C: a real GPU gives its own (saturated) values")
    x = et.tensor([float("nan"), float("inf"), float("-inf"), 1e20, -3.7])
    for dtype in (et.int64, et.int32, et.int16, et.int8, et.uint8, et.bool):
        matches_the_cpu(lambda t, d=dtype: t.to(d), [x], f"float32 -> {dtype}")
    matches_the_cpu(lambda t: t.sum(dtype=et.int64), [x], "sum(dtype=int64)")


def test_cuda_scalar_twins_compile_for_a_real_gpu():
    """Every CUDA twin compiles to PTX for float32 and float64 (where libNVVM is installed)."""
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


def test_special_family_kernels_compile_for_a_real_gpu():
    """torch.special's Bessel and polynomial kernels compile to PTX for float32 and float64
    (where libNVVM and a driver are installed: typing their register_jitable helpers asks
    the driver for the device); the simulator runs them as plain Python only."""
    code = (
        "from numba import cuda, float32, float64\n"
        "from numba.cuda.cudadrv.error import CudaSupportError, NvvmSupportError\n"
        "from ember_tensor._backends import scalar_bessel as b, scalar_polynomials as p\n"
        "try:\n"
        "    for module, arity in ((b, 1), (p, 2)):\n"
        "        for name in getattr(module, 'UNARY', ()) + getattr(module, 'BINARY', ()):\n"
        "            for ty in (float32, float64):\n"
        "                cuda.compile_ptx(getattr(module, name), (ty,) * arity, device=True, cc=(7, 5))\n"
        "except (NvvmSupportError, CudaSupportError):\n"
        "    print('no-nvvm')\n"
        "else:\n"
        "    print('compiled')\n")
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="0", PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                            timeout=300, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    if result.stdout.strip() == "no-nvvm":
        pytest.skip("libNVVM or the CUDA driver is not installed: cannot compile for a GPU here")
    assert result.stdout.strip() == "compiled"
