"""CUDA's random generators: one per GPU, seeded by manual_seed (and each alone by
torch.cuda.manual_seed), explicit torch.Generator("cuda") objects, the RNG state as seed
and Philox offset that round-trips (and pickles), and several GPUs (simulated), each with
its own generator.
"""
import pickle

import numpy as np
import pytest

import ember_tensor as et

pytestmark = pytest.mark.skipif(not et.cuda.is_available(), reason="no CUDA and no simulator")

from cuda_guard import run_on_simulated_devices  # noqa: E402 - imports the CUDA backend
from device_random_cases import host, on_device_only  # noqa: E402


def test_each_gpu_has_its_own_generator_seeded_by_manual_seed():
    """manual_seed seeds every GPU's generator, torch.cuda.manual_seed the current one alone, and
    neither touches the CPU's; seed() and seed_all() reseed at random."""
    et.manual_seed(21)
    assert et.cuda.initial_seed() == 21
    a = et.rand(8, device="cuda")
    et.cuda.manual_seed(21)  # only the current GPU's generator
    np.testing.assert_array_equal(host(et.rand(8, device="cuda")), host(a))
    et.cuda.manual_seed_all(21)
    np.testing.assert_array_equal(host(et.rand(8, device="cuda")), host(a))
    # the CPU draws from its own engine: seeding CUDA alone leaves it alone, and back
    et.manual_seed(21)
    cpu = et.rand(8).numpy()
    et.cuda.manual_seed(99)
    et.manual_seed(21)
    np.testing.assert_array_equal(et.rand(8).numpy(), cpu)
    et.cuda.seed()
    assert et.cuda.initial_seed() != 21
    et.cuda.seed_all()
    assert 0 <= et.cuda.initial_seed() < 2 ** 64


def test_explicit_cuda_generators():
    """A Generator("cuda") has PyTorch's default seed, draws its own stream, and must meet a
    CUDA tensor (PyTorch's device-type errors otherwise)."""
    g = et.Generator("cuda")
    assert g.device == et.device("cuda", 0) and g.initial_seed() == 67280421310721
    a = et.rand(6, device="cuda", generator=g.manual_seed(3))
    b = et.rand(6, device="cuda", generator=et.Generator("cuda").manual_seed(3))
    np.testing.assert_array_equal(host(a), host(b))
    c = et.randn(6, device="cuda", generator=g)
    with on_device_only("cuda"):
        et.empty(4, device="cuda").normal_(generator=g)
    assert not np.array_equal(host(a), host(c))
    with pytest.raises(RuntimeError, match="Expected a 'cuda' device type for generator but found 'cpu'"):
        et.rand(3, device="cuda", generator=et.Generator())
    with pytest.raises(RuntimeError, match="Expected a 'cuda' device type for generator but found 'cpu'"):
        et.rand(3, device="cuda", generator=et.default_generator)
    with pytest.raises(RuntimeError, match="Expected a 'cpu' device type for generator but found 'cuda'"):
        et.rand(3, generator=g)


def test_rng_state_is_seed_and_offset_and_round_trips():
    """get_rng_state is 16 bytes, the seed and the Philox offset, and set_rng_state replays the
    stream; a CUDA generator pickles with its state; bad states raise PyTorch's errors."""
    et.cuda.manual_seed(5)
    state = et.cuda.get_rng_state()
    assert state.dtype == et.uint8 and state.device == et.device("cpu") and state.shape == (16,)
    assert int.from_bytes(bytes(state.tolist()[:8]), "little") == 5
    assert int.from_bytes(bytes(state.tolist()[8:]), "little") == 0
    a = et.rand(5, device="cuda")
    et.randn(3, device="cuda", dtype=et.float64)  # two counter blocks: offset + 8
    assert int.from_bytes(bytes(et.cuda.get_rng_state().tolist()[8:]), "little") == 12
    et.cuda.set_rng_state(state)
    np.testing.assert_array_equal(host(et.rand(5, device="cuda")), host(a))
    states = et.cuda.get_rng_state_all()
    assert len(states) == et.cuda.device_count()
    et.cuda.set_rng_state_all(states)
    g = et.Generator("cuda").manual_seed(8)
    et.rand(3, device="cuda", generator=g)
    clone = pickle.loads(pickle.dumps(g))
    np.testing.assert_array_equal(host(et.rand(4, device="cuda", generator=clone)),
                                  host(et.rand(4, device="cuda", generator=g)))
    with pytest.raises(RuntimeError, match="RNG state is wrong size"):
        et.cuda.set_rng_state(et.zeros(15, dtype=et.uint8))
    with pytest.raises(TypeError, match="RNG state must be a torch.ByteTensor"):
        et.cuda.set_rng_state(et.zeros(16))


MULTI_DEVICE_SCRIPT = """
import numpy as np
import ember_tensor as torch

assert torch.cuda.device_count() == 2
torch.manual_seed(3)                        # every GPU's generator
a0 = torch.rand(6, device='cuda:0')
a1 = torch.rand(6, device='cuda:1')
assert a1.device == torch.device('cuda:1')
assert a0.tolist() == a1.tolist()           # same seed, same offset: the same stream
state0 = torch.cuda.get_rng_state(0)
with torch.cuda.device(1):
    torch.cuda.manual_seed(9)               # the current GPU's only
    assert torch.cuda.initial_seed() == 9
    before = torch.cuda.memory_allocated(1)
    b = torch.empty(5, device='cuda').normal_()
    p = torch.bernoulli(torch.full((5,), 0.5, device='cuda'))
    assert b.device == p.device == torch.device('cuda:1')
assert torch.cuda.initial_seed() == 3
assert torch.cuda.get_rng_state(0).tolist() == state0.tolist()   # GPU 0 drew nothing
assert torch.cuda.get_rng_state(1).tolist()[8] == 8               # GPU 1: two draws
assert len(torch.cuda.get_rng_state_all()) == 2
print("ok")
"""


def test_each_of_several_gpus_has_its_own_generator():
    """On two simulated GPUs each has its own generator, seeded together or alone."""
    if "simulator" not in et.cuda.get_device_name().lower():
        pytest.skip("simulates two devices on Numba's CUDA simulator")
    run_on_simulated_devices(MULTI_DEVICE_SCRIPT, devices=2)


