"""Forward results at the edges where PyTorch has a convention (issue 21): NaN, signed
zeros, empty and 0-d tensors. Expected values are PyTorch 2.13's, written out literally."""
import math

import numpy as np

import pytest

import ember_tensor as E
from cuda_guard import DEVICES

nan, inf = math.nan, math.inf


def test_relu_keeps_nan_and_minus_zero_and_gives_positive_zero_for_negatives():
    # PyTorch's clamp_min(x, 0): -inf and -1 give +0; NaN and -0. pass through.
    for dtype in (E.float64, E.float32, E.float16, E.bfloat16):
        out = E.tensor([nan, -inf, -1.0, -0.0, 2.0], dtype=dtype).relu()
        values = out.tolist()
        assert math.isnan(values[0]) and values[1:] == [0.0, 0.0, 0.0, 2.0]
        assert [math.copysign(1, v) for v in values[1:]] == [1, 1, -1, 1]
    assert E.tensor([-3, 2]).relu().tolist() == [0, 2]
    inplace = E.tensor([-1.0, nan])
    inplace.relu_()
    assert str(inplace) == "tensor([0., nan])"
    assert E.tensor(-2.0).relu().item() == 0.0


@pytest.mark.parametrize("device", DEVICES)
def test_abs_of_signed_zeros_and_nan_is_positive(device):
    # PyTorch's fabs: +0. for both zeros, a NaN stays NaN with its sign cleared.
    for dtype in (E.float64, E.float32, E.float16):
        out = E.tensor([-0.0, 0.0, -2.5, nan, -inf], dtype=dtype, device=device).abs().tolist()
        assert out[:3] == [0.0, 0.0, 2.5] and math.isnan(out[3]) and out[4] == inf
        assert [math.copysign(1, v) for v in out] == [1, 1, 1, 1, 1]
    assert E.tensor([-3, 0, 4], device=device).abs().tolist() == [3, 0, 4]


@pytest.mark.parametrize("device", DEVICES)
def test_maximum_minimum_and_clamp_keep_the_first_operand_on_signed_zero_ties(device):
    # PyTorch's kernels use std::max / std::min: on a tie the first operand is returned.
    def signs(t):
        return [math.copysign(1, v) for v in t.tolist()]

    a = E.tensor([-0.0, 0.0], device=device)
    b = E.tensor([0.0, -0.0], device=device)
    assert signs(E.maximum(a, b)) == [-1, 1] and signs(E.minimum(a, b)) == [-1, 1]
    assert signs(a.clamp(min=0.0)) == [-1, 1] and signs(b.clamp(max=-0.0)) == [1, -1]
    assert signs(E.tensor([-0.0, 0.0, 7.0], device=device).clamp(0, 6)) == [-1, 1, 1]
    assert math.isnan(E.maximum(E.tensor([nan], device=device), E.tensor([1.0], device=device)).item())


def test_topk_of_a_0d_tensor_returns_its_value_for_k_0_and_1():
    for k in (0, 1):
        values, indices = E.topk(E.tensor(1.5), k)
        assert values.shape == () and values.item() == 1.5
        assert indices.shape == () and indices.item() == 0 and indices.dtype == E.int64


def test_nanmedian_of_an_empty_tensor_is_medians_fill():
    assert E.tensor([], dtype=E.int64).nanmedian().item() == -9223372036854775808
    assert E.tensor([], dtype=E.int32).nanmedian().item() == -2147483648
    assert math.isnan(E.tensor([]).nanmedian().item())


def test_solve_refuses_a_singular_a_even_with_nothing_to_solve():
    singular = E.tensor([[1.0, 2.0], [2.0, 4.0]])
    for rhs in (E.zeros(0, 2, 3), E.zeros(2, 0)):
        with pytest.raises(RuntimeError, match="The solver failed because the input matrix is singular."):
            E.linalg.solve(singular, rhs)
    assert E.linalg.solve(E.tensor([[1.0, 2.0], [2.0, 5.0]]), E.zeros(0, 2, 3)).shape == (0, 2, 3)
    assert E.linalg.solve(E.zeros(0, 2, 2), E.zeros(2, 3)).shape == (0, 2, 3)


def test_outer_promotes_mixed_dtypes_and_cross_refuses_them():
    result = E.outer(E.tensor([1, 2]), E.tensor([1.0, 2.0]))
    assert result.dtype == E.float32 and result.tolist() == [[1.0, 2.0], [2.0, 4.0]]
    assert E.outer(E.tensor([1.0, 2.0]), E.tensor([1.0], dtype=E.float64)).dtype == E.float64
    with pytest.raises(RuntimeError, match="expected scalar type Long but found Float"):
        E.linalg.cross(E.tensor([1, 2, 3]), E.tensor([1.0, 2.0, 3.0]))
    with pytest.raises(RuntimeError, match="expected scalar type Float but found Double"):
        E.cross(E.tensor([1.0, 2.0, 3.0]), E.tensor([1.0, 2.0, 3.0], dtype=E.float64), dim=0)


