"""The whole op database on CUDA: every sample of every op and dtype, CPU == CUDA.

Runs on Numba's CUDA simulator in CI (conftest.py) and unchanged on a real GPU
(NUMBA_ENABLE_CUDASIM=0). Each (op, dtype) is one test that loops over all of its samples
(0-d, broadcast, transposed, stepped, expanded, extremal values, Python numbers on
either side), so ids stay readable and a failure names the sample. The CUDA call runs
inside `device_only()`: an op that quietly computed on the host would fail here.
Reductions come from REDUCTION_DB with test_reductions.py's layouts, dim forms, keepdim
and keyword sets: all ~7900 samples on a real GPU, every 8th (rotating) under the
simulator, where all of them take minutes.
"""
import os
import subprocess
import sys
import warnings

import pytest

import ember_tensor as et
from ember_tensor._backends import scalar
from cuda_guard import as_on_cuda, device_only
from ember_tensor.testing.opdb import OP_DB, REDUCTION_DB
from test_cuda import _same
from test_reductions import reduction_samples

pytestmark = pytest.mark.skipif(not et.cuda.is_available(), reason="no CUDA and no simulator")
SIMULATED = et.cuda.is_available() and "simulator" in et.cuda.get_device_name().lower()


def _on_cuda(values):
    return [v.cuda() if isinstance(v, et.Tensor) else v for v in values]


def _quietly(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


# Integer division reads back one flag (is any divisor zero?) to raise the CPU's
# ZeroDivisionError: the only host read these ops make.
_READS_A_FLAG = {"div", "floor_divide", "remainder", "fmod"}


def _cpu_then_cuda(call, args, what, reads_a_flag=False):
    """call(*args) on the CPU and on CUDA (inside device_only): same result or same error."""
    try:
        expected = _quietly(call, *args)
    except Exception as error:  # an error case: CUDA must raise the same, word for word
        with pytest.raises(type(error)) as raised:  # (a dtype error names the CUDA kernel)
            _quietly(call, *_on_cuda(args))
        assert str(raised.value) == as_on_cuda(str(error)), what
        return
    cuda_args = _on_cuda(args)
    python_result = not isinstance(expected, (et.Tensor, tuple))
    # A Python result (allclose, equal) is read back: one element, as PyTorch does too.
    with device_only(allow_scalar_reads=python_result or reads_a_flag):
        got = _quietly(call, *cuda_args)
    if python_result:
        assert got == expected, what
        return
    try:
        _same(expected, got, tol=1e-5)
    except AssertionError as failure:
        raise AssertionError(f"{what}: {failure}") from None


def _op_params(ops):
    return [pytest.param(op, dtype, id=f"{op.name}-{dtype.name}") for op in ops for dtype in op.dtypes]


@pytest.mark.parametrize("op,dtype", _op_params(OP_DB))
def test_op_database_cuda_matches_cpu(op, dtype):
    samples = op.sample_inputs(dtype)
    assert samples, f"{op.name} has no samples for {dtype}"
    reads_a_flag = op.name in _READS_A_FLAG and not dtype.is_floating_point
    for sample in samples:
        _cpu_then_cuda(lambda *xs, kw=sample.kwargs: op.fn(*xs, **kw), sample.ember(),
                       f"{op.name}, sample {sample.name!r}, {dtype}", reads_a_flag)


def _casts_non_finite_to_int(sample_name, dtype, kwargs):
    # sum(dtype=int64) of NaN/inf: undefined in C; a real GPU saturates where the CPU (and
    # the simulator) give INT_MIN, so PyTorch's CPU and CUDA differ there too.
    target = kwargs.get("dtype")
    return (sample_name.startswith("extremal") and dtype.is_floating_point
            and target is not None and not target.is_floating_point)


@pytest.mark.parametrize("op,dtype", _op_params(REDUCTION_DB))
def test_reduction_database_cuda_matches_cpu(op, dtype):
    step = 8 if SIMULATED else 1
    start = op.dtypes.index(dtype) % step  # another share of the samples for each dtype
    samples = list(reduction_samples(op, dtype))[start::step]
    assert samples
    for name, operand, dim, keepdim, kwargs in samples:
        if not SIMULATED and _casts_non_finite_to_int(name, dtype, kwargs):
            continue
        args = {} if dim is None else {"dim": dim}
        if dim is not None and op.keepdim:
            args["keepdim"] = keepdim
        _cpu_then_cuda(lambda x, a=args, kw=kwargs: op.fn(x, **a, **kw), [operand.tensor(dtype)],
                       f"{op.name}, {name}, {dtype}")


@pytest.mark.parametrize("op", [pytest.param(op, id=op.name) for op in OP_DB if op.error_inputs_func])
def test_op_database_error_inputs_raise_the_cpus_error_on_cuda(op):
    for err in op.error_inputs():
        call = {"function": op.fn, "method": lambda x, *a, **k: op.method_of(x)(*a, **k),
                "inplace": lambda x, *a, **k: op.inplace_of(x)(*a, **k)}[err.variant]
        args = err.sample.ember()
        with pytest.raises(err.exc, match=err.match):  # the CPU raises PyTorch's error ...
            _quietly(call, *args, **err.sample.kwargs)
        # ... and CUDA the same, word for word
        _cpu_then_cuda(lambda *xs, c=call, kw=err.sample.kwargs: c(*xs, **kw), args,
                       f"{op.name} error input {err.sample.name!r} ({err.variant})")


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
        _cpu_then_cuda(getattr(et, name), [x], f"{name} at {SPECIAL}, {dtype}")
        _cpu_then_cuda(getattr(et, name), [x[1::3]], f"{name} strided, {dtype}")
        _cpu_then_cuda(getattr(et, name), [x[15]], f"{name} of 0-d inf, {dtype}")


@pytest.mark.parametrize("name", ["bitwise_left_shift", "bitwise_right_shift"])
@pytest.mark.parametrize("dtype", [et.int8, et.int16, et.int32, et.int64, et.uint8], ids=str)
def test_shifts_wrap_like_the_cpu(name, dtype):
    values = et.tensor([1, -1, 5, -7, 3, 100, -128, 127, 1, 1]).to(dtype)
    amounts = et.tensor([0, 1, 3, 7, 8, 15, 16, 31, 32, 63]).to(dtype)
    _cpu_then_cuda(getattr(et, name), [values, amounts], f"{name}, {dtype}")
    _cpu_then_cuda(getattr(et, name), [values, 7], f"{name} by a number, {dtype}")


def test_float_to_int_casts_of_non_finite_values_match_the_cpu():
    # C leaves these undefined; the simulator follows the CPU (a real GPU saturates).
    if "simulator" not in et.cuda.get_device_name().lower():
        pytest.skip("undefined in C: a real GPU gives its own (saturated) values")
    x = et.tensor([float("nan"), float("inf"), float("-inf"), 1e20, -3.7])
    for dtype in (et.int64, et.int32, et.int16, et.int8, et.uint8, et.bool):
        _cpu_then_cuda(lambda t, d=dtype: t.to(d), [x], f"float32 -> {dtype}")
    _cpu_then_cuda(lambda t: t.sum(dtype=et.int64), [x], "sum(dtype=int64)")


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
