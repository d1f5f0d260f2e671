"""The row kernels of the nn ops (softmax, log_softmax, nll_loss and its backward,
batch/layer/group norm and their backwards, linear) over every floating dtype and
layout, on every device (`device_checks.same_on`): on the CPU each dtype gives what
float64 gives, cast back (test_nn_kernels.py holds float64 to NumPy references); on CUDA
the CPU's result, computed on the device (a copy of an operand to the host fails).

nll_loss reads one int64 back on CUDA (the first out-of-range target, for PyTorch's
"Target N is out of bounds." error), hence `scalar_reads` for it. Shapes stay tiny: the
simulator runs a Python thread per CUDA thread.
"""
import numpy as np
import pytest

import ember_tensor as et
from cuda_guard import DEVICES
from device_checks import same_on
from ember_tensor._ops import nn as N

FLOATS = [et.float32, et.float64, et.float16, et.bfloat16]
TOL = {et.float32: 1e-5, et.float64: 1e-10, et.float16: 2e-3, et.bfloat16: 2e-2}
LAYOUTS = ["contiguous", "strided", "transposed"]
rng = np.random.default_rng(0)


def make(values, dtype, layout="contiguous"):
    """A tensor of `values` in `layout`: contiguous, every other element of a wider
    tensor (strided), or a transposed copy transposed back."""
    values = np.asarray(values, np.float64)
    if layout == "strided" and values.ndim:
        return et.tensor(np.repeat(values, 2, axis=-1), dtype=dtype)[..., ::2]
    if layout == "transposed" and values.ndim > 1:
        return et.tensor(np.swapaxes(values, 0, -1).copy(), dtype=dtype).transpose(0, -1)
    return et.tensor(values, dtype=dtype)


def optional(values, dtype):
    """`make(values, dtype)`, or None for no values (no weight, no bias)."""
    return None if values is None else make(values, dtype)


def _errors(device, cases):
    """Each (call, exception, args) of `cases` raises that exception, the same on `device`."""
    for call, exc, args in cases:
        same_on(device, call, *args, raises=exc, scalar_reads=True)


# --- softmax / log_softmax ------------------------------------------------------------------

SOFTMAX_CASES = [((), 0), ((5,), 0), ((5,), -1), ((3, 4), 1), ((3, 4), 0), ((2, 3, 4), 1),
                 ((2, 3, 4), -1), ((2, 0, 3), 1), ((2, 0, 3), 2), ((0,), 0)]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("op", [N.softmax, N.log_softmax])
@pytest.mark.parametrize("shape, dim", SOFTMAX_CASES)
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_softmax(op, shape, dim, dtype, layout, device):
    """softmax and log_softmax of every shape, dim, dtype and layout."""
    same_on(device, op, make(rng.standard_normal(shape) * 5, dtype, layout), dim, tol=TOL[dtype])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("forward, backward", [(N.softmax, N.softmax_backward),
                                               (N.log_softmax, N.log_softmax_backward)])
@pytest.mark.parametrize("shape, dim", SOFTMAX_CASES)
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_softmax_backward(forward, backward, shape, dim, dtype, layout, device):
    """The fused backward passes of softmax and log_softmax, from a strided gradient."""
    y = forward(make(rng.standard_normal(shape) * 5, dtype), dim)
    same_on(device, backward, make(rng.standard_normal(shape), dtype, layout), y, dim, tol=TOL[dtype])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("op", [N.softmax, N.log_softmax])
