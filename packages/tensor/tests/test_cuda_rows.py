"""softmax, nll_loss, batch/layer/group norm and linear on CUDA tensors: the same results
as on the CPU, computed on the device (each CUDA call runs inside `device_only()`, so a
copy of an operand to the host fails the test).

nll_loss reads one int64 back (the first out-of-range target, for PyTorch's "Target N is
out of bounds." error), hence `device_only(allow_scalar_reads=True)` for it.
Shapes stay tiny: the simulator runs a Python thread per CUDA thread.
"""
import re
import warnings

import numpy as np
import pytest

import ember_tensor as et
from cuda_guard import device_only
from ember_tensor._ops import nn as N

pytestmark = pytest.mark.skipif(not et.cuda.is_available(), reason="no CUDA and no simulator")

FLOATS = [et.float32, et.float64, et.float16, et.bfloat16]
TOL = {et.float32: 1e-5, et.float64: 1e-10, et.float16: 2e-3, et.bfloat16: 2e-2}
LAYOUTS = ["contiguous", "strided", "transposed"]
rng = np.random.default_rng(0)


def make(values, dtype, layout="contiguous", device="cpu"):
    """A tensor of `values` in `layout`: contiguous, every other element of a wider
    tensor (strided), or a transposed copy transposed back; views made on `device`."""
    values = np.asarray(values, np.float64)
    if layout == "strided" and values.ndim:
        return et.tensor(np.repeat(values, 2, axis=-1), dtype=dtype, device=device)[..., ::2]
    if layout == "transposed" and values.ndim > 1:
        return et.tensor(np.swapaxes(values, 0, -1).copy(), dtype=dtype, device=device).transpose(0, -1)
    return et.tensor(values, dtype=dtype, device=device)


def _host(t):
    return (t.float() if t.dtype is et.bfloat16 else t).cpu().numpy().astype(np.float64)


def same(cpu_result, cuda_result, tol):
    """Each CUDA output is on cuda:0 with the CPU output's dtype, shape and values."""
    pairs = zip(cpu_result, cuda_result) if isinstance(cpu_result, tuple) else [(cpu_result, cuda_result)]
    for c, g in pairs:
        assert g.device == et.device("cuda", 0)
        assert (g.dtype, g.shape) == (c.dtype, c.shape)
        np.testing.assert_allclose(_host(g), _host(c), rtol=tol, atol=tol, equal_nan=True)


def run_both(fn, cpu_args, cuda_args, tol, scalar_reads=False):
    """fn on the CPU arguments, then on the CUDA ones inside device_only(); compared."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = fn(*cpu_args)
        with device_only(allow_scalar_reads=scalar_reads):
            got = fn(*cuda_args)
    same(expected, got, tol)
    return expected, got


def both(values, dtype, layout="contiguous"):
    """The same values as a CPU tensor and as a CUDA tensor of the given layout."""
    return make(values, dtype, layout), make(values, dtype, layout, "cuda")


def optional_both(values, dtype):
    return (None, None) if values is None else both(values, dtype)


def errors_match(fn, cpu_args, cuda_args):
    """The CUDA call raises the CPU call's exception type and message."""
    with pytest.raises(Exception) as cpu_error:
        fn(*cpu_args)
    with pytest.raises(cpu_error.type, match=_escaped(cpu_error.value)), device_only(allow_scalar_reads=True):
        fn(*cuda_args)


def _escaped(error):
    return "^" + re.escape(str(error)) + "$"


# --- softmax / log_softmax ------------------------------------------------------------------

SOFTMAX_CASES = [((), 0), ((5,), 0), ((5,), -1), ((3, 4), 1), ((3, 4), 0), ((2, 3, 4), 1),
                 ((2, 3, 4), -1), ((2, 0, 3), 1), ((2, 0, 3), 2), ((0,), 0)]


