"""ember_tensor.fusion.FusedReduction: an elementwise program reduced in one loop, against
NumPy and the unfused ops (bit for bit), over every layout the executors map (contiguous,
strided, broadcast along kept or reduced dims, negative strides, packed, 0-d, threaded or
split over blocks), on the CPU and on CUDA (the simulator; and its kernels compiled to PTX)."""
import textwrap

import numpy as np
import pytest
from cuda_ptx_check import run_ptx_script

import ember_tensor as et
from ember_tensor.fusion import FusedElementwise, FusedReduction

# x0 * x1 + 0.5, then reduced
PROGRAM = FusedElementwise([("mul", (("in", 0), ("in", 1))), ("add", (("step", 0), 0.5))], 2)
NUMPY = {"sum": np.sum, "mean": np.mean, "amax": np.max, "amin": np.min}


def _layouts():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((6, 7)), rng.standard_normal((6, 7))
    yield "contiguous", et.tensor(a), et.tensor(b)
    yield "transposed", et.tensor(a.T.copy()).t(), et.tensor(b)
    yield "row_broadcast", et.tensor(a), et.tensor(b[0])
    yield "column_broadcast", et.tensor(a), et.tensor(b[:, :1])
    yield "negative_strides", et.tensor(a).flip(1), et.tensor(b)
    yield "sliced", et.tensor(rng.standard_normal((12, 14)))[::2, 1::2], et.tensor(b)
    yield "zero_dim", et.tensor(2.0), et.tensor(3.0)


CUDA = pytest.mark.skipif(not et.cuda.is_available(), reason="no CUDA and no simulator")
DEVICES = ["cpu", pytest.param("cuda", marks=CUDA)]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("kind", sorted(NUMPY))
@pytest.mark.parametrize("dim", [None, -1, 0])
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dtype", [et.float32, et.float64])
def test_layouts_against_numpy_and_the_unfused_ops(kind, dim, keepdim, dtype, device):
    for name, x, y in _layouts():
        x, y = x.to(dtype).to(device), y.to(dtype).to(device)
        got = FusedReduction(PROGRAM, kind, dim, keepdim)(x, y)
        values = x * y + 0.5
        eager = getattr(values, kind)() if dim is None else getattr(values, kind)(dim, keepdim=keepdim)
        if dim is None and keepdim:
            eager = eager.reshape((1,) * values.dim())
        expected = NUMPY[kind](values.cpu().numpy().astype(np.float64), axis=dim if values.dim() else None,
                               keepdims=keepdim)
        assert got.shape == eager.shape and got.dtype == dtype, name
        assert got.device == x.device, name
        got, eager = got.cpu(), eager.cpu()
        assert np.allclose(got.numpy(), expected, rtol=1e-5), name
        assert et.equal(got, eager), name   # eager's blocks, eager's fold: its bits


@pytest.mark.parametrize("device,length", [("cpu", 200_000), pytest.param("cuda", 300, marks=CUDA)])
def test_large_rows_and_a_large_full_reduction_split_over_threads_or_blocks(device, length):
    rng = np.random.default_rng(1)
    x = et.tensor(rng.standard_normal((3, length)), dtype=et.float32).to(device)
    y = et.tensor(1.5).to(device)
    for dim in (None, -1, 0):
        reduction = FusedReduction(PROGRAM, "sum", dim)
        expected = (x * y + 0.5).sum() if dim is None else (x * y + 0.5).sum(dim)
        assert et.equal(reduction(x, y).cpu(), expected.cpu())


# sqrt(|2 * r + 1|) of each reduced value r
EPILOGUE = FusedElementwise([("mul", (("in", 0), 2.0)), ("add", (("step", 0), 1.0)), ("abs", (("step", 1),)),
                             ("sqrt", (("step", 2),))], 1, name="e")


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("kind", sorted(NUMPY))
@pytest.mark.parametrize("dim", [None, -1, 0])
@pytest.mark.parametrize("dtype", [et.float32, et.float64])
def test_an_epilogue_runs_on_each_reduced_value_as_the_unfused_ops(kind, dim, dtype, device):
    for name, x, y in _layouts():
        x, y = x.to(dtype).to(device), y.to(dtype).to(device)
        got = FusedReduction(PROGRAM, kind, dim, epilogue=EPILOGUE)(x, y)
        values = x * y + 0.5
        reduced = getattr(values, kind)() if dim is None else getattr(values, kind)(dim)
        eager = (reduced * 2.0 + 1.0).abs().sqrt()
        assert got.shape == eager.shape and got.dtype == dtype, name
        assert np.array_equal(got.cpu().numpy(), eager.cpu().numpy(), equal_nan=True), name


