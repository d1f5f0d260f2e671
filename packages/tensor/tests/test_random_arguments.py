"""Random number generation: seeding, Generator objects, every sampling op's
distribution, keywords and PyTorch's errors.

Values are not PyTorch's (ember draws with NumPy's PCG64), so the tests check
reproducibility and distributions, not numbers. Statistics use seeded generators on
large samples with tolerances of about five standard errors, so they cannot flake.
Error messages are PyTorch 2.13's; where PyTorch is installed the oracle test checks
that it still raises them.
"""
import copy
import os
import pickle
import threading
import time
import warnings

import numpy as np
import pytest

import ember_tensor as torch


def gen(seed=0):
    return torch.Generator().manual_seed(seed)


def values(t):
    return np.asarray(t.detach().numpy() if t.requires_grad else t.numpy(), dtype=np.float64)


# Every random op once, drawing from generator `g` (None: the default generator).
SAMPLERS = {
    "rand": lambda g: torch.rand(3, 4, generator=g),
    "randn": lambda g: torch.randn(5, generator=g),
    "randint": lambda g: torch.randint(0, 100, (6,), generator=g),
    "randperm": lambda g: torch.randperm(10, generator=g),
    "normal": lambda g: torch.normal(torch.zeros(4), torch.ones(4), generator=g),
    "normal_size": lambda g: torch.normal(1., 2., (4,), generator=g),
    "bernoulli": lambda g: torch.bernoulli(torch.full((8,), 0.5), generator=g),
    "multinomial": lambda g: torch.multinomial(torch.ones(10), 5, generator=g),
    "multinomial_replacement": lambda g: torch.multinomial(torch.ones(2, 3), 6, True, generator=g),
    "poisson": lambda g: torch.poisson(torch.full((5,), 4.), g),
    "rand_like": lambda g: torch.rand_like(torch.zeros(3), generator=g),
    "randn_like": lambda g: torch.randn_like(torch.zeros(3), generator=g),
    "randint_like": lambda g: torch.randint_like(torch.zeros(3), 10, generator=g),
    "uniform_": lambda g: torch.empty(4).uniform_(-1, 1, generator=g),
    "normal_": lambda g: torch.empty(4).normal_(generator=g),
    "random_": lambda g: torch.empty(4).random_(0, 1000, generator=g),
    "bernoulli_": lambda g: torch.empty(8).bernoulli_(0.5, generator=g),
    "exponential_": lambda g: torch.empty(4).exponential_(generator=g),
    "geometric_": lambda g: torch.empty(4).geometric_(0.3, generator=g),
    "log_normal_": lambda g: torch.empty(4).log_normal_(generator=g),
    "cauchy_": lambda g: torch.empty(4).cauchy_(generator=g),
}


# -- seeding and generators ------------------------------------------------------------


@pytest.mark.parametrize("name", SAMPLERS)
def test_same_seed_same_numbers(name):
    sample = SAMPLERS[name]
    torch.manual_seed(123)
    first = values(sample(None))
    torch.manual_seed(123)
    np.testing.assert_array_equal(values(sample(None)), first)
    np.testing.assert_array_equal(values(sample(gen(123))), values(sample(gen(123))))


@pytest.mark.parametrize("name", ["rand", "randn", "randint", "randperm", "normal", "uniform_"])
def test_different_seeds_different_numbers(name):
    sample = SAMPLERS[name]
    assert not np.array_equal(values(sample(gen(1))), values(sample(gen(2))))


def test_manual_seed_returns_the_default_generator():
    g = torch.manual_seed(5)
    assert g is torch.default_generator
    assert isinstance(g, torch.Generator)
    assert torch.initial_seed() == g.initial_seed() == 5


def test_a_generator_is_independent_of_the_default_one():
    g = gen(7)
    a = torch.rand(5, generator=g)
    g.manual_seed(7)
    torch.rand(100)  # draws from the default generator do not move g
    np.testing.assert_array_equal(values(torch.rand(5, generator=g)), values(a))


