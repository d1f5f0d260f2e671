"""CUDA tensors and devices: tensors land on the current numbered device, new/like keep
device and dtype, ops across devices raise PyTorch's error (a 0-d CPU operand excepted),
copies between host and device, random numbers made on the device; the torch.cuda device
queries, streams and events, a missing GPU, the slides' GPU snippet.

Runs on Numba's CUDA simulator (conftest.py sets NUMBA_ENABLE_CUDASIM=1 unless it is
set already). Tests marked `gpu` need a real device (NUMBA_ENABLE_CUDASIM=0 on a GPU machine).
"""
import numpy as np
import pytest

import ember_tensor as et
from cuda_guard import device_only, matches_the_cpu

pytestmark = pytest.mark.skipif(not et.cuda.is_available(), reason="no CUDA and no simulator")

CUDA0 = et.device("cuda", 0)


def test_tensors_land_on_the_current_numbered_device():
    # The notes' "CUDA semantics" snippet, with the one device the simulator has.
    cuda = et.device("cuda")
    cuda0 = et.device("cuda:0")
    x = et.tensor([1., 2.], device=cuda0)
    assert x.device == et.device(type="cuda", index=0)
    y = et.tensor([1., 2.]).cuda()
    assert y.device == CUDA0
    with et.cuda.device(0):
        a = et.tensor([1., 2.], device=cuda)
        b2 = et.tensor([1., 2.]).to(device=cuda)
        c = a + b2
        assert a.device == b2.device == c.device == CUDA0
    assert repr(et.ones(2, device="cuda")) == "tensor([1., 1.], device='cuda:0')"
    assert str(et.zeros(2, dtype=et.int64, device="cuda")) == "tensor([0, 0], device='cuda:0')"
    assert et.ones(2, device="cuda").type() == "torch.cuda.FloatTensor"
    assert et.ones(2, device="cuda").is_cuda and et.ones(2, device="cuda").get_device() == 0


def test_new_and_like_keep_device_and_dtype():
    x_gpu = et.empty(2, device=et.device("cuda"))
    y_gpu = x_gpu.new_full([3, 2], fill_value=-5)
    assert str(y_gpu) == ("tensor([[-5., -5.],\n        [-5., -5.],\n        [-5., -5.]], "
                          "device='cuda:0')")
    assert et.zeros_like(x_gpu).device == CUDA0
    assert et.ones_like(x_gpu.long()).dtype == et.int64
    assert x_gpu.new_tensor([1, 2]).device == CUDA0


def test_cross_device_ops_raise_pytorchs_error():
    with pytest.raises(RuntimeError, match=r"^Expected all tensors to be on the same device, but "
                       r"found at least two devices, cuda:0 and cpu!$"):
        et.ones(2, device="cuda") + et.ones(2)
    with pytest.raises(RuntimeError, match="cuda:0 and cpu"):
        et.ones(2, device="cuda") @ et.ones(2)


# Binary float32 ops, PyTorch's among them that take no Python number (atan2, hypot).
_BINARY_FLOAT32 = ["add", "sub", "mul", "div", "pow", "atan2", "maximum", "fmod", "remainder", "lt", "eq",
                   "hypot", "copysign", "floor_divide"]


@pytest.mark.parametrize("name", _BINARY_FLOAT32)
def test_a_0d_cpu_tensor_beside_a_cuda_tensor_is_a_number(name):
    """A 0-d CPU tensor may meet a CUDA tensor (PyTorch's exception to the same-device rule):
    it is passed to the kernel as a number, and the result is the CPU's, computed on the device."""
    a = et.tensor([[0.5, -1.5, 2.0], [3.25, -0.0, 7.0]])
    fn = getattr(et, name)
    # the 0-d operand is made inside the call: it stays on the CPU where `a` moves to CUDA
    matches_the_cpu(lambda x: fn(x, et.tensor(2.0)), [a], f"{name}(cuda, 0-d cpu)", tol=1e-6)


def test_copies_between_host_and_device():
    host = et.tensor([[1.5, 2.5], [3.5, 4.5]])
    dev = et.zeros(2, 2, dtype=et.float64, device="cuda")
    dev.copy_(host.t())  # cross-device, converting, from a non-contiguous source
    assert dev.tolist() == [[1.5, 3.5], [2.5, 4.5]]
    back = et.empty(2, 2, dtype=et.int32)
    back.copy_(dev)
    assert back.tolist() == [[1, 3], [2, 4]]
    assert dev.to("cpu", et.bfloat16).tolist() == [[1.5, 3.5], [2.5, 4.5]]
    assert host.cuda().cpu().tolist() == host.tolist()
    assert host.to(CUDA0, non_blocking=True).cpu().tolist() == host.tolist()
    assert dev[1, 0].item() == 2.5 and float(dev[0, 1]) == 3.5
    np.testing.assert_array_equal(np.asarray(dev), [[1.5, 3.5], [2.5, 4.5]])
    with pytest.raises(TypeError, match="can't convert cuda:0 device type tensor to numpy"):
        dev.numpy()


