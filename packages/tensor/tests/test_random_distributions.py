"""Every sampling op's distribution: rand, randn (float32's Box-Muller blocks whatever the
thread count), randint, randperm, normal's overloads, bernoulli, multinomial, poisson and
the *_like functions.

Values are not PyTorch's (ember draws with NumPy's PCG64), so the tests check
distributions, not numbers: seeded generators, large samples, tolerances of about five
standard errors, so they cannot flake."""
import numpy as np
import pytest

import ember_tensor as torch
from random_cases import N, assert_close, gen, values


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
def test_rand_is_uniform_in_zero_one(dtype):
    x = torch.rand(N, dtype=dtype, generator=gen(1))
    assert x.dtype is dtype
    v = values(x)
    assert v.min() >= 0 and v.max() < 1  # half and bfloat16 never round up to 1
    assert_close(v.mean(), 0.5, 0.01)
    assert_close(v.var(), 1 / 12, 0.005)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16])
def test_randn_is_standard_normal(dtype):
    v = values(torch.randn(N, dtype=dtype, generator=gen(2)))
    assert_close(v.mean(), 0, 0.015)
    assert_close(v.std(), 1, 0.015)


def test_randint_covers_its_range_only():
    v = values(torch.randint(-3, 4, (N,), generator=gen(3)))
    assert set(np.unique(v)) == set(range(-3, 4))
    v = values(torch.randint(5, (1000,), generator=gen(3)))
    assert set(np.unique(v)) == set(range(5))


def test_randint_signatures():
    assert torch.randint(5, (3,)).shape == (3,)
    assert torch.randint(1, 5, (2, 3)).shape == (2, 3)
    assert torch.randint(high=3, size=(2,)).shape == (2,)
    x = torch.randint(low=7, high=8, size=[4])
    assert x.dtype == torch.int64 and x.tolist() == [7, 7, 7, 7]
    assert torch.randint(3, torch.Size([2, 2])).shape == (2, 2)
    assert torch.randint(3, ()).shape == ()
    assert torch.randint(torch.tensor(3), (2,)).shape == (2,)
    # the bound positional and the size by keyword (pytorch/examples mnist_forward_forward)
    x = torch.randint(9, size=(50,))
    assert x.shape == (50,) and 0 <= x.min().item() and x.max().item() < 9
    assert torch.randint(1, dtype=torch.int32, size=(2,)).tolist() == [0, 0]


def test_randint_draws_the_stream_of_random_():
    a = torch.randint(0, 10, (8,), generator=gen(5))
    b = torch.empty(8, dtype=torch.int64).random_(0, 10, generator=gen(5))
    assert a.tolist() == b.tolist()


@pytest.mark.parametrize("n", [0, 1, 7, 1000])
def test_randperm_is_a_permutation(n):
    p = torch.randperm(n, generator=gen(n))
    assert p.dtype == torch.int64 and p.shape == (n,)
    assert sorted(p.tolist()) == list(range(n))


def test_randperm_dtype():
    p = torch.randperm(6, dtype=torch.float32)
    assert p.dtype == torch.float32 and sorted(p.tolist()) == [0., 1., 2., 3., 4., 5.]
    assert torch.randperm(256, dtype=torch.uint8).shape == (256,)


def test_normal_overloads_shapes_and_dtypes():
    mean, std = torch.tensor([0., 10.]), torch.tensor([1., 0.1])
    assert torch.normal(mean, std).shape == (2,)
    assert torch.normal(torch.zeros(3), torch.ones(2, 3)).shape == (2, 3)
    assert torch.normal(mean).shape == (2,)
    assert torch.normal(mean, 2.).shape == (2,)
    assert torch.normal(mean=1., std=std).shape == (2,)
    assert torch.normal(0., 1., (2, 3)).shape == (2, 3)
    assert torch.normal(0, 1, size=(4,)).dtype == torch.float32
    assert torch.normal(0., 1., (2,), dtype=torch.float64).dtype == torch.float64
    assert torch.normal(torch.zeros(2, dtype=torch.float64), torch.ones(2)).dtype == torch.float64
    assert torch.normal(torch.zeros(2), torch.ones(2, dtype=torch.float64)).dtype == torch.float32
    assert torch.normal(0., torch.ones(2, dtype=torch.float64)).dtype == torch.float64
    assert torch.normal(torch.zeros(2), torch.ones(2, dtype=torch.int64)).dtype == torch.float32
    assert torch.normal(torch.tensor(0.), 1.).shape == ()
    x = torch.normal(0., 1., (3,), requires_grad=True)
    assert x.requires_grad and x.is_leaf