@pytest.mark.parametrize("op", [N.softmax, N.log_softmax])
@pytest.mark.parametrize("shape, dim", SOFTMAX_CASES)
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_softmax(op, shape, dim, dtype, layout):
    cpu, gpu = both(rng.standard_normal(shape) * 5, dtype, layout)
    run_both(op, (cpu, dim), (gpu, dim), TOL[dtype])


@pytest.mark.parametrize("op", [N.softmax, N.log_softmax])
@pytest.mark.parametrize("dim", [0, 1])
def test_softmax_special_values(op, dim):
    inf, nan = np.inf, np.nan
    x = [[1000.0, 1000.0, -inf], [-inf, -inf, -inf], [nan, 1.0, 2.0], [inf, 1.0, -inf]]
    run_both(op, (et.tensor(x), dim), (et.tensor(x, device="cuda"), dim), 1e-6)
    for value in (inf, nan, -3.0):  # 0-d: exp(x - x) normalised, as PyTorch
        run_both(op, (et.tensor(value), 0), (et.tensor(value, device="cuda"), 0), 1e-6)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_zero_dim_matches_pytorch(name):
    torch = pytest.importorskip("torch")
    for value in (np.inf, -np.inf, np.nan, 2.5):
        expected = getattr(torch, name)(torch.tensor(value), 0).item()
        for device in ("cpu", "cuda"):
            got = getattr(N, name)(et.tensor(value, device=device), 0).item()
            assert got == expected or (np.isnan(got) and np.isnan(expected))


@pytest.mark.parametrize("op", [N.softmax, N.log_softmax])
@pytest.mark.parametrize("dtype", [et.float64, et.float16, et.float32])
def test_softmax_dtype_argument(op, dtype):
    cpu, gpu = both(rng.standard_normal((3, 5)), et.float32, "strided")
    _, got = run_both(op, (cpu, -1, dtype), (gpu, -1, dtype), TOL[dtype])
    assert got.dtype == dtype


@pytest.mark.parametrize("op", [N.softmax, N.log_softmax])
def test_softmax_errors(op):
    x = et.tensor([[1, 2], [3, 4]])
    errors_match(op, (x, 1), (x.cuda(), 1))
    errors_match(op, (x.float(), 2), (x.float().cuda(), 2))


# --- nll_loss -------------------------------------------------------------------------------

NLL_CASES = [  # (input shape, target values), targets may hold ignore_index -100
    ((4,), 2), ((4,), -100),
    ((5, 3), [0, 2, -100, 1, 2]), ((3, 3), [-100, -100, -100]), ((0, 3), []),
    ((2, 3, 4), [[0, 1, 2, -100], [2, 2, 0, 1]]), ((2, 3, 2, 2), [[[0, 1], [2, 2]], [[1, -100], [0, 0]]]),
]


@pytest.mark.parametrize("shape, target", NLL_CASES)
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("dtype", [et.float32, et.float64, et.float16])
def test_nll_loss_and_backward(shape, target, reduction, weighted, dtype):
    layout = "transposed" if len(shape) > 1 else "contiguous"
    x_cpu, x_gpu = both(rng.standard_normal(shape), dtype, layout)
    t_cpu, t_gpu = et.tensor(target, dtype=et.int64), et.tensor(target, dtype=et.int64, device="cuda")
    classes = shape[0] if len(shape) == 1 else shape[1]
    w_cpu, w_gpu = optional_both(rng.uniform(0.5, 2.0, classes) if weighted else None, dtype)
    loss, _ = run_both(N.nll_loss, (x_cpu, t_cpu, w_cpu, reduction, -100),
                       (x_gpu, t_gpu, w_gpu, reduction, -100), TOL[dtype], scalar_reads=True)
    g_cpu, g_gpu = both(rng.standard_normal(tuple(loss.shape)), dtype)
    run_both(N.nll_loss_backward, (g_cpu, x_cpu, t_cpu, w_cpu, reduction, -100),
             (g_gpu, x_gpu, t_gpu, w_gpu, reduction, -100), TOL[dtype], scalar_reads=True)


