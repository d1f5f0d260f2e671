"""ember_tensor.fusion.FusedSoftmax: an elementwise program normalised by eager's softmax
row kernel, against NumPy and the unfused ops (bit for bit), over every layout the
executors map (contiguous, strided, broadcast along kept dims or along the row, two runs
of rows, negative strides, packed, trailing size-1 dims, a non-last dim, threaded), on
the CPU and on CUDA (the simulator; and its kernel compiled to PTX)."""
import sys
import textwrap

import numpy as np
import pytest
from cuda_ptx_check import run_ptx_script

import ember_tensor as et
from ember_tensor.fusion import FusedElementwise, FusedSoftmax

# x0 * 0.125 + x1, then normalised
PROGRAM = FusedElementwise([("mul", (("in", 0), 0.125)), ("add", (("step", 0), ("in", 1)))], 2)


def _layouts():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((6, 7)) * 30, rng.standard_normal((6, 7))
    yield "contiguous", et.tensor(a), et.tensor(b), -1
    yield "transposed", et.tensor(a.T.copy()).t(), et.tensor(b), -1
    yield "row_broadcast", et.tensor(a), et.tensor(b[0]), -1
    yield "column_broadcast", et.tensor(a), et.tensor(b[:, :1]), 1
    yield "scalar_operand", et.tensor(a), et.tensor(2.0), -1
    yield "negative_strides", et.tensor(a).flip(1), et.tensor(b), -1
    yield "sliced", et.tensor(rng.standard_normal((12, 14)))[::2, 1::2], et.tensor(b), -1
    yield "first_dim", et.tensor(a), et.tensor(b), 0
    c = rng.standard_normal((2, 3, 4, 5))
    yield "two_runs_of_rows", et.tensor(c), et.tensor(rng.standard_normal((4, 5))), -1
    yield "packed", et.tensor(c).permute(2, 0, 1, 3), et.tensor(rng.standard_normal((4, 1, 3, 5))), 3
    yield "trailing_ones", et.tensor(c).reshape(2, 3, 20, 1), et.tensor(rng.standard_normal((20, 1))), 2
    yield "middle_dim", et.tensor(c), et.tensor(rng.standard_normal((3, 1, 5))), 1
    yield "one_dim", et.tensor(a[0]), et.tensor(b[1]), 0


def _numpy_softmax(v, axis, log):
    shifted = v - v.max(axis=axis, keepdims=True)
    log_total = np.log(np.exp(shifted).sum(axis=axis, keepdims=True))
    return shifted - log_total if log else np.exp(shifted - log_total)


CUDA = pytest.mark.skipif(not et.cuda.is_available(), reason="no CUDA and no simulator")
DEVICES = ["cpu", pytest.param("cuda", marks=CUDA)]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("dtype", [et.float32, et.float64])
def test_layouts_against_numpy_and_the_unfused_ops(log, dtype, device):
    for name, x, y, dim in _layouts():
        x, y = x.to(dtype).to(device), y.to(dtype).to(device)
        got = FusedSoftmax(PROGRAM, dim, log)(x, y)
        values = x * 0.125 + y
        eager = values.log_softmax(dim) if log else values.softmax(dim)
        expected = _numpy_softmax(values.cpu().numpy().astype(np.float64), dim, log)
        assert got.shape == eager.shape and got.dtype == dtype and got.device == x.device, name
        got, eager = got.cpu(), eager.cpu()
        assert np.allclose(got.numpy(), expected, rtol=1e-5, atol=1e-6), name
        assert et.equal(got, eager), name   # eager's row kernel on the same values: its bits


@pytest.mark.parametrize("log", [False, True])
def test_large_inputs_split_over_threads_and_special_values(log):
    rng = np.random.default_rng(1)
    x = et.tensor(rng.standard_normal((300, 1000)) * 10, dtype=et.float32)
    mask = et.tensor(np.where(rng.random(1000) < 0.3, -np.inf, 0.0), dtype=et.float32)
    x[3, 5] = float("nan")
    mask_rows = et.zeros(300, 1000)
    mask_rows[7] = float("-inf")   # a row of -inf: NaN, as eager gives
    for m in (mask, mask_rows):
        got = FusedSoftmax(PROGRAM, -1, log)(x, m)
        values = x * 0.125 + m
        eager = values.log_softmax(-1) if log else values.softmax(-1)
        assert np.array_equal(got.numpy(), eager.numpy(), equal_nan=True)
        assert np.isnan(got.numpy()[3]).all() and np.isnan(got.numpy()[7]).all() == (m is mask_rows)


def test_declines_what_it_cannot_run():
    softmax = FusedSoftmax(PROGRAM, dim=-1)
    assert softmax.compute_dtype([et.zeros(0, 3), et.zeros(0, 3)]) is None       # empty
    assert softmax.compute_dtype([et.tensor(1.0), et.tensor(2.0)]) is None        # 0-d
    assert softmax.compute_dtype([et.zeros(3), et.zeros(3, dtype=et.float64)]) is None
    assert softmax.compute_dtype([et.zeros(3, dtype=et.int64)] * 2) is None
    assert FusedSoftmax(PROGRAM, dim=2).compute_dtype([et.zeros(3, 4)] * 2) is None
    assert softmax.compute_dtype([et.zeros(3, 4)] * 2) is et.float32
    with pytest.raises(ValueError, match="comparison"):
        FusedSoftmax(FusedElementwise([("gt", (("in", 0), 0.0))], 1), -1)


def test_one_compiled_kernel_per_program_and_dtype():
    # Shapes, strides and broadcasting are runtime arguments of the one generated loop.
    softmax = FusedSoftmax(PROGRAM, -1)
    for x, y in [(et.randn(3, 4), et.randn(4)), (et.randn(5, 6).t(), et.randn(6, 1)),
                 (et.randn(2, 3, 4), et.randn(3, 4))]:
        assert et.equal(softmax(x, y), (x * 0.125 + y).softmax(-1))
    module = sys.modules[softmax.kernel_name(et.float32)]   # the generated module
    assert len(module._values.signatures) == 1   # its compiled loop (rows is Python)


_PTX = textwrap.dedent("""
    import ember_tensor as et
    from ember_tensor.fusion import FusedElementwise, FusedSoftmax
    from ember_tensor._backends.cuda import custom, fused_softmax
    prog = FusedElementwise([("where", (("in", 0), ("in", 1), -1e9)), ("exp", (("step", 0),))], 2, name="p")
    for dtype, log in [(et.float32, False), (et.float64, True)]:
        name = FusedSoftmax(prog, -1, log).kernel_name(dtype)
        fn = custom._program_function(name, prog.source(dtype), prog.name, prog._used, dtype.np)
        rows = fused_softmax._kernel(name, fn, 2)
        el = types.float32 if dtype is et.float32 else types.float64
        i8 = types.int64
        ops = (types.boolean[::1], i8, i8, i8, el[::1], i8, i8, i8)
        cuda.compile_ptx(rows.py_func, (i8, i8, i8, types.boolean, types.boolean, el[::1], *ops), cc=(9, 0))
    print("PTX OK")
""")


def test_cuda_kernel_compiles_to_ptx():
    # The simulator runs kernels as Python; NVVM proves them valid CUDA (no GPU needed).
    done = run_ptx_script(_PTX)
    if done is None:
        pytest.skip("no NVVM to compile PTX with")
    assert done.returncode == 0 and "PTX OK" in done.stdout, done.stderr[-2000:]
