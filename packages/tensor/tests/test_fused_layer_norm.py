"""ember_tensor.fusion.FusedLayerNorm: an elementwise program normalised by eager's layer
norm row kernel, against NumPy and the unfused ops (bit for bit), weight and bias present
or not, normalized shapes of one and two dims, over every layout the executors map
(contiguous, transposed, broadcast along the rows or the row, a scalar, negative strides,
sliced, two runs of rows, trailing dims that do not merge, threaded), on the CPU and on
CUDA (the simulator; and its kernel compiled to PTX)."""
import sys
import textwrap

import numpy as np
import pytest
from cuda_ptx_check import run_ptx_script

import ember_tensor as et
from ember_tensor import nn_ops
from ember_tensor.fusion import FusedElementwise, FusedLayerNorm

# x0 * 1.5 + x1, then normalised (a residual add with a scale)
PROGRAM = FusedElementwise([("mul", (("in", 0), 1.5)), ("add", (("step", 0), ("in", 1)))], 2)
EPS = 1e-5


def _layouts():
    """(name, x, r, normalized_shape)."""
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((6, 7)) * 3 + 1, rng.standard_normal((6, 7))
    yield "contiguous", et.tensor(a), et.tensor(b), (7,)
    yield "transposed", et.tensor(a.T.copy()).t(), et.tensor(b), (7,)
    yield "both_transposed", et.tensor(a.T.copy()).t(), et.tensor(b.T.copy()).t(), (7,)
    yield "row_broadcast", et.tensor(a), et.tensor(b[0]), (7,)
    yield "column_broadcast", et.tensor(a), et.tensor(b[:, :1]), (7,)
    yield "scalar_operand", et.tensor(a), et.tensor(2.0), (7,)
    yield "negative_strides", et.tensor(a).flip(1), et.tensor(b), (7,)
    yield "sliced", et.tensor(rng.standard_normal((12, 14)))[::2, 1::2], et.tensor(b), (7,)
    yield "one_dim", et.tensor(a[0]), et.tensor(b[1]), (7,)
    c = rng.standard_normal((2, 3, 4, 5))
    yield "two_runs_of_rows", et.tensor(c), et.tensor(rng.standard_normal((3, 1, 1))), (4, 5)
    yield "two_dims", et.tensor(c), et.tensor(rng.standard_normal((4, 5))), (4, 5)
    yield "two_dims_unmerged", et.tensor(c), et.tensor(rng.standard_normal(5)), (4, 5)
    yield "two_dims_permuted", et.tensor(c).permute(0, 1, 3, 2), et.tensor(rng.standard_normal((5, 4))), (5, 4)
    yield "size_one_dim", et.tensor(c).reshape(6, 1, 20), et.tensor(rng.standard_normal((1, 20))), (1, 20)


def _numpy_layer_norm(v, k, weight, bias):
    axes = tuple(range(v.ndim - k, v.ndim))
    mean = v.mean(axis=axes, keepdims=True)
    out = (v - mean) / np.sqrt(((v - mean) ** 2).mean(axis=axes, keepdims=True) + EPS)
    return out * (1.0 if weight is None else weight) + (0.0 if bias is None else bias)


def _affine(shape, dtype, device, which):
    rng = np.random.default_rng(sum(shape))
    weight = et.tensor(rng.standard_normal(shape), dtype=dtype).to(device) if "w" in which else None
    bias = et.tensor(rng.standard_normal(shape), dtype=dtype).to(device) if "b" in which else None
    return weight, bias


CUDA = pytest.mark.skipif(not et.cuda.is_available(), reason="no CUDA and no simulator")
DEVICES = ["cpu", pytest.param("cuda", marks=CUDA)]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("affine", ["wb", "", "w", "b"])
@pytest.mark.parametrize("dtype", [et.float32, et.float64])
def test_layouts_against_numpy_and_the_unfused_ops(affine, dtype, device):
    for name, x, r, shape in _layouts():
        x, r = x.to(dtype).to(device), r.to(dtype).to(device)
        weight, bias = _affine(shape, dtype, device, affine)
        norm = FusedLayerNorm(PROGRAM, shape, EPS, weight is not None, bias is not None)
        got = norm(x, r, *[t for t in (weight, bias) if t is not None])
        values = x * 1.5 + r
        eager = nn_ops.native_layer_norm(values, shape, weight, bias, EPS)[0]
        expected = _numpy_layer_norm(values.cpu().numpy().astype(np.float64), len(shape),
                                     None if weight is None else weight.cpu().numpy(),
                                     None if bias is None else bias.cpu().numpy())
        assert got.shape == eager.shape and got.dtype == dtype and got.device == x.device, name
        got, eager = got.cpu(), eager.cpu()
        assert np.allclose(got.numpy(), expected, rtol=1e-4, atol=1e-5), name
        # eager's row kernel on the same values: its bits
        assert got.numpy().tobytes() == eager.numpy().tobytes(), name