@pytest.mark.parametrize("dim", [0, 1])
def test_softmax_special_values(op, dim, device):
    """Rows of ±inf, NaN and large values, and 0-d inf, NaN and numbers."""
    inf, nan = np.inf, np.nan
    x = [[1000.0, 1000.0, -inf], [-inf, -inf, -inf], [nan, 1.0, 2.0], [inf, 1.0, -inf]]
    same_on(device, op, et.tensor(x), dim, tol=1e-6)
    for value in (inf, nan, -3.0):  # 0-d: exp(x - x) normalised, as PyTorch
        same_on(device, op, et.tensor(value), 0, tol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_zero_dim_matches_pytorch(name, device):
    """The 0-d softmax of inf, -inf, NaN and a number is PyTorch's."""
    torch = pytest.importorskip("torch")
    for value in (np.inf, -np.inf, np.nan, 2.5):
        expected = getattr(torch, name)(torch.tensor(value), 0).item()
        got = getattr(N, name)(et.tensor(value, device=device), 0).item()
        assert got == expected or (np.isnan(got) and np.isnan(expected))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("op", [N.softmax, N.log_softmax])
@pytest.mark.parametrize("dtype", [et.float64, et.float16, et.float32])
def test_softmax_dtype_argument(op, dtype, device):
    """softmax(dtype=) computes in and returns that dtype."""
    x = make(rng.standard_normal((3, 5)), et.float32, "strided")
    assert op(x, -1, dtype).dtype == dtype
    same_on(device, op, x, -1, dtype, tol=TOL[dtype])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("op", [N.softmax, N.log_softmax])
def test_softmax_errors(op, device):
    """An integer input and a dim out of range raise PyTorch's errors."""
    x = et.tensor([[1, 2], [3, 4]])
    _errors(device, [(op, RuntimeError, (x, 1)), (op, IndexError, (x.float(), 2))])


# --- nll_loss -------------------------------------------------------------------------------

NLL_CASES = [  # (input shape, target values), targets may hold ignore_index -100
    ((4,), 2), ((4,), -100),
    ((5, 3), [0, 2, -100, 1, 2]), ((3, 3), [-100, -100, -100]), ((0, 3), []),
    ((2, 3, 4), [[0, 1, 2, -100], [2, 2, 0, 1]]), ((2, 3, 2, 2), [[[0, 1], [2, 2]], [[1, -100], [0, 0]]]),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape, target", NLL_CASES)
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("dtype", [et.float32, et.float64, et.float16])
def test_nll_loss_and_backward(shape, target, reduction, weighted, dtype, device):
    """nll_loss and its backward over shapes (0-d target, empty batch, spatial), ignored
    targets, reductions and class weights."""
    x = make(rng.standard_normal(shape), dtype, "transposed" if len(shape) > 1 else "contiguous")
    t = et.tensor(target, dtype=et.int64)
    w = optional(rng.uniform(0.5, 2.0, shape[0] if len(shape) == 1 else shape[1]) if weighted else None, dtype)
    same_on(device, N.nll_loss, x, t, w, reduction, -100, tol=TOL[dtype], scalar_reads=True)
    g = make(rng.standard_normal(tuple(N.nll_loss(x, t, w, reduction, -100).shape)), dtype)
    same_on(device, N.nll_loss_backward, g, x, t, w, reduction, -100, tol=TOL[dtype], scalar_reads=True)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("target_dtype", [et.int32, et.uint8])
def test_nll_loss_other_target_dtypes_and_ignore_index(target_dtype, device):
    """int32 and uint8 targets (strided), and an ignore_index that is a class."""
    x = make(rng.standard_normal((4, 3)), et.float32)
    t = et.tensor(np.repeat([0, 2, 1, 2], 2), dtype=target_dtype)[::2]
    for reduction in ("none", "mean"):
        same_on(device, N.nll_loss, x, t, None, reduction, 2, tol=1e-6, scalar_reads=True)


NLL_EDGES = [  # (log-probabilities, targets): -inf entries, all ignored, zero class weights
    ([[-np.inf, -1.0], [0.0, -2.0]], [-100, 1]),
    ([[-1.0, 2.0], [0.0, -np.inf]], [-100, -100]),
    ([[-1.0, 2.0], [0.0, 1.0]], [0, 0]),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("values, target", NLL_EDGES)
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_nll_loss_edge_cases_match_pytorch(values, target, reduction, device):
    """Ignored samples add nothing (even over an infinite entry) and get a zero gradient;
    a mean over no weight is NaN, its gradient inf or NaN at the counted samples. The
    CPU's are PyTorch's exactly; CUDA's the CPU's."""
    x, t = make(values, et.float32), et.tensor(target)
    w = et.tensor([0.0, 1.0]) if target == [0, 0] else None  # the third case counts only weight-0 samples
    same_on(device, N.nll_loss, x, t, w, reduction, tol=1e-6, scalar_reads=True)
    loss = N.nll_loss(x, t, w, reduction)
    g = make(np.ones(tuple(loss.shape)), et.float32)
    same_on(device, N.nll_loss_backward, g, x, t, w, reduction, tol=1e-6, scalar_reads=True)
    if device != "cpu":
        return
    grad = N.nll_loss_backward(g, x, t, w, reduction)
    torch = pytest.importorskip("torch")
    tx = torch.tensor(values, dtype=torch.float32, requires_grad=True)
    expected = torch.nn.functional.nll_loss(tx, torch.tensor(target), None if w is None else torch.tensor(w.numpy()),
                                            reduction=reduction)
    expected.backward(torch.ones_like(expected))
    np.testing.assert_array_equal(loss.numpy(), expected.detach().numpy())
    np.testing.assert_array_equal(grad.numpy(), tx.grad.numpy())


@pytest.mark.parametrize("device", DEVICES)
def test_nll_loss_errors(device):
    """Targets out of range (forward and backward), batch sizes that differ, floating
    targets and a weight of the wrong size raise PyTorch's errors."""
    x, bad = et.zeros(2, 3), et.tensor([0, 5])
    _errors(device, [(N.nll_loss, IndexError, (x, bad)),  # "Target 5 is out of bounds."
                     (N.nll_loss, IndexError, (x, et.tensor([-3, 0]))),
                     (N.nll_loss_backward, IndexError, (et.tensor(1.0), x, bad)),
                     (N.nll_loss, ValueError, (x, et.tensor([0, 1, 2]))),
                     (N.nll_loss, RuntimeError, (x, et.tensor([0.0, 1.0]))),
                     (N.nll_loss, RuntimeError, (x, et.tensor([0, 1]), et.ones(2)))])


# --- batch norm -----------------------------------------------------------------------------

BN_SHAPES = [(4, 3), (2, 3, 4), (2, 3, 2, 2), (3, 2, 1)]


def _batch_norm_and_stats(training):
    """native_batch_norm's outputs followed by the running statistics it updated in place
    (unbiased variance), in training only (asserted through the version counter). It
    updates copies: each device starts from the same statistics."""
    def call(x, w, b, running_mean, running_var):
        """native_batch_norm on copies of the running statistics, which it returns too."""
        running_mean, running_var = running_mean.clone(), running_var.clone()
        version = running_mean._version
        out = N.native_batch_norm(x, w, b, running_mean, running_var, training, 0.1, 1e-5)
        assert (running_mean._version > version) == training
        return (*out, running_mean, running_var)
    return call


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape", BN_SHAPES)
@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("affine", [False, True])
@pytest.mark.parametrize("dtype", FLOATS)
def test_batch_norm_and_backward(shape, training, affine, dtype, device):
    """batch norm (training and eval, with and without affine parameters), its running
    statistics and its backward."""
    c = shape[1]
    x = make(rng.standard_normal(shape) * 2 + 1, dtype, "strided" if len(shape) > 2 else "transposed")
    w = optional(rng.uniform(0.5, 2.0, c) if affine else None, dtype)
    b = optional(rng.standard_normal(c) if affine else None, dtype)
    running = make(rng.standard_normal(c), dtype), make(rng.uniform(0.5, 2.0, c), dtype)
    same_on(device, _batch_norm_and_stats(training), x, w, b, *running, tol=TOL[dtype])
    _, mean, invstd = N.native_batch_norm(x, w, b, running[0].clone(), running[1].clone(), training, 0.1, 1e-5)
    g = make(rng.standard_normal(shape), dtype, "transposed")
    same_on(device, N.batch_norm_backward, g, x, w, mean, invstd, training, tol=10 * TOL[dtype])


@pytest.mark.parametrize("device", DEVICES)
def test_batch_norm_without_running_stats_and_errors(device):
    """Training without running statistics; one value per channel, eval without running
    statistics and a weight of the wrong size raise PyTorch's errors."""
    x = make(rng.standard_normal((3, 2, 2)), et.float32)
    same_on(device, N.native_batch_norm, x, None, None, None, None, True, 0.1, 1e-5, tol=1e-5)
    _errors(device, [(N.native_batch_norm, ValueError, (et.ones(1, 3), None, None, None, None, True, 0.1, 1e-5)),
                     (N.native_batch_norm, RuntimeError, (x, None, None, None, None, False, 0.1, 1e-5)),
                     (N.native_batch_norm, RuntimeError, (x, et.ones(3), None, None, None, True, 0.1, 1e-5))])


# --- layer norm and group norm --------------------------------------------------------------

LN_CASES = [((3, 4), (4,)), ((2, 3, 4), (3, 4)), ((5,), (5,)), ((0, 4), (4,)), ((2, 1, 3), (3,)),
            ((7, 2), (2,))]  # (7 rows: CUDA's weight gradient adds up several chunks of rows)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape, normalized", LN_CASES)
@pytest.mark.parametrize("affine", [False, True])
@pytest.mark.parametrize("dtype", FLOATS)
def test_layer_norm_and_backward(shape, normalized, affine, dtype, device):
    """layer norm over trailing dims (and an empty batch), with and without affine
    parameters, and its backward."""
    x = make(rng.standard_normal(shape) * 3, dtype, "transposed")
    w = optional(rng.uniform(0.5, 2.0, normalized) if affine else None, dtype)
    b = optional(rng.standard_normal(normalized) if affine else None, dtype)
    same_on(device, N.native_layer_norm, x, normalized, w, b, 1e-5, tol=TOL[dtype])
    _, mean, rstd = N.native_layer_norm(x, normalized, w, b, 1e-5)
    g = make(rng.standard_normal(shape), dtype, "strided")
    if device == "cpu" and dtype is et.float32:
        _float32_layer_norm_backward_within_rounding(g, x, normalized, mean, rstd, w)
        return
    same_on(device, N.layer_norm_backward, g, x, normalized, mean, rstd, w, tol=10 * TOL[dtype])


def _float32_layer_norm_backward_within_rounding(g, x, normalized, mean, rstd, w):
    # The float32 backward runs in float32 arithmetic (as PyTorch's): its input gradient
    # cancels terms of the size of g * w, so float32 rounding of those, times rstd, is its
    # error bound (a 2-element row's input gradient is exactly 0 plus that noise; rstd
    # reaches 1/sqrt(eps)). The weight and bias sums hold the usual float32 tolerance.
    got = N.layer_norm_backward(g, x, normalized, mean, rstd, w)
    wide = N.layer_norm_backward(g.double(), x.double(), normalized, mean.double(), rstd.double(),
                                 None if w is None else w.double())
    w_max = 1.0 if w is None else np.abs(w.double().numpy()).max(initial=0.0)
    scale = np.abs(rstd.double().numpy()).max(initial=0.0) * np.abs(g.double().numpy()).max(initial=0.0) * w_max
    for part, (a, b) in enumerate(zip(got, wide)):
        if a is None:
            continue
        atol = 1e-6 * max(scale, 1.0) if part == 0 else 1e-6
        np.testing.assert_allclose(a.double().numpy(), b.numpy(), rtol=1e-5, atol=atol)


GN_CASES = [((2, 6, 3), 3), ((2, 6, 3), 1), ((2, 6, 3), 6), ((3, 4), 2), ((1, 4, 2, 2), 2), ((0, 4, 2), 2)]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape, groups", GN_CASES)
@pytest.mark.parametrize("affine", [False, True])
@pytest.mark.parametrize("dtype", FLOATS)
def test_group_norm_and_backward(shape, groups, affine, dtype, device):
    """group norm from one group to one per channel (and an empty batch), with and
    without affine parameters, and its backward."""
    c = shape[1]
    x = make(rng.standard_normal(shape) * 3, dtype, "strided")
    w = optional(rng.uniform(0.5, 2.0, c) if affine else None, dtype)
    b = optional(rng.standard_normal(c) if affine else None, dtype)
    same_on(device, N.native_group_norm, x, w, b, groups, 1e-5, tol=TOL[dtype])
    _, mean, rstd = N.native_group_norm(x, w, b, groups, 1e-5)
    g = make(rng.standard_normal(shape), dtype, "transposed")
    same_on(device, N.group_norm_backward, g, x, mean, rstd, w, groups, tol=10 * TOL[dtype])


@pytest.mark.parametrize("device", DEVICES)
def test_norm_errors(device):
    """A normalized_shape or weight that does not fit, groups that do not divide the
    channels and integer inputs raise PyTorch's errors."""
    x = make(rng.standard_normal((2, 6, 3)), et.float32)
    _errors(device, [(N.native_layer_norm, RuntimeError, (x, (5,), None, None, 1e-5)),
                     (N.native_layer_norm, RuntimeError, (x, (3,), et.ones(4), None, 1e-5)),
                     (N.native_group_norm, RuntimeError, (x, None, None, 4, 1e-5)),
                     (N.native_group_norm, RuntimeError, (x.long(), None, None, 3, 1e-5)),
                     (N.native_batch_norm, RuntimeError, (x.long(), None, None, None, None, True, 0.1, 1e-5))])


# --- linear ---------------------------------------------------------------------------------

LINEAR_CASES = [((3, 4), 5), ((2, 3, 4), 2), ((4,), 3), ((0, 4), 2), ((3, 1), 1)]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape, out_features", LINEAR_CASES)
@pytest.mark.parametrize("with_bias", [False, True])
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_linear(shape, out_features, with_bias, dtype, layout, device):
    """linear of batched, 1-d and empty inputs, with and without bias."""
    x = make(rng.standard_normal(shape), dtype, layout)
    w = make(rng.standard_normal((out_features, shape[-1])), dtype, layout)
    b = optional(rng.standard_normal(out_features) if with_bias else None, dtype)
    same_on(device, N.linear, x, w, b, tol=2 * TOL[dtype])


@pytest.mark.parametrize("device", DEVICES)
def test_linear_errors(device):
    """Shapes that do not multiply, mixed dtypes and integer inputs raise PyTorch's errors."""
    x, w = et.ones(2, 3), et.ones(4, 5)
    _errors(device, [(N.linear, RuntimeError, (x, w)), (N.linear, RuntimeError, (x, et.ones(4, 3, dtype=et.float64))),
                     (N.linear, RuntimeError, (x.long(), w))])