def test_random_numbers_are_made_on_the_device_and_reproducible():
    # CUDA has its own Philox generator (as PyTorch): a seed fixes the numbers, but they
    # are not the CPU's. test_cuda_philox.py and test_random_properties.py check every sampler in depth.
    et.manual_seed(7)
    with device_only():
        first = et.rand(4000, device="cuda")
        later = et.rand(4000, device="cuda")
    et.cuda.manual_seed(7)
    second = et.rand(4000, device="cuda")
    assert first.device == CUDA0
    assert first.tolist() == second.tolist()
    assert first.tolist() != later.tolist()  # each call advances the generator's offset
    values = first.cpu().numpy()
    assert values.min() >= 0 and values.max() < 1 and abs(values.mean() - 0.5) < 0.025
    et.cuda.manual_seed_all(3)
    x = et.empty(64, 64, device="cuda").normal_(0.0, 1.0).cpu().numpy()
    assert abs(x.mean()) < 0.1 and abs(x.std() - 1) < 0.1
    ints = et.randint(0, 10, (400,), device="cuda")
    assert ints.dtype == et.int64 and set(ints.cpu().tolist()) == set(range(10))


def test_device_queries():
    assert et.cuda.is_available() and et.cuda.is_initialized()
    assert et.cuda.device_count() == 1
    assert et.cuda.current_device() == 0
    et.cuda.set_device(0)
    et.cuda.set_device("cuda:0")
    with et.cuda.device(0):
        assert et.cuda.current_device() == 0
    assert isinstance(et.cuda.get_device_name(), str) and et.cuda.get_device_name(0)
    props = et.cuda.get_device_properties(0)
    assert props.name == et.cuda.get_device_name() and props.major >= 1
    assert et.cuda.get_device_capability() == (props.major, props.minor)
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        et.cuda.get_device_properties(3)
    et.cuda.synchronize()


def test_streams_and_events():
    s = et.cuda.Stream()
    assert et.cuda.current_stream() == et.cuda.default_stream()
    A = et.empty((10, 10), device=et.device("cuda")).normal_(0.0, 1.0)
    with et.cuda.stream(s):
        assert et.cuda.current_stream() == s
        s.wait_stream(et.cuda.default_stream())  # what the notes' snippet needs to be correct
        B = et.sum(A)
    assert et.cuda.current_stream() == et.cuda.default_stream()
    s.synchronize()
    assert abs(B.item() - A.cpu().sum().item()) < 1e-4
    start, end = et.cuda.Event(enable_timing=True), et.cuda.Event(enable_timing=True)
    start.record()
    (A @ A).sum()
    end.record()
    end.synchronize()
    assert start.elapsed_time(end) >= 0.0 and end.query()
    with pytest.raises(RuntimeError, match="enable_timing=True"):
        et.cuda.Event().elapsed_time(end)


@pytest.mark.gpu
def test_real_gpu_reports_a_real_name():
    assert "simulator" not in et.cuda.get_device_name().lower()
    assert et.cuda.get_device_properties().total_memory > 0


def test_slides_gpu_snippet():
    x = et.empty(5, 5).uniform_()
    c = x.cuda()  # the current GPU (0 by default)
    r = et.matmul(c, c)
    q = c ** 2 + r * c
    assert q.device == CUDA0 and repr(q).endswith("device='cuda:0')")
    expected = x ** 2 + et.matmul(x, x) * x
    np.testing.assert_allclose(q.cpu().numpy(), expected.numpy(), rtol=1e-5)
    with et.cuda.device(0):
        assert x.cuda().get_device() == 0
    assert (c * 2 + 1).get_device() == 0


@pytest.mark.skipif(et.cuda.device_count() > 1, reason="checks the error for a missing GPU")
def test_a_missing_gpu_is_an_invalid_device_ordinal():
    x = et.ones(2)
    for make in (lambda: x.cuda(1), lambda: et.zeros(2, device="cuda:1"), lambda: x.to("cuda:1")):
        with pytest.raises(RuntimeError, match="CUDA error: invalid device ordinal"):
            make()
    with pytest.raises(RuntimeError, match="CUDA error: invalid device ordinal"):
        with et.cuda.device(1):
            pass


def test_is_bf16_supported():
    assert et.cuda.is_bf16_supported() is True
    assert et.cuda.is_bf16_supported(including_emulation=False) == (
        et.cuda.get_device_capability() >= (8, 0))