def test_generator_api():
    g = torch.Generator(device="cpu")
    assert g.device == torch.device("cpu")
    assert g.initial_seed() == 67280421310721  # PyTorch's seed of a new Generator
    assert g.manual_seed(3) is g and g.initial_seed() == 3
    new_seed = g.seed()
    assert isinstance(new_seed, int) and g.initial_seed() == new_seed and 0 <= new_seed < 2 ** 64
    assert torch.Generator().manual_seed(1).seed() != torch.Generator().manual_seed(1).seed()
    # two fresh generators give the same stream
    np.testing.assert_array_equal(values(torch.rand(4, generator=torch.Generator())),
                                  values(torch.rand(4, generator=torch.Generator())))
    assert torch.Generator("cuda").device.type == "cuda"


@pytest.mark.parametrize("seed, expected", [(-1, 2 ** 64 - 1), (2 ** 64 - 1, 2 ** 64 - 1),
                                            (-2 ** 63, 2 ** 63), (np.int64(3), 3)])
def test_seed_values_follow_pytorch(seed, expected):
    assert torch.Generator().manual_seed(seed).initial_seed() == expected
    assert torch.manual_seed(seed).initial_seed() == expected


def test_module_manual_seed_takes_int_of_its_argument():
    # torch.manual_seed calls int(seed); Generator.manual_seed wants an integer
    assert torch.manual_seed(1.5).initial_seed() == 1
    assert torch.manual_seed(torch.tensor(3)).initial_seed() == 3
    with pytest.raises(ValueError, match="invalid literal for int"):
        torch.manual_seed("a")
    for bad in (1.5, True):
        with pytest.raises(RuntimeError, match=f"manual_seed expected a long, but got {type(bad).__name__}"):
            torch.Generator().manual_seed(bad)


@pytest.mark.parametrize("seed", [2 ** 64, -2 ** 63 - 1])
def test_seed_overflow(seed):
    with pytest.raises(ValueError, match="Overflow when unpacking long long"):
        torch.manual_seed(seed)


def test_seed_function_reseeds_the_default_generator():
    s = torch.seed()
    assert s == torch.initial_seed()
    assert torch.seed() != s


def test_rng_state_round_trip():
    torch.manual_seed(11)
    torch.rand(3)
    state = torch.get_rng_state()
    assert state.dtype == torch.uint8 and state.dim() == 1
    a, b = values(torch.randn(10)), values(torch.randint(0, 9, (10,)))
    torch.manual_seed(99)
    assert torch.set_rng_state(state) is None
    np.testing.assert_array_equal(values(torch.randn(10)), a)
    np.testing.assert_array_equal(values(torch.randint(0, 9, (10,))), b)
    assert torch.initial_seed() == 11  # the state carries the seed too


def test_generator_state_moves_between_generators():
    g = gen(4)
    torch.rand(7, generator=g)
    h = torch.Generator().set_state(g.get_state())
    assert h.initial_seed() == 4
    np.testing.assert_array_equal(values(torch.randn(6, generator=h)), values(torch.randn(6, generator=g)))
    # the state is a copy: drawing does not change a saved state
    state = g.get_state()
    torch.rand(3, generator=g)
    assert not np.array_equal(state.numpy(), g.get_state().numpy())


def test_generator_pickles_and_copies_with_its_state():
    g = gen(8)
    torch.rand(3, generator=g)
    for clone in (pickle.loads(pickle.dumps(g)), copy.deepcopy(g)):
        np.testing.assert_array_equal(values(torch.rand(4, generator=clone)),
                                      values(torch.rand(4, generator=copy.deepcopy(g))))
    assert pickle.loads(pickle.dumps(g)).initial_seed() == 8


@pytest.mark.parametrize("state, error, message", [
    (lambda: torch.zeros(45), TypeError, "RNG state must be a torch.ByteTensor"),
    (lambda: [1], TypeError, "expected a torch.ByteTensor, but got list"),
    (lambda: torch.zeros(3, dtype=torch.uint8), RuntimeError,
     "generator state of size 45 but found the input RNG state size to be 3"),
])
def test_bad_rng_state(state, error, message):
    with pytest.raises(error, match=message):
        torch.set_rng_state(state())
    with pytest.raises(error, match=message):
        torch.Generator().set_state(state())


