"""Gradients at the edges where PyTorch has a convention (issue 21): ties, NaN, bounds,
counts of zero. Each expected value is PyTorch 2.13's, written out literally so that no
PyTorch is needed here."""
import math
import warnings

import pytest

import ember_autograd  # noqa: F401 - backward()
import ember_tensor as E

nan, inf = math.nan, math.inf


def grads(fn, *values):
    """The gradients of fn(*leaves).sum() with respect to float64 leaves holding `values`."""
    leaves = [E.tensor(v, dtype=E.float64).requires_grad_() for v in values]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # var's "degrees of freedom is <= 0"
        fn(*leaves).sum().backward()
    return [leaf.grad.tolist() for leaf in leaves]


def same(a, b):
    """Equal up to rounding (infinities exactly), NaN matching NaN, over nested lists."""
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-12)


CASES = [
    # id, function, inputs, PyTorch's gradients
    ("maximum: ties share, NaN wins both", E.maximum, ([1.0, 2.0, nan, 1.0], [1.0, 3.0, 1.0, nan]),
     [[0.5, 0.0, 1.0, 1.0], [0.5, 1.0, 1.0, 1.0]]),
    ("minimum: ties share, NaN wins both", E.minimum, ([1.0, 2.0, nan], [1.0, 3.0, 1.0]),
     [[0.5, 1.0, 1.0], [0.5, 0.0, 1.0]]),
    ("max(): ties share", lambda a: a.max(), ([1.0, 3.0, 3.0],), [[0.0, 0.5, 0.5]]),
    ("max(): NaN results share among NaNs", lambda a: a.max(), ([1.0, nan, nan],), [[0.0, 0.5, 0.5]]),
    ("amax: ties share", lambda a: a.amax(), ([1.0, 3.0, 3.0],), [[0.0, 0.5, 0.5]]),
    ("amin: a NaN result gives nan", lambda a: a.amin(), ([1.0, nan, nan],), [[nan, nan, nan]]),
    ("amax over a dim with NaN", lambda a: a.amax(1), ([[1.0, nan], [2.0, 2.0]],), [[nan, nan], [0.5, 0.5]]),
    ("relu passes NaN's gradient", E.relu, ([nan, 0.0, -1.0, 2.0],), [[1.0, 0.0, 0.0, 1.0]]),
    ("clamp with tensor bounds", E.clamp, ([-1.0, 0.0, 1.0, 2.0, nan], [-1.0, 0.0, 0.0, 1.0, 0.0],
                                         [1.0, 0.0, 1.0, 1.0, 1.0]),
     [[1.0, 1.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0, 0.0]]),
    ("(-1) ** x is nan", lambda x: (-1.0) ** x, ([2.0, 0.5],), [[nan, nan]]),
    ("0 ** x: 0 for x >= 0, -inf below", lambda x: 0.0 ** x, ([2.0, 0.0, -1.0],), [[0.0, 0.0, -inf]]),
    ("s ** x at s = 0 and -1", lambda s, x: s ** x, ([-1.0, 0.0, 0.0, -1.0], [2.0, 2.0, 0.0, 0.5]),
     [[-2.0, 0.0, 0.0, nan], [nan, 0.0, 0.0, nan]]),
    ("atan2 at the origin", E.atan2, ([0.0, 1.0], [0.0, 1.0]), [[0.0, 0.5], [0.0, -0.5]]),
    ("remainder: d/dother is -floor_divide, -1 for -5 over +inf", E.remainder,
     ([5.0, -5.0, inf, 5.0], [inf, inf, inf, -inf]), [[1.0, 1.0, 1.0, 1.0], [-0.0, 1.0, nan, 1.0]]),
    ("logit outside [0, 1] is nan", E.logit, ([-0.5, 0.0, 0.5, 1.0, 1.5],), [[nan, inf, 4.0, inf, nan]]),
    ("logit with eps is 0 outside", lambda x: E.logit(x, 0.1), ([-0.5, 0.5, 1.5],), [[0.0, 4.0, 0.0]]),
    ("xlogy: log(y) even at x = 0, 0 where x = 0 and y <= 0", E.xlogy,
     ([0.0, 0.0, 2.0, 0.0, 2.0, 1.0], [inf, 0.0, inf, -1.0, 2.0, nan]),
     [[inf, 0.0, inf, 0.0, 0.6931471805599453, nan], [0.0, nan, 0.0, -0.0, 1.0, nan]]),
    ("xlogy_ as xlogy", lambda x, y: x.clone().xlogy_(y), ([0.0, 2.0], [1.0, 3.0]),
     [[0.0, 1.0986122886681098], [0.0, 0.6666666666666666]]),
    ("xlogy broadcast over an empty result", lambda y: E.xlogy(E.zeros(0, 3, dtype=E.float64), y),
     ([1.0, 1.0, 1.0],), [[0.0, 0.0, 0.0]]),
    ("nanmedian(): ties share", lambda a: a.nanmedian(), ([1.0, 2.0, 2.0, 3.0],), [[0.0, 0.5, 0.5, 0.0]]),
    ("nanmedian(): NaN ignored", lambda a: a.nanmedian(), ([2.0, 2.0, nan, 1.0],), [[0.5, 0.5, 0.0, 0.0]]),
    ("nanmedian(): all NaN share", lambda a: a.nanmedian(), ([nan, nan],), [[0.5, 0.5]]),
    ("nanmedian() of nothing", lambda a: a.nanmedian(), ([],), [[]]),
    ("logcumsumexp with -inf and inf", lambda x: x.logcumsumexp(0) * E.tensor([1.0, -2.0, 3.0], dtype=E.float64),
     ([-inf, 1.0, 2.0],), [[nan, -1.1931757358900148, 2.1931757358900144]]),
    ("logcumsumexp, mixed-sign gradient", lambda x: x.logcumsumexp(0) * E.tensor([1.0, -2.0, 3.0], dtype=E.float64),
     ([0.5, -1.0, 2.0],), [[-0.10927777596717725, -0.24751332780065033, 2.3567911037678275]]),
    ("det of a singular matrix: 0, as PyTorch's LU solve", E.linalg.det, ([[1.0, 2.0], [2.0, 4.0]],),
     [[[0.0, 0.0], [0.0, 0.0]]]),
    ("det of a batch with one singular matrix", E.linalg.det, ([[[1.0, 2.0], [2.0, 4.0]], [[2.0, 1.0], [1.0, 3.0]]],),
     [[[[0.0, 0.0], [0.0, 0.0]], [[3.0, -1.0], [-1.0, 2.0]]]]),
    ("var of one element", lambda a: a.var(), ([1.0],), [[nan]]),
    ("var of a 0-d tensor", lambda a: a.var(), (1.5,), nan),
    ("var with correction past the count", lambda a: a.var(correction=2), (1.5,), nan),
    ("std of one element", lambda a: a.std(), ([1.0],), [[nan]]),
    ("std_mean of one element", lambda a: sum(E.std_mean(a)), ([1.0],), [[nan]]),
    ("var_mean of no element", lambda a: sum(E.var_mean(a)), ([],), [[]]),
]