def test_large_inputs_split_over_threads_and_special_values():
    rng = np.random.default_rng(1)
    x = et.tensor(rng.standard_normal((300, 1000)) * 10, dtype=et.float32)
    r = et.tensor(rng.standard_normal((300, 1000)), dtype=et.float32)
    x[3, 5] = float("nan")
    x[7] = 2.0    # a constant row: zero variance, rstd 1 / sqrt(eps)
    weight, bias = _affine((1000,), et.float32, "cpu", "wb")
    got = FusedLayerNorm(PROGRAM, (1000,), EPS, True, True)(x, r, weight, bias)
    eager = nn_ops.native_layer_norm(x * 1.5 + r, (1000,), weight, bias, EPS)[0]
    assert got.numpy().tobytes() == eager.numpy().tobytes()
    assert np.isnan(got.numpy()[3]).all() and np.isfinite(got.numpy()[7]).all()


def test_declines_what_it_cannot_run():
    norm = FusedLayerNorm(PROGRAM, (3,), EPS, weight=True)
    w = et.ones(3)
    assert norm.compute_dtype([et.zeros(0, 3), et.zeros(0, 3), w]) is None              # empty
    assert norm.compute_dtype([et.zeros(2, 4), et.zeros(2, 4), et.ones(4)]) is None      # other shape
    assert norm.compute_dtype([et.zeros(2, 3), et.zeros(2, 3), et.ones(4)]) is None      # weight's shape
    assert norm.compute_dtype([et.zeros(2, 3), et.zeros(2, 3), w.double()]) is None      # weight's dtype
    assert norm.compute_dtype([et.zeros(2, 3), et.zeros(2, 3)]) is None                  # no weight
    assert norm.compute_dtype([et.zeros(3, dtype=et.int64)] * 2 + [w]) is None
    assert norm.compute_dtype([et.tensor(1.0), et.tensor(2.0), w]) is None               # 0-d
    assert norm.compute_dtype([et.zeros(2, 3), et.zeros(3), w]) is et.float32
    with pytest.raises(ValueError, match="comparison"):
        FusedLayerNorm(FusedElementwise([("gt", (("in", 0), 0.0))], 1), (3,), EPS)
    with pytest.raises(ValueError, match="positive ints"):
        FusedLayerNorm(PROGRAM, (), EPS)


def test_one_compiled_kernel_per_program_and_dtype():
    # Shapes, strides, broadcasting and the affine parameters are runtime arguments.
    norm = FusedLayerNorm(PROGRAM, (4,), EPS)
    for x, y in [(et.randn(3, 4), et.randn(4)), (et.randn(4, 6).t(), et.randn(6, 1)),
                 (et.randn(2, 3, 4), et.randn(3, 4))]:
        assert et.equal(norm(x, y), nn_ops.native_layer_norm(x * 1.5 + y, (4,), None, None, EPS)[0])
    module = sys.modules[norm.kernel_name(et.float32)]   # the generated module
    assert len(module._values.signatures) == 1   # its compiled loop (rows is Python)


_PTX = textwrap.dedent("""
    import ember_tensor as et
    from ember_tensor.fusion import FusedElementwise, FusedLayerNorm
    from ember_tensor._backends.cuda import custom, fused_layer_norm
    prog = FusedElementwise([("where", (("in", 0), ("in", 1), -1.0)), ("tanh", (("step", 0),))], 2, name="p")
    for dtype in (et.float32, et.float64):
        name = FusedLayerNorm(prog, (8,), 1e-5).kernel_name(dtype)
        fn = custom._program_function(name, prog.source(dtype), prog.name, prog._used, dtype.np)
        rows = fused_layer_norm._kernel(name, fn, 2)
        el = types.float32 if dtype is et.float32 else types.float64
        i8, f8 = types.int64, types.float64
        ops = (types.boolean[::1], i8, i8, i8, el[::1], i8, i8, i8)
        cuda.compile_ptx(rows.py_func, (i8, i8, i8, f8, f8[::1], f8[::1], types.boolean, types.boolean, el[::1],
                                        *ops), cc=(9, 0))
    print("PTX OK")
""")


def test_cuda_kernel_compiles_to_ptx():
    # The simulator runs kernels as Python; NVVM proves them valid CUDA (no GPU needed).
    done = run_ptx_script(_PTX)
    if done is None:
        pytest.skip("no NVVM to compile PTX with")
    assert done.returncode == 0 and "PTX OK" in done.stdout, done.stderr[-2000:]


@pytest.mark.parametrize("module", ["ember_tensor.fusion", "ember_tensor.fusion._elementwise",
                                    "ember_tensor.fusion._reduction", "ember_tensor.fusion._softmax",
                                    "ember_tensor.fusion._layer_norm"])
def test_the_fusion_package_examples_run(module):
    # The package's examples (one module per family) are its documentation: they must run.
    import doctest
    import importlib
    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