def test_generator_argument_checks():
    with pytest.raises(TypeError, match="must be torch.Generator, not int"):
        torch.rand(2, generator=1)
    with pytest.raises(RuntimeError, match="Expected a 'cpu' device type for generator but found 'cuda'"):
        torch.rand(2, generator=torch.Generator("cuda"))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_fork_while_another_thread_draws_does_not_deadlock_the_child():
    # A thread holds the default generator's lock across the fork; without the
    # at-fork handlers the child would inherit a held lock and hang on its first draw.
    torch.manual_seed(21)
    holding = threading.Event()

    def hold_lock():
        with torch.default_generator._lock:
            holding.set()
            time.sleep(0.2)

    thread = threading.Thread(target=hold_lock)
    thread.start()
    holding.wait()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # fork with threads (3.12+)
        pid = os.fork()
    if pid == 0:
        try:
            child = values(torch.rand(3))
            os._exit(0 if child.shape == (3,) else 1)
        finally:
            os._exit(2)
    thread.join()
    parent = values(torch.rand(3))
    deadline = time.time() + 20
    while time.time() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        time.sleep(0.02)
    else:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        pytest.fail("the forked child hung drawing random numbers")
    assert os.waitstatus_to_exitcode(status) == 0
    assert parent.shape == (3,)


# -- distributions ---------------------------------------------------------------------------

N = 200_000


def assert_close(actual, expected, tol):
    assert abs(actual - expected) < tol, f"{actual} is not within {tol} of {expected}"


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


# -- in-place samplers -------------------------------------------------------------------------


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


# -- keywords, shapes, out=, methods, dispatch -----------------------------------------------


@pytest.mark.parametrize("fn", [torch.rand, torch.randn])
def test_factory_keywords(fn):
    assert fn(2, 3).shape == fn((2, 3)).shape == fn([2, 3]).shape == fn(torch.Size([2, 3])).shape
    assert fn(size=(2, 3)).shape == (2, 3)
    assert fn(()).shape == ()
    assert fn(0, 3).shape == (0, 3)
    assert fn(2).dtype == torch.float32
    assert fn(2, dtype=torch.float64).dtype == torch.float64
    assert fn(2, device="cpu").device == torch.device("cpu")
    x = fn(2, 3, requires_grad=True)
    assert x.requires_grad and x.is_leaf and x.grad_fn is None
    assert not fn(2).requires_grad


def test_factories_follow_the_default_dtype():
    torch.set_default_dtype(torch.float64)
    try:
        for x in (torch.rand(2), torch.randn(2), torch.normal(0., 1., (2,))):
            assert x.dtype == torch.float64
    finally:
        torch.set_default_dtype(torch.float32)


def test_integer_factories_keywords():
    assert torch.randint(0, 10, (3,), dtype=torch.float32, requires_grad=True).requires_grad
    assert torch.randint(0, 2, (3,), dtype=torch.bool).dtype == torch.bool
    assert torch.randperm(4, dtype=torch.float64, requires_grad=True).requires_grad
    with pytest.raises(RuntimeError, match="floating point"):
        torch.randint(0, 10, (3,), requires_grad=True)


def test_out_keyword():
    out = torch.empty(1)
    assert torch.rand(2, 3, out=out) is out and out.shape == (2, 3)
    out = torch.empty(2, dtype=torch.float64)
    assert torch.randn(2, out=out).dtype == torch.float64
    out = torch.empty(0, dtype=torch.int64)
    assert torch.randint(0, 5, (4,), out=out) is out and out.shape == (4,)
    assert torch.randperm(5, out=out) is out and sorted(out.tolist()) == [0, 1, 2, 3, 4]
    assert torch.multinomial(torch.ones(3), 2, out=out) is out and out.shape == (2,)
    out = torch.empty(3)
    assert torch.normal(torch.zeros(3), 1., out=out) is out
    with pytest.raises(RuntimeError, match=r"dtype Half does not match dtype of out parameter \(Double\)"):
        torch.randint(0, 10, (2,), dtype=torch.float16, out=torch.empty(2, dtype=torch.float64))


def test_methods_match_pytorch():
    for name in ("uniform_", "normal_", "random_", "bernoulli_", "exponential_", "geometric_",
                 "log_normal_", "cauchy_", "bernoulli", "multinomial"):
        assert hasattr(torch.Tensor, name), name
    for name in ("rand", "randn", "randint", "randperm", "normal", "poisson", "rand_like",
                 "randn_like", "randint_like"):
        assert not hasattr(torch.Tensor, name), name


