"""In-place samplers (uniform_, normal_, random_, bernoulli_, exponential_, geometric_,
log_normal_, cauchy_): their distributions and bounds, integer fills, and that each
returns self, bumps the version and fills only its (non-contiguous or 0-d) view."""
import numpy as np
import pytest

import ember_tensor as torch
from random_cases import N, assert_close, gen, values


def test_uniform_():
    v = values(torch.empty(N).uniform_(-2, 6, generator=gen(11)))
    assert v.min() >= -2 and v.max() < 6
    assert_close(v.mean(), 2, 0.05)
    assert torch.empty(3).uniform_(**{"from": 4, "to": 4}).tolist() == [4., 4., 4.]
    assert min(torch.empty(100).uniform_(to=0.5).tolist()) >= 0


def test_normal_():
    v = values(torch.empty(N, dtype=torch.float64).normal_(-1, 3, generator=gen(12)))
    assert_close(v.mean(), -1, 0.04)
    assert_close(v.std(), 3, 0.04)


@pytest.mark.parametrize("dtype, low, high", [
    (torch.int8, 0, 127), (torch.uint8, 0, 255), (torch.bool, 0, 1),
    (torch.float16, 0, 2 ** 11), (torch.float32, 0, 2 ** 24), (torch.int64, 0, 2 ** 63 - 1),
])
def test_random_without_bounds_spans_the_dtype(dtype, low, high):
    v = torch.empty(N // 10, dtype=dtype).random_(generator=gen(13)).numpy().astype(np.float64)
    assert v.min() >= low and v.max() <= high
    assert v.max() > low + (high - low) * 0.9


def test_random_bounds_forms():
    assert set(torch.empty(1000).random_(5).tolist()) == {0., 1., 2., 3., 4.}
    assert set(torch.empty(1000).random_(2, 5).tolist()) == {2., 3., 4.}
    assert set(torch.empty(1000).random_(to=3).tolist()) == {0., 1., 2.}
    assert set(torch.empty(1000).random_(**{"from": -2, "to": 0}).tolist()) == {-2., -1.}
    x = torch.empty(1000, dtype=torch.int8).random_(100, None)
    assert set(x.tolist()) <= set(range(100, 128))


def test_random_warns_beyond_float_precision():
    with pytest.warns(UserWarning, match=r"to - 1 is out of bounds \[-\(2\^24\), 2\^24\]"):
        torch.empty(3).random_(0, 2 ** 25)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_exponential_geometric_log_normal_cauchy(dtype):
    g = gen(14)
    v = values(torch.empty(N, dtype=dtype).exponential_(4., generator=g))
    assert v.min() >= 0
    assert_close(v.mean(), 0.25, 0.005)
    v = values(torch.empty(N, dtype=dtype).geometric_(0.25, generator=g))
    assert v.min() >= 1 and (v == np.round(v)).all()
    assert_close(v.mean(), 4, 0.06)
    v = values(torch.empty(N, dtype=dtype).log_normal_(0.5, 0.25, generator=g))
    assert_close(np.log(v).mean(), 0.5, 0.005)
    assert_close(np.log(v).std(), 0.25, 0.005)
    v = values(torch.empty(N, dtype=dtype).cauchy_(2., 3., generator=g))
    q1, median, q3 = np.percentile(v, [25, 50, 75])
    assert_close(median, 2, 0.05)
    assert_close(q3 - q1, 6, 0.15)  # the interquartile range of Cauchy(m, s) is 2s


def test_geometric_fills_integer_tensors():
    x = torch.empty(100, dtype=torch.int64).geometric_(0.5)
    assert x.dtype == torch.int64 and min(x.tolist()) >= 1


IN_PLACE = {
    "uniform_": lambda x: x.uniform_(),
    "normal_": lambda x: x.normal_(),
    "random_": lambda x: x.random_(0, 10),
    "bernoulli_": lambda x: x.bernoulli_(0.5),
    "bernoulli_tensor": lambda x: x.bernoulli_(torch.full(tuple(x.shape[-1:]), 0.5)),  # broadcast
    "exponential_": lambda x: x.exponential_(),
    "geometric_": lambda x: x.geometric_(0.5),
    "log_normal_": lambda x: x.log_normal_(),
    "cauchy_": lambda x: x.cauchy_(),
}


@pytest.mark.parametrize("name", IN_PLACE)
def test_in_place_returns_self_and_bumps_the_version(name):
    x = torch.zeros(2, 3)
    view = x[0]
    before = x._version
    assert IN_PLACE[name](x) is x
    assert x._version == view._version == before + 1


@pytest.mark.parametrize("name", IN_PLACE)
def test_in_place_on_a_non_contiguous_view_fills_only_the_view(name):
    base = torch.full((4, 6), -7.)
    view = base.t()[::2]  # shape (3, 4): every other column of base, transposed
    IN_PLACE[name](view)
    b = base.numpy()
    assert (b[:, 1::2] == -7).all()
    assert (b[:, ::2] != -7).all()


@pytest.mark.parametrize("name", IN_PLACE)
def test_in_place_on_a_0d_tensor(name):
    x = torch.tensor(0.5)
    assert IN_PLACE[name](x) is x and x.shape == ()
