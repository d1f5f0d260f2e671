"""``torch.xpu`` and ``torch.mps``, devices ember has no backend for, answer as PyTorch does
in a build without them (found running pytorch/examples mnist_forward_forward, which asks
``torch.xpu.is_available()`` while picking its device)."""
import pytest

import ember_tensor
from ember_tensor import mps, xpu

torch = pytest.importorskip("torch")

CALLS = [("is_available", ()), ("device_count", ()), ("manual_seed", (1,)), ("manual_seed_all", (1,)),
         ("seed", ()), ("seed_all", ()), ("empty_cache", ()), ("is_initialized", ()), ("synchronize", ()),
         ("current_device", ()), ("set_device", (0,)), ("get_device_name", ()), ("get_rng_state", ()),
         ("current_allocated_memory", ()), ("driver_allocated_memory", ()), ("recommended_max_memory", ()),
         ("set_per_process_memory_fraction", (0.5,)), ("get_rng_state_all", ()), ("initial_seed", ()),
         ("memory_allocated", ()), ("max_memory_allocated", ()), ("get_device_capability", ()), ("init", ())]


def outcome(module, name, args):
    try:
        return "value", getattr(module, name)(*args)
    except Exception as error:  # the error PyTorch gives is part of the contract
        return type(error).__name__, str(error)


@pytest.mark.parametrize("device", ["xpu", "mps"])
@pytest.mark.parametrize("name, args", CALLS)
def test_device_module_answers_as_pytorch_without_the_device(device, name, args):
    ours, theirs = {"xpu": xpu, "mps": mps}[device], getattr(torch, device)
    if not hasattr(theirs, name):
        assert not hasattr(ours, name)
        return
    kind, value = outcome(ours, name, args)
    want_kind, want_value = outcome(theirs, name, args)
    assert kind == want_kind or (want_kind == "AssertionError" and kind == "AssertionError")
    assert value == want_value


def test_reachable_from_the_top_level_as_torch_paths():
    import ember

    assert ember.xpu is xpu and ember.mps is mps and ember_tensor.xpu is xpu