@pytest.mark.parametrize("target_dtype", [et.int32, et.uint8])
def test_nll_loss_other_target_dtypes_and_ignore_index(target_dtype):
    x_cpu, x_gpu = both(rng.standard_normal((4, 3)), et.float32)
    t = [0, 2, 1, 2]
    t_cpu = et.tensor(t, dtype=target_dtype)
    t_gpu = et.tensor(np.repeat(t, 2), dtype=target_dtype, device="cuda")[::2]  # strided targets
    for reduction in ("none", "mean"):
        run_both(N.nll_loss, (x_cpu, t_cpu, None, reduction, 2), (x_gpu, t_gpu, None, reduction, 2), 1e-6,
                 scalar_reads=True)


NLL_EDGES = [  # (log-probabilities, targets): -inf entries, all ignored, zero class weights
    ([[-np.inf, -1.0], [0.0, -2.0]], [-100, 1]),
    ([[-1.0, 2.0], [0.0, -np.inf]], [-100, -100]),
    ([[-1.0, 2.0], [0.0, 1.0]], [0, 0]),
]


@pytest.mark.parametrize("values, target", NLL_EDGES)
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_nll_loss_edge_cases_match_pytorch(values, target, reduction):
    """Ignored samples add nothing (even over an infinite entry) and get a zero gradient;
    a mean over no weight is NaN, its gradient inf or NaN at the counted samples."""
    weight = et.tensor([0.0, 1.0])  # the third case counts only weight-0 samples
    x_cpu, x_gpu = both(values, et.float32)
    t_cpu, t_gpu = et.tensor(target), et.tensor(target, device="cuda")
    w_cpu, w_gpu = (weight, weight.cuda()) if target == [0, 0] else (None, None)
    loss, _ = run_both(N.nll_loss, (x_cpu, t_cpu, w_cpu, reduction), (x_gpu, t_gpu, w_gpu, reduction), 1e-6,
                       scalar_reads=True)
    g_cpu, g_gpu = both(np.ones(tuple(loss.shape)), et.float32)
    grad, _ = run_both(N.nll_loss_backward, (g_cpu, x_cpu, t_cpu, w_cpu, reduction),
                       (g_gpu, x_gpu, t_gpu, w_gpu, reduction), 1e-6, scalar_reads=True)
    torch = pytest.importorskip("torch")
    x = torch.tensor(values, dtype=torch.float32, requires_grad=True)
    w = None if w_cpu is None else torch.tensor(w_cpu.numpy())
    expected = torch.nn.functional.nll_loss(x, torch.tensor(target), w, reduction=reduction)
    expected.backward(torch.ones_like(expected))
    np.testing.assert_array_equal(loss.numpy(), expected.detach().numpy())
    np.testing.assert_array_equal(grad.numpy(), x.grad.numpy())


def test_nll_loss_errors():
    x, bad = et.zeros(2, 3), et.tensor([0, 5])
    errors_match(N.nll_loss, (x, bad), (x.cuda(), bad.cuda()))  # "Target 5 is out of bounds."
    errors_match(N.nll_loss, (x, et.tensor([-3, 0])), (x.cuda(), et.tensor([-3, 0]).cuda()))
    grad = et.tensor(1.0)
    errors_match(N.nll_loss_backward, (grad, x, bad), (grad.cuda(), x.cuda(), bad.cuda()))
    errors_match(N.nll_loss, (x, et.tensor([0, 1, 2])), (x.cuda(), et.tensor([0, 1, 2]).cuda()))
    errors_match(N.nll_loss, (x, et.tensor([0.0, 1.0])), (x.cuda(), et.tensor([0.0, 1.0]).cuda()))
    errors_match(N.nll_loss, (x, et.tensor([0, 1]), et.ones(2)), (x.cuda(), et.tensor([0, 1]).cuda(),
                                                                 et.ones(2).cuda()))


# --- batch norm -----------------------------------------------------------------------------

BN_SHAPES = [(4, 3), (2, 3, 4), (2, 3, 2, 2), (3, 2, 1)]