def test_ops_go_through_the_dispatcher():
    ops = torch.operators()
    assert ops["uniform_"].inplace and ops["bernoulli_"].inplace and not ops["rand"].inplace
    seen = []

    def record(op, args, kwargs, redispatch):
        seen.append(op.name)
        return redispatch(op, args, kwargs)

    torch.register_wrapper(record)
    try:
        torch.rand(2)
        torch.zeros(2).normal_()
        torch.multinomial(torch.ones(2), 1)
    finally:
        torch.unregister_wrapper(record)
    assert seen[0] == "rand" and "normal_" in seen and "multinomial" in seen


# -- devices ---------------------------------------------------------------------------------------
# CUDA tensors are sampled on the device by another engine (Philox): test_cuda_random.py
# checks them (reproducible per seed, independent calls, moments, bounds, no host copies).


# -- PyTorch's errors --------------------------------------------------------------------------------

# (code run with `t` bound to the framework, exception type, PyTorch 2.13's message)
ERRORS = [
    ("t.randint(5, 5, (3,))", RuntimeError,
     "random_ expects 'from' to be less than 'to', but got from=5 >= to=5"),
    ("t.randint(3, 5)", TypeError, "randint(): argument 'size' (position 2) must be tuple of ints, not int"),
    ("t.randint(2.5, (3,))", TypeError, "randint(): argument 'high' (position 1) must be int, not float"),
    ("t.randint(0, 2**63, (3,))", ValueError, "Overflow when unpacking long long"),
    ("t.randint(0, 300, (3,), dtype=t.uint8)", RuntimeError, "to - 1 is out of bounds for unsigned char"),
    ("t.randint(-1, 3, (3,), dtype=t.uint8)", RuntimeError, "from is out of bounds for unsigned char"),
    ("t.randint(0, 3, (3,), dtype=t.bool)", RuntimeError, "to - 1 is out of bounds for bool"),
    ("t.randint(0, 2**17, (3,), dtype=t.float16)", RuntimeError, "to - 1 is out of bounds for c10::Half"),
    ("t.zeros(3, dtype=t.int16).random_(0, 2**16)", RuntimeError, "to - 1 is out of bounds for short int"),
    ("t.zeros(3, dtype=t.int8).random_(-200, 5)", RuntimeError, "from is out of bounds for signed char"),
    ("t.zeros(3).random_(0)", RuntimeError,
     "random_ expects 'from' to be less than 'to', but got from=0 >= to=0"),
    ("t.zeros(3).random_(5, 3)", RuntimeError,
     "random_ expects 'from' to be less than 'to', but got from=5 >= to=3"),
    ("t.rand(2, dtype=t.int64)", NotImplementedError, "\"check_uniform_bounds\" not implemented for 'Long'"),
    ("t.rand(2, dtype=t.bool)", NotImplementedError, "\"check_uniform_bounds\" not implemented for 'Bool'"),
    ("t.randn(2, dtype=t.int64)", NotImplementedError, "\"normal_kernel_cpu\" not implemented for 'Long'"),
    ("t.rand_like(t.zeros(2, dtype=t.int64))", NotImplementedError,
     "\"check_uniform_bounds\" not implemented for 'Long'"),
    ("t.rand(2, -1)", RuntimeError, "Trying to create tensor with negative dimension -1: [2, -1]"),
    ("t.randperm(-1)", RuntimeError, "Trying to create tensor with negative dimension -1: [-1]"),
    ("t.randperm(5, dtype=t.bool)", NotImplementedError, "\"randperm\" not implemented for 'Bool'"),
    ("t.randperm(257, dtype=t.uint8)", RuntimeError,
     "value cannot be converted to type uint8_t without overflow"),
    ("t.randperm(2050, dtype=t.float16)", RuntimeError, "n cannot be greater than 2049 for Half type."),
    ("t.randperm(5.0)", TypeError, "randperm(): argument 'n' (position 1) must be int, not float"),
    ("t.normal(0., -1., (3,))", RuntimeError, "normal expects std >= 0.0, but found std -1"),
    ("t.normal(t.zeros(3), -1.)", RuntimeError, "normal expects std >= 0.0, but found std -1"),
    ("t.normal(t.zeros(3), float('nan'))", RuntimeError, "normal expects std >= 0.0, but found std nan"),
    ("t.normal(t.zeros(3), t.tensor([1., -1., 1.]))", RuntimeError,
     "normal expects all elements of std >= 0.0"),
    ("t.normal(0., t.tensor([1., -1., 1.]))", RuntimeError, "normal expects all elements of std >= 0.0"),
    ("t.normal(t.zeros(3, dtype=t.int64), 1.)", NotImplementedError,
     "\"normal_kernel_cpu\" not implemented for 'Long'"),
    ("t.normal(t.zeros(3), t.ones(2))", RuntimeError,
     "The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 0"),
    ("t.normal(0., 1.)", TypeError, "normal() received an invalid combination of arguments"),
    ("t.zeros(3).normal_(0, -1)", RuntimeError, "normal expects std >= 0.0, but found std -1"),
    ("t.zeros(3, dtype=t.int64).normal_()", NotImplementedError,
     "\"normal_kernel_cpu\" not implemented for 'Long'"),
    ("t.bernoulli(t.tensor([0., 1.5]))", RuntimeError,
     "Expected p_in >= 0 && p_in <= 1 to be true, but got false."),
    ("t.bernoulli(t.tensor([0., float('nan')]))", RuntimeError,
     "Expected p_in >= 0 && p_in <= 1 to be true, but got false."),
    ("t.bernoulli(t.tensor([0, 1]))", NotImplementedError,
     "\"bernoulli_tensor_cpu_p_\" not implemented for 'Long'"),
    ("t.bernoulli(t.tensor([0., 1.]), 1.5)", RuntimeError,
     "bernoulli_ expects p to be in [0, 1], but got p=1.5"),
    ("t.zeros(3).bernoulli_(-0.5)", RuntimeError, "bernoulli_ expects p to be in [0, 1], but got p=-0.5"),
    ("t.zeros(3).bernoulli_(t.tensor([0., 1., 2.]))", RuntimeError,
     "Expected p_in >= 0 && p_in <= 1 to be true, but got false."),
    ("t.zeros(3).bernoulli_(t.tensor([1., 0.]))", RuntimeError,
     "The expanded size of the tensor (3) must match the existing size (2) at non-singleton dimension 0."),
    ("t.multinomial(t.tensor([1., 2.]), 3)", RuntimeError,
     "cannot sample n_sample > prob_dist.size(-1) samples without replacement"),
    ("t.multinomial(t.tensor([1., -2.]), 1)", RuntimeError,
     "probability tensor contains either `inf`, `nan` or element < 0"),
    ("t.multinomial(t.tensor([1., float('nan')]), 1)", RuntimeError,
     "probability tensor contains either `inf`, `nan` or element < 0"),
    ("t.multinomial(t.tensor([1., float('inf')]), 2)", RuntimeError,
     "probability tensor contains either `inf`, `nan` or element < 0"),
    ("t.multinomial(t.tensor([[1., 1.], [0., 0.]]), 1)", RuntimeError,
     "invalid multinomial distribution (sum of probabilities <= 0)"),
    ("t.multinomial(t.tensor([1., -2.]), 2, True)", RuntimeError,
     "invalid multinomial distribution (encountering probability entry < 0)"),
    ("t.multinomial(t.tensor([1., float('inf')]), 2, True)", RuntimeError,
     "invalid multinomial distribution (encountering probability entry = infinity or NaN)"),
    ("t.multinomial(t.tensor([0., 0.]), 2, True)", RuntimeError,
     "invalid multinomial distribution (sum of probabilities <= 0)"),
    ("t.multinomial(t.tensor([1, 2]), 1)", RuntimeError,
     "multinomial only supports floating-point dtypes for input, got: Long"),
    ("t.multinomial(t.tensor([1., 2.]), 0)", RuntimeError, "cannot sample n_sample <= 0 samples"),
    ("t.multinomial(t.tensor(1.), 1)", RuntimeError, "prob_dist must be 1 or 2 dim"),
    ("t.multinomial(t.ones(2, 2, 2), 1)", RuntimeError, "prob_dist must be 1 or 2 dim"),
    ("t.multinomial(t.ones(3), 2.0)", TypeError,
     "multinomial(): argument 'num_samples' (position 2) must be int, not float"),
    ("t.multinomial(t.tensor([1., 2.]), 1, out=t.empty(0))", RuntimeError,
     "multinomial expects Long tensor out, got: Float"),
    ("t.poisson(t.tensor([1., -2.]))", RuntimeError,
     "invalid Poisson rate, expected rate to be non-negative"),
    ("t.poisson(t.tensor([1, 2]))", NotImplementedError, "\"poisson_cpu\" not implemented for 'Long'"),
    ("t.randint_like(t.zeros(2), 5, 5)", RuntimeError,
     "random_ expects 'from' to be less than 'to', but got from=5 >= to=5"),
    ("t.zeros(3).uniform_(2, 1)", RuntimeError,
     "uniform_ expects to return a [from, to) range, but found from=2 > to=1"),
    ("t.zeros(3).uniform_(0, float('inf'))", RuntimeError, "to is out of bounds for float"),
    ("t.zeros(3).uniform_(float('nan'), 1)", RuntimeError, "from is out of bounds for float"),
    ("t.zeros(3).uniform_(-3.4e38, 3.4e38)", RuntimeError,
     "uniform_ expects to-from <= std::numeric_limits<Float>::max(), but found to=3.4e+38 and "
     "from=-3.4e+38 which result in to-from to exceed the limit"),
    ("t.zeros(3, dtype=t.int64).uniform_()", NotImplementedError,
     "\"check_uniform_bounds\" not implemented for 'Long'"),
    ("t.zeros(3).exponential_(0)", RuntimeError, "exponential_ expects lambda > 0.0, but found lambda=0"),
    ("t.zeros(3, dtype=t.int32).exponential_()", RuntimeError,
     "Exponential distribution is a continuous probability distribution. dtype must be a floating "
     "point but you specified Int"),
    ("t.zeros(3).geometric_(1)", RuntimeError, "geometric_ expects p to be in (0, 1), but got p=1"),
    ("t.zeros(3).geometric_(float('nan'))", RuntimeError,
     "geometric_ expects p to be in (0, 1), but got p=nan"),
    ("t.zeros(3, dtype=t.bool).geometric_(0.5)", NotImplementedError,
     "\"geometric_cpu\" not implemented for 'Bool'"),
    ("t.zeros(3).log_normal_(0, 0)", RuntimeError, "log_normal_ expects std > 0.0, but found std=0"),
    ("t.zeros(3, dtype=t.int64).log_normal_()", NotImplementedError,
     "\"log_normal_cpu\" not implemented for 'Long'"),
    ("t.zeros(3).cauchy_(0, -1)", RuntimeError, "cauchy_ expects sigma > 0.0, but found sigma=-1"),
    ("t.zeros(3, dtype=t.int64).cauchy_()", RuntimeError,
     "Cauchy distribution is a continuous probability distribution. dtype must be a floating point "
     "but you specified long int"),
    ("t.set_rng_state(t.zeros(3))", TypeError, "RNG state must be a torch.ByteTensor"),
    ("t.manual_seed(2**64)", ValueError, "Overflow when unpacking long long"),
]


@pytest.mark.parametrize("code, error, message", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_match_pytorch(code, error, message):
    with pytest.raises(error) as raised:
        eval(code, {"t": torch})
    assert str(raised.value).startswith(message)


@pytest.mark.parametrize("code, error, message", ERRORS, ids=[e[0] for e in ERRORS])
def test_pytorch_still_raises_these_errors(code, error, message):
    real_torch = pytest.importorskip("torch")
    with pytest.raises(error) as raised:
        eval(code, {"t": real_torch})
    assert str(raised.value).startswith(message)


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


def test_randn_in_a_forked_child_does_not_wait_for_the_parents_threads():
    import multiprocessing

    torch.randn(300_000)  # the parent's block threads exist now
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(1) as pool:
        shape = pool.apply_async(_randn_shape).get(timeout=60)
    assert shape == (300_000,)


def _randn_shape():
    return tuple(torch.randn(300_000).shape)
