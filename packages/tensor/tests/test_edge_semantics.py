"""Forward results at the edges where PyTorch has a convention (issue 21): NaN, signed
zeros, empty and 0-d tensors. Expected values are PyTorch 2.13's, written out literally."""
import math

import pytest

import ember_tensor as E

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