def test_normal_uses_each_elements_mean_and_std():
    mean = torch.tensor([[0.], [10.]]).expand(2, N // 2)
    std = torch.tensor([[1.], [0.1]]).expand(2, N // 2)
    v = values(torch.normal(mean, std, generator=gen(6)))
    assert_close(v[0].mean(), 0, 0.02)
    assert_close(v[0].std(), 1, 0.02)
    assert_close(v[1].mean(), 10, 0.002)
    assert_close(v[1].std(), 0.1, 0.002)
    v = values(torch.normal(3., 2., (N,), generator=gen(6)))
    assert_close(v.mean(), 3, 0.03)
    assert_close(v.std(), 2, 0.03)
    np.testing.assert_array_equal(values(torch.normal(5., 0., (3,))), [5., 5., 5.])


def test_bernoulli():
    assert torch.bernoulli(torch.zeros(100)).tolist() == [0.] * 100
    assert torch.bernoulli(torch.ones(100)).tolist() == [1.] * 100
    p = torch.tensor([0., 1., 0.25]).expand(N // 4, 3)  # non-contiguous probabilities
    v = values(torch.bernoulli(p, generator=gen(7)))
    assert (v[:, 0] == 0).all() and (v[:, 1] == 1).all()
    assert_close(v[:, 2].mean(), 0.25, 0.01)
    assert torch.bernoulli(torch.zeros(3, dtype=torch.float64)).dtype == torch.float64
    x = torch.bernoulli(torch.zeros(N // 10, dtype=torch.int64), 0.5, generator=gen(7))
    assert x.dtype == torch.int64 and set(np.unique(values(x))) == {0, 1}
    assert torch.zeros(3).bernoulli(p=1.).tolist() == [1., 1., 1.]
    assert torch.bernoulli(torch.tensor(1.)).tolist() == 1.


def test_bernoulli_in_place_with_tensor_probabilities():
    x = torch.empty(N // 3, 3).bernoulli_(torch.tensor([0., 1., 0.5]), generator=gen(8))
    v = values(x)
    assert (v[:, 0] == 0).all() and (v[:, 1] == 1).all()
    assert_close(v[:, 2].mean(), 0.5, 0.015)
    b = torch.zeros(4, dtype=torch.bool).bernoulli_(1.)
    assert b.tolist() == [True] * 4


def test_multinomial_without_replacement_has_no_duplicates():
    probs = torch.tensor([[1., 0., 2., 3., 0., 4.], [1., 1., 1., 1., 1., 1.]])
    for seed in range(50):
        s = torch.multinomial(probs, 4, generator=gen(seed))
        assert s.dtype == torch.int64 and s.shape == (2, 4)
        first, second = s.tolist()
        assert len(set(first)) == 4 and len(set(second)) == 4
        assert set(first) == {0, 2, 3, 5}  # four non-zero categories: zeros are never drawn
    # with more samples than non-zero categories the zero ones come last
    s = torch.multinomial(torch.tensor([0., 1., 0.]), 3, generator=gen(0)).tolist()
    assert s[0] == 1 and sorted(s) == [0, 1, 2]


def test_multinomial_without_replacement_orders_by_weight():
    # the first draw is a plain draw from the weights
    draws = [torch.multinomial(torch.tensor([1., 3.]), 2, generator=gen(s)).tolist()[0]
             for s in range(400)]
    assert_close(np.mean(draws), 0.75, 0.11)


def test_multinomial_with_replacement_frequencies():
    probs = torch.tensor([[0.1, 0., 0.6, 0.3, 0.], [0., 0., 0., 0., 2.]])
    s = values(torch.multinomial(probs, N // 2, replacement=True, generator=gen(9)))
    counts = np.bincount(s[0].astype(int), minlength=5) / s.shape[1]
    assert counts[1] == 0 and counts[4] == 0
    np.testing.assert_allclose(counts[[0, 2, 3]], [0.1, 0.6, 0.3], atol=0.01)
    assert (s[1] == 4).all()
    one_d = torch.multinomial(torch.tensor([1., 1.]), 10, True)
    assert one_d.shape == (10,) and set(one_d.tolist()) <= {0, 1}


def test_multinomial_single_sample_and_methods():
    s = torch.tensor([[0., 1.], [1., 0.]]).multinomial(1)
    assert s.tolist() == [[1], [0]]
    assert torch.multinomial(torch.tensor([0., 0., 5.], dtype=torch.float64), 1, True).tolist() == [2]
    assert torch.multinomial(torch.ones(0, 3), 2).shape == (0, 2)


def test_poisson():
    rates = torch.tensor([0., 1., 50.]).expand(N // 3, 3)
    v = values(torch.poisson(rates, generator=gen(10)))
    assert (v[:, 0] == 0).all() and (v == np.round(v)).all()
    assert_close(v[:, 1].mean(), 1, 0.02)
    assert_close(v[:, 2].mean(), 50, 0.15)
    assert torch.poisson(torch.ones(2, dtype=torch.float64)).dtype == torch.float64


def test_like_functions():
    x = torch.zeros(2, 3, dtype=torch.float64)
    for fn in (torch.rand_like, torch.randn_like):
        y = fn(x)
        assert y.shape == (2, 3) and y.dtype == torch.float64
        assert fn(x, dtype=torch.float16).dtype == torch.float16
        assert fn(x, requires_grad=True).requires_grad
    assert torch.randint_like(x, 5).dtype == torch.float64
    assert set(torch.randint_like(x, 4, 6).flatten().tolist()) <= {4., 5.}
    assert torch.randint_like(x, high=3, dtype=torch.int32).dtype == torch.int32
    assert torch.randint_like(x, low=1, high=2).flatten().tolist() == [1.] * 6


def test_float32_randn_is_normal_and_independent_of_the_thread_count():
    # Box-Muller over blocks that each have a stream of their own: the numbers depend on
    # the seed only, whether one thread or several fill the blocks.
    import math
    from concurrent.futures import ThreadPoolExecutor
    from ember_tensor._backends.cpu import random as cpu_random

    torch.manual_seed(11)
    parallel = torch.randn(300_000).numpy()
    previous = cpu_random._pool
    cpu_random._pool = ThreadPoolExecutor(1)
    try:
        torch.manual_seed(11)
        serial = torch.randn(300_000).numpy()
    finally:
        cpu_random._pool.shutdown()
        cpu_random._pool = previous
    np.testing.assert_array_equal(parallel, serial)
    x = np.sort(parallel.astype(np.float64))
    cdf = 0.5 * (1 + np.array([math.erf(v / math.sqrt(2)) for v in x]))
    distance = np.abs(np.arange(1, x.size + 1) / x.size - cdf).max()
    assert distance < 1.95 / math.sqrt(x.size)  # Kolmogorov-Smirnov at the 0.1% level