def test_unflatten_refuses_empty_sizes():
    for n in (3, 1):
        with pytest.raises(RuntimeError, match="unflatten: sizes must be non-empty"):
            E.zeros(n).unflatten(0, ())


def test_products_over_empty_vectors_are_zero():
    empty = E.tensor([])
    assert E.inner(empty, empty).shape == () and E.inner(empty, empty).item() == 0.0
    assert E.dot(empty, empty).item() == 0.0
    assert E.tensordot(empty, empty, 1).item() == 0.0
    assert E.tensordot(E.zeros(2, 0), E.zeros(0, 3), 1).tolist() == [[0.0] * 3] * 2


def test_matrix_norms_of_positive_order_of_empty_matrices_are_zero():
    for ord_ in ("fro", "nuc", 1, 2, inf):
        for shape in ((0, 0), (2, 0, 0), (0, 3), (3, 0)):
            result = E.linalg.matrix_norm(E.zeros(*shape), ord_)
            assert result.shape == shape[:-2] and not result.any().item(), (ord_, shape)
        assert E.linalg.matrix_norm(E.zeros(2, 0, 0), ord_, keepdim=True).shape == (2, 1, 1)


def test_mT_of_a_0d_tensor_is_the_tensor_with_a_warning():
    x = E.tensor(1.5)
    with pytest.warns(UserWarning, match="Tensor.mT is deprecated on 0-D tensors"):
        assert x.mT is x
    assert x.T.item() == 1.5
    with pytest.raises(RuntimeError, match="tensor.mT is only supported on matrices or batches of matrices. Got 1-D"):
        E.ones(3).mT


@pytest.mark.parametrize("name", ["atan2", "hypot", "logaddexp", "logaddexp2", "maximum", "minimum", "fmax", "fmin",
                                  "igamma", "igammac", "logical_and", "logical_or", "logical_xor"])
def test_binary_ops_without_a_scalar_overload_refuse_python_numbers(name):
    # PyTorch's schema for these has no Scalar form: a number is a TypeError naming the argument.
    x = E.ones(2)
    with pytest.raises(TypeError, match=rf"^{name}\(\): argument 'other' \(position 2\) must be Tensor, not float$"):
        getattr(E, name)(x, 2.0)
    with pytest.raises(TypeError, match=rf"^{name}\(\): argument 'input' \(position 1\) must be Tensor, not int$"):
        getattr(E, name)(2, x)
    if hasattr(E.Tensor, name + "_"):
        with pytest.raises(TypeError, match="must be Tensor, not float"):
            getattr(x, name + "_")(2.0)
    assert getattr(E, name)(x, E.tensor(2.0)).shape == (2,)  # a 0-d tensor is the way to pass one


_EDGES = [-0.0, 0.0, -float("inf"), float("inf"), float("nan"), 1e-30, -1e-30, 3.0, -2.5, 1.1, 7.3e5]


@pytest.mark.parametrize("dtype", [E.float32, E.float64])
@pytest.mark.parametrize("exponent, expected", [
    (1, lambda x: x * 1), (2, lambda x: x * x), (2.0, lambda x: x * x), (3, lambda x: (x * x) * x), (0.5, E.sqrt),
    (-0.5, E.rsqrt), (-1, E.reciprocal), (-2, lambda x: E.reciprocal(x * x))])
def test_pow_by_the_numbers_pytorch_special_cases(dtype, exponent, expected):
    # PyTorch's pow computes these exponents as products, roots and reciprocals (x ** 3 is
    # (x * x) * x, x ** 0.5 is -0 at -0 and NaN at -inf): ember's values are the same.
    x = E.tensor(_EDGES + [float(v) for v in np.linspace(-50, 50, 37)], dtype=dtype)
    want = expected(x)
    for got in (E.pow(x, exponent), x ** exponent, x.clone().pow_(exponent),
                E.pow(x, exponent, out=E.empty(3, dtype=dtype))):
        assert got.dtype is dtype
        np.testing.assert_array_equal(got.numpy(), want.numpy())
        assert (np.signbit(got.numpy()) == np.signbit(want.numpy())).all()
    torch = pytest.importorskip("torch")
    theirs = torch.pow(torch.tensor(x.numpy()), exponent).numpy()
    if exponent not in (0.5,) or dtype is E.float64:  # torch's float32 sqrt is not correctly rounded
        np.testing.assert_array_equal(E.pow(x, exponent).numpy(), theirs)