@pytest.mark.parametrize("shape", BN_SHAPES)
@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("affine", [False, True])
@pytest.mark.parametrize("dtype", FLOATS)
def test_batch_norm_and_backward(shape, training, affine, dtype):
    c = shape[1]
    layout = "strided" if len(shape) > 2 else "transposed"
    x_cpu, x_gpu = both(rng.standard_normal(shape) * 2 + 1, dtype, layout)
    w_cpu, w_gpu = optional_both(rng.uniform(0.5, 2.0, c) if affine else None, dtype)
    b_cpu, b_gpu = optional_both(rng.standard_normal(c) if affine else None, dtype)
    rm_cpu, rm_gpu = both(rng.standard_normal(c), dtype)
    rv_cpu, rv_gpu = both(rng.uniform(0.5, 2.0, c), dtype)
    version = rm_gpu._version
    out, _ = run_both(N.native_batch_norm, (x_cpu, w_cpu, b_cpu, rm_cpu, rv_cpu, training, 0.1, 1e-5),
                      (x_gpu, w_gpu, b_gpu, rm_gpu, rv_gpu, training, 0.1, 1e-5), TOL[dtype])
    # The running statistics were updated in place (unbiased variance) in training only.
    same((rm_cpu, rv_cpu), (rm_gpu, rv_gpu), TOL[dtype])
    assert (rm_gpu._version > version) == training
    g_cpu, g_gpu = both(rng.standard_normal(shape), dtype, "transposed")
    mean, invstd = out[1], out[2]
    run_both(N.batch_norm_backward, (g_cpu, x_cpu, w_cpu, mean, invstd, training),
             (g_gpu, x_gpu, w_gpu, mean.cuda(), invstd.cuda(), training), 10 * TOL[dtype])


def test_batch_norm_without_running_stats_and_errors():
    x_cpu, x_gpu = both(rng.standard_normal((3, 2, 2)), et.float32)
    run_both(N.native_batch_norm, (x_cpu, None, None, None, None, True, 0.1, 1e-5),
             (x_gpu, None, None, None, None, True, 0.1, 1e-5), 1e-5)
    one = et.ones(1, 3)
    errors_match(N.native_batch_norm, (one, None, None, None, None, True, 0.1, 1e-5),
                 (one.cuda(), None, None, None, None, True, 0.1, 1e-5))
    errors_match(N.native_batch_norm, (x_cpu, None, None, None, None, False, 0.1, 1e-5),
                 (x_gpu, None, None, None, None, False, 0.1, 1e-5))
    errors_match(N.native_batch_norm, (x_cpu, et.ones(3), None, None, None, True, 0.1, 1e-5),
                 (x_gpu, et.ones(3).cuda(), None, None, None, True, 0.1, 1e-5))


# --- layer norm and group norm --------------------------------------------------------------

LN_CASES = [((3, 4), (4,)), ((2, 3, 4), (3, 4)), ((5,), (5,)), ((0, 4), (4,)), ((2, 1, 3), (3,)),
            ((7, 2), (2,))]  # (7 rows: the weight gradient adds up several chunks of rows)


@pytest.mark.parametrize("shape, normalized", LN_CASES)
@pytest.mark.parametrize("affine", [False, True])
@pytest.mark.parametrize("dtype", FLOATS)
def test_layer_norm_and_backward(shape, normalized, affine, dtype):
    x_cpu, x_gpu = both(rng.standard_normal(shape) * 3, dtype, "transposed")
    w_cpu, w_gpu = optional_both(rng.uniform(0.5, 2.0, normalized) if affine else None, dtype)
    b_cpu, b_gpu = optional_both(rng.standard_normal(normalized) if affine else None, dtype)
    out, _ = run_both(N.native_layer_norm, (x_cpu, normalized, w_cpu, b_cpu, 1e-5),
                      (x_gpu, normalized, w_gpu, b_gpu, 1e-5), TOL[dtype])
    g_cpu, g_gpu = both(rng.standard_normal(shape), dtype, "strided")
    run_both(N.layer_norm_backward, (g_cpu, x_cpu, normalized, out[1], out[2], w_cpu),
             (g_gpu, x_gpu, normalized, out[1].cuda(), out[2].cuda(), w_gpu), 10 * TOL[dtype])


