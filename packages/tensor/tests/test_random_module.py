"""torch.random: the CPU generator's functions under that path, and fork_rng, which puts
the CPU's stream (and the devices' it forks) back after its block, as PyTorch's."""
import warnings

import pytest

import ember_tensor as et
from ember_tensor import random as rng


def test_the_module_holds_pytorchs_names():
    assert {"Generator", "default_generator", "fork_rng", "get_rng_state", "initial_seed", "manual_seed", "seed",
            "set_rng_state"} <= set(dir(rng))
    assert rng.default_generator is et.default_generator
    rng.manual_seed(3)
    assert rng.initial_seed() == 3


def test_fork_rng_restores_the_cpu_stream_even_after_an_error():
    et.manual_seed(0)
    expected = et.rand(4)
    et.manual_seed(0)
    with pytest.raises(KeyError):
        with rng.fork_rng():
            inside = et.rand(4)
            et.rand(100)
            raise KeyError
    assert et.equal(inside, expected)
    assert et.equal(et.rand(4), expected)


def test_fork_rng_disabled_forks_nothing():
    et.manual_seed(0)
    first = et.rand(4)
    et.manual_seed(0)
    with rng.fork_rng(enabled=False):
        et.rand(4)
    assert not et.equal(et.rand(4), first)


def test_fork_rng_refuses_a_device_type_it_has_no_module_for():
    with pytest.raises(RuntimeError, match="torch has no module of `tpu`, you should register a module"):
        with rng.fork_rng(device_type="tpu"):
            pass


@pytest.mark.skipif(not et.cuda.is_available(), reason="no GPU and no CUDA simulator")
def test_fork_rng_restores_the_device_streams_it_forks():
    et.cuda.manual_seed(5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # one device: no warning
        with rng.fork_rng(device_type="cuda"):
            inside = et.rand(3, device="cuda")
    assert et.equal(et.rand(3, device="cuda"), inside)
    with rng.fork_rng(devices=[], device_type="cuda"):  # devices=[]: the CPU's stream only
        et.rand(3, device="cuda")
    assert not et.equal(et.rand(3, device="cuda"), inside)


def test_fork_rng_matches_pytorch():
    torch = pytest.importorskip("torch")
    for lib in (torch, et):
        lib.manual_seed(1)
        with lib.random.fork_rng(devices=[]):
            lib.rand(2)
        after = lib.rand(2)
        lib.manual_seed(1)
        assert lib.equal(lib.rand(2), after)