@pytest.mark.parametrize("fn, inputs, expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_gradient_matches_pytorchs_convention(fn, inputs, expected):
    got = grads(fn, *inputs)
    expected = expected if isinstance(expected, list) and len(expected) == len(inputs) else [expected]
    assert same(got, expected), got


# -- which results require grad ---------------------------------------------------------------

def test_unique_values_require_grad_and_backward_raises_as_pytorchs():
    a = E.tensor([[1.0, 2.0], [1.0, 2.0]]).requires_grad_()
    for result, node, op_name in [(E.unique(a), "Unique2Backward0", "_unique2"),
                                  (E.unique(a, dim=0), "UniqueDimBackward0", "unique_dim"),
                                  (E.unique_consecutive(a), "UniqueConsecutiveBackward0", "unique_consecutive")]:
        assert result.requires_grad and result.grad_fn.name() == node
        with pytest.raises(RuntimeError, match=f"the derivative for '{op_name}' is not implemented."):
            result.sum().backward()
    values, inverse, counts = E.unique(a, return_inverse=True, return_counts=True)
    assert [values.requires_grad, inverse.requires_grad, counts.requires_grad] == [True, False, False]
    assert not E.unique(a.detach()).requires_grad


def test_vector_norm_of_order_0_requires_grad_and_gives_no_gradient():
    b = E.tensor([[0.0, nan], [inf, -0.0]], dtype=E.float64).requires_grad_()
    count = E.linalg.vector_norm(b, 0)
    assert count.item() == 2.0 and count.requires_grad
    assert count.grad_fn.name() == "LinalgVectorNormBackward0"
    count.backward()
    assert b.grad is None


def test_matrix_power_0_requires_grad_with_a_zero_gradient():
    c = E.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=E.float64).requires_grad_()
    identity = E.linalg.matrix_power(c, 0)
    assert identity.tolist() == [[1.0, 0.0], [0.0, 1.0]] and identity.grad_fn.name() == "CopyBackwards"
    identity.sum().backward()
    assert c.grad.tolist() == [[0.0, 0.0], [0.0, 0.0]]


def test_an_operand_no_gradient_reads_is_not_saved():
    """PyTorch saves what the formulas of the inputs needing a gradient read: after
    ``y = v * 0.5`` (or ``/ 2``, or times a constant tensor) ``v`` may be written in place,
    as differentiable-physics loops do (``velocities[0] = 0`` after using them)."""
    w = E.ones(2, requires_grad=True)
    v = w * 3.0
    y = v * 0.5 + v / 2.0 + v * E.tensor([1.0, 2.0])
    v[0] = 0.0  # v itself is not read by any of the three gradients
    y.sum().backward()
    assert w.grad.tolist() == [3.0 * (0.5 + 0.5 + 1.0), 3.0 * (0.5 + 0.5 + 2.0)]
    a = E.ones(2, requires_grad=True)
    b = E.ones(2, requires_grad=True)
    z = (a * 2.0) * b  # both factors need a gradient: each saves the other
    c = a * 2.0
    z2 = c * b
    c.mul_(3.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z2.sum().backward()
    z.sum().backward()
    assert b.grad.tolist() == [2.0, 2.0]