@pytest.mark.parametrize("device,length", [("cpu", 200_000), pytest.param("cuda", 300, marks=CUDA)])
def test_an_epilogue_after_rows_split_over_threads_or_blocks(device, length):
    x = et.tensor(np.random.default_rng(4).standard_normal((2, length)), dtype=et.float32).to(device)
    y = et.tensor(1.5).to(device)
    got = FusedReduction(PROGRAM, "sum", -1, epilogue=EPILOGUE)(x, y)
    expected = ((x * y + 0.5).sum(-1) * 2.0 + 1.0).abs().sqrt()
    assert np.array_equal(got.cpu().numpy(), expected.cpu().numpy(), equal_nan=True)
    with pytest.raises(ValueError, match="epilogue"):
        FusedReduction(PROGRAM, "sum", epilogue=PROGRAM)   # two inputs


def test_declines_what_it_cannot_run():
    reduction = FusedReduction(PROGRAM, "sum", dim=-1)
    assert reduction.compute_dtype([et.zeros(0, 3), et.zeros(0, 3)]) is None       # empty
    assert reduction.compute_dtype([et.zeros(3), et.zeros(3, dtype=et.float64)]) is None
    assert reduction.compute_dtype([et.zeros(3, dtype=et.int64)] * 2) is None
    assert FusedReduction(PROGRAM, "sum", dim=2).compute_dtype([et.zeros(3, 4)] * 2) is None
    assert reduction.compute_dtype([et.zeros(3, 4)] * 2) is et.float32
    with pytest.raises(ValueError, match="not a fusible reduction"):
        FusedReduction(PROGRAM, "prod")


_PTX = textwrap.dedent("""
    import ember_tensor as et
    from ember_tensor.fusion import FusedElementwise, FusedReduction
    from ember_tensor._backends.cuda import custom, fused_reduction
    prog = FusedElementwise([("where", (("in", 0), ("in", 1), 0.0)), ("sigmoid", (("step", 0),))], 2, name="p")
    for dtype, kind, acc in [(et.float32, "sum", types.float64), (et.float64, "amax", types.float64)]:
        name = FusedReduction(prog, kind).kernel_name(dtype)
        fn = custom._program_function(name, prog.source(dtype), prog.name, prog._used, dtype.np)
        rows, partial = fused_reduction._kernels(name, fn, kind, dtype.np, 2, acc)
        el = types.float32 if dtype is et.float32 else types.float64
        ops = (types.boolean[::1], types.int64, types.int64, el[::1], types.int64, types.int64)
        i8 = types.int64
        cuda.compile_ptx(rows.py_func, (i8, i8, acc, el[::1], *ops), cc=(9, 0))
        cuda.compile_ptx(partial.py_func, (i8, i8, acc, i8, i8, acc[::1], *ops), cc=(9, 0))
        epi = FusedElementwise([("mul", (("in", 0), 2.0)), ("sqrt", (("step", 0),))], 1, name="e")
        with_epilogue = FusedReduction(prog, kind, epilogue=epi).kernel_name(dtype)
        g = custom._program_function(with_epilogue + "_epilogue", epi.source(dtype), epi.name, epi._used, dtype.np)
        rows, _ = fused_reduction._kernels(with_epilogue, fn, kind, dtype.np, 2, acc, g)
        cuda.compile_ptx(rows.py_func, (i8, i8, acc, el[::1], *ops), cc=(9, 0))
    print("PTX OK")
""")


def test_cuda_kernels_compile_to_ptx():
    # The simulator runs kernels as Python; NVVM proves them valid CUDA (no GPU needed).
    # tools/cuda_ptx_check.py cannot name these in-memory kernels, so they are compiled here.
    done = run_ptx_script(_PTX)
    if done is None:
        pytest.skip("no NVVM to compile PTX with")
    assert done.returncode == 0 and "PTX OK" in done.stdout, done.stderr[-2000:]
