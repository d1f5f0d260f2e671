"""Device objects of every PyTorch device type can be made and compared (programs write
``t.device != torch.device("meta")``); tensors live only on the CPU and CUDA, and asking
for another backend is a clear error, not a crash or a silent CPU tensor."""
import pytest

import ember_tensor as et


@pytest.mark.parametrize("name", ["meta", "mps", "xpu", "hip", "xla", "privateuseone"])
def test_other_device_types_are_objects_without_tensors(name):
    device = et.device(name)
    assert device.type == name and device.index is None and str(device) == name
    assert et.device(f"{name}:1").index == 1
    assert et.zeros(1).device != device
    with pytest.raises(RuntimeError, match=f"ember has no '{name}' backend"):
        et.zeros(2, device=name)
    with pytest.raises(RuntimeError, match=f"ember has no '{name}' backend"):
        et.ones(2).to(name)


def test_unknown_type_lists_pytorchs_types():
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError) as theirs:
        torch.device("foo")
    with pytest.raises(RuntimeError) as ours:
        et.device("foo")
    assert str(ours.value) == str(theirs.value)


def test_default_device_block_of_an_unbacked_type_refuses_factories():
    with et.device("meta"):
        with pytest.raises(RuntimeError, match="ember has no 'meta' backend"):
            et.empty(3)
    assert et.empty(3).device == et.device("cpu")


def test_untyped_storage_answers_what_libraries_ask():
    base = et.arange(6.0)
    view = base[2:]
    storage = view.untyped_storage()
    assert storage is base.untyped_storage() and storage.device == et.device("cpu")
    assert storage.nbytes() == storage.size() == 24
    assert storage.data_ptr() == base.data_ptr() and view.data_ptr() == base.data_ptr() + 8