GN_CASES = [((2, 6, 3), 3), ((2, 6, 3), 1), ((2, 6, 3), 6), ((3, 4), 2), ((1, 4, 2, 2), 2), ((0, 4, 2), 2)]


@pytest.mark.parametrize("shape, groups", GN_CASES)
@pytest.mark.parametrize("affine", [False, True])
@pytest.mark.parametrize("dtype", FLOATS)
def test_group_norm_and_backward(shape, groups, affine, dtype):
    c = shape[1]
    x_cpu, x_gpu = both(rng.standard_normal(shape) * 3, dtype, "strided")
    w_cpu, w_gpu = optional_both(rng.uniform(0.5, 2.0, c) if affine else None, dtype)
    b_cpu, b_gpu = optional_both(rng.standard_normal(c) if affine else None, dtype)
    out, _ = run_both(N.native_group_norm, (x_cpu, w_cpu, b_cpu, groups, 1e-5),
                      (x_gpu, w_gpu, b_gpu, groups, 1e-5), TOL[dtype])
    g_cpu, g_gpu = both(rng.standard_normal(shape), dtype, "transposed")
    run_both(N.group_norm_backward, (g_cpu, x_cpu, out[1], out[2], w_cpu, groups),
             (g_gpu, x_gpu, out[1].cuda(), out[2].cuda(), w_gpu, groups), 10 * TOL[dtype])


def test_norm_errors():
    x_cpu, x_gpu = both(rng.standard_normal((2, 6, 3)), et.float32)
    errors_match(N.native_layer_norm, (x_cpu, (5,), None, None, 1e-5), (x_gpu, (5,), None, None, 1e-5))
    errors_match(N.native_layer_norm, (x_cpu, (3,), et.ones(4), None, 1e-5),
                 (x_gpu, (3,), et.ones(4).cuda(), None, 1e-5))
    errors_match(N.native_group_norm, (x_cpu, None, None, 4, 1e-5), (x_gpu, None, None, 4, 1e-5))
    i_cpu, i_gpu = x_cpu.long(), x_gpu.long()
    errors_match(N.native_group_norm, (i_cpu, None, None, 3, 1e-5), (i_gpu, None, None, 3, 1e-5))
    errors_match(N.native_batch_norm, (i_cpu, None, None, None, None, True, 0.1, 1e-5),
                 (i_gpu, None, None, None, None, True, 0.1, 1e-5))


# --- linear ---------------------------------------------------------------------------------

LINEAR_CASES = [((3, 4), 5), ((2, 3, 4), 2), ((4,), 3), ((0, 4), 2), ((3, 1), 1)]


@pytest.mark.parametrize("shape, out_features", LINEAR_CASES)
@pytest.mark.parametrize("with_bias", [False, True])
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_linear(shape, out_features, with_bias, dtype, layout):
    in_features = shape[-1]
    x_cpu, x_gpu = both(rng.standard_normal(shape), dtype, layout)
    w_cpu, w_gpu = both(rng.standard_normal((out_features, in_features)), dtype, layout)
    b_cpu, b_gpu = optional_both(rng.standard_normal(out_features) if with_bias else None, dtype)
    run_both(N.linear, (x_cpu, w_cpu, b_cpu), (x_gpu, w_gpu, b_gpu), 2 * TOL[dtype])


def test_linear_errors():
    x, w = et.ones(2, 3), et.ones(4, 5)
    errors_match(N.linear, (x, w), (x.cuda(), w.cuda()))
    errors_match(N.linear, (x, et.ones(4, 3, dtype=et.float64)), (x.cuda(), et.ones(4, 3, dtype=et.float64).cuda()))
    errors_match(N.linear, (x.long(), w), (x.long().cuda(), w.cuda()))
