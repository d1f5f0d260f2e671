"""Seeding and Generator objects: the same seed gives the same numbers for every sampler,
generators are independent, PyTorch's seed values and overflow errors, get/set_rng_state
and generator state round trips, pickling, and drawing across fork() (another thread
holding the generator's lock, the parent's block threads)."""
import copy
import os
import pickle
import threading
import time
import warnings

import numpy as np
import pytest

import ember_tensor as torch
from random_cases import gen, values


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


def test_randn_in_a_forked_child_does_not_wait_for_the_parents_threads():
    import multiprocessing

    torch.randn(300_000)  # the parent's block threads exist now
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(1) as pool:
        shape = pool.apply_async(_randn_shape).get(timeout=60)
    assert shape == (300_000,)


def _randn_shape():
    return tuple(torch.randn(300_000).shape)
