"""`set_default_device`, `get_default_device` and ``with torch.device(...)``: factories
given no device create tensors there, as in PyTorch; everything else keeps its device."""
import numpy as np
import pytest

import ember_tensor as et
from cuda_guard import DEVICES


@pytest.fixture(autouse=True)
def cpu_afterwards():
    yield
    et.set_default_device(None)


def test_cpu_unless_set():
    assert et.get_default_device() == et.device("cpu")


@pytest.mark.parametrize("device", DEVICES)
def test_factories_follow_the_default(device):
    et.set_default_device(device)
    made = [et.tensor([1.0]), et.zeros(2), et.ones(2), et.empty(2), et.full((2,), 3.0), et.arange(3),
            et.linspace(0, 1, 3), et.eye(2), et.rand(2), et.randn(2), et.randint(0, 3, (2,)), et.randperm(3),
            et.as_tensor([1, 2])]
    assert all(t.device.type == device for t in made), [t.device for t in made]
    assert et.get_default_device().type == device


@pytest.mark.parametrize("device", DEVICES)
def test_what_does_not_follow_the_default(device):
    et.set_default_device(device)
    cpu = et.from_numpy(np.ones(2))  # shares the array's memory: always the CPU, as in PyTorch
    assert cpu.device.type == "cpu"
    assert et.zeros_like(cpu).device.type == "cpu"  # _like keeps its input's device
    assert et.zeros(2, device="cpu").device.type == "cpu"  # an explicit device wins



@pytest.mark.parametrize("device", DEVICES)
def test_a_copied_tensor_goes_to_the_default_device_once_one_is_set(device):
    # As PyTorch: torch.tensor(t) keeps t's device, unless a default device was set.
    with pytest.warns(UserWarning, match="To copy construct from a tensor"):
        assert et.tensor(et.zeros(1, device=device)).device.type == device
        et.set_default_device(device)
        assert et.tensor(et.zeros(1, device="cpu")).device.type == device


@pytest.mark.parametrize("device", DEVICES)
def test_a_device_is_a_context(device):
    with et.device(device) as entered:
        assert entered == et.device(device)
        assert et.zeros(1).device.type == device
        with et.device("cpu"):
            assert et.zeros(1).device.type == "cpu"
        assert et.zeros(1).device.type == device
    assert et.zeros(1).device.type == "cpu"


def test_none_restores_the_cpu():
    et.set_default_device("cpu")
    et.set_default_device(None)
    assert et.get_default_device() == et.device("cpu")
