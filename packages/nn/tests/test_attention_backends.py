"""torch.nn.attention: sdpa_kernel limits scaled_dot_product_attention to some kernels
through torch.backends.cuda's switches and puts them back; with no kernel left for the
tensor's device the call raises PyTorch's error. Checked against PyTorch where installed."""
import pytest

import ember_tensor as et
from ember_nn import functional as F
from ember_nn.attention import SDPBackend, WARN_FOR_UNFUSED_KERNELS, sdpa_kernel
from ember_tensor.backend_flags import cuda as flags

DEVICES = ["cpu"] + (["cuda"] if et.cuda.is_available() else [])  # CUDA: a GPU or the simulator

NO_KERNEL = "No viable backend for scaled_dot_product_attention was found"
# On the CPU PyTorch has the math and the flash kernel; on CUDA ember's one kernel stands
# for any of the four.
RUNS_ON = {"cpu": {SDPBackend.MATH, SDPBackend.FLASH_ATTENTION},
           "cuda": {SDPBackend.MATH, SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION,
                    SDPBackend.CUDNN_ATTENTION}}


def _switches():
    return (flags.math_sdp_enabled(), flags.flash_sdp_enabled(), flags.mem_efficient_sdp_enabled(),
            flags.cudnn_sdp_enabled())


def test_backends_carry_pytorchs_names_and_values():
    assert {b.name: int(b) for b in SDPBackend} == {
        "ERROR": -1, "MATH": 0, "FLASH_ATTENTION": 1, "EFFICIENT_ATTENTION": 2, "CUDNN_ATTENTION": 3,
        "OVERRIDEABLE": 4}
    assert str(SDPBackend.MATH) == "SDPBackend.MATH"
    assert WARN_FOR_UNFUSED_KERNELS is False


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("backend", list(SDPBackend), ids=lambda b: b.name)
def test_one_backend_runs_or_raises_pytorchs_error(device, backend):
    q = et.randn(1, 2, 4, 8).to(device)
    before = _switches()
    with sdpa_kernel(backend) as context:
        assert context == {}
        assert flags.math_sdp_enabled() == (backend is SDPBackend.MATH)
        assert flags.flash_sdp_enabled() == (backend is SDPBackend.FLASH_ATTENTION)
        if backend in RUNS_ON[device]:
            expected = F.softmax(q @ q.transpose(-2, -1) / 8 ** 0.5, dim=-1) @ q
            assert et.allclose(F.scaled_dot_product_attention(q, q, q), expected, atol=1e-6)
        else:
            with pytest.raises(RuntimeError, match=NO_KERNEL):
                F.scaled_dot_product_attention(q, q, q)
    assert _switches() == before


def test_a_list_enables_each_and_the_switches_come_back_after_an_error():
    q = et.randn(1, 1, 3, 4)
    with pytest.raises(ValueError):
        with sdpa_kernel([SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH]):
            assert _switches() == (True, False, True, False)
            F.scaled_dot_product_attention(q, q, q)
            raise ValueError
    assert _switches() == (True, True, True, True)


def test_a_backend_that_is_not_an_sdpbackend_is_refused():
    with pytest.raises(AssertionError, match="Backend must be an instance of SDPBackend or a list of "
                                             "SDPBackend instances, got str"):
        with sdpa_kernel("math"):
            pass


def test_matches_pytorch():
    torch = pytest.importorskip("torch")
    from torch.nn.attention import SDPBackend as TorchBackend, sdpa_kernel as torch_sdpa_kernel
    assert {b.name: int(b) for b in SDPBackend} == {b: int(getattr(TorchBackend, b))
                                                    for b in TorchBackend.__members__}
    q = torch.randn(1, 1, 3, 4)
    for backend in SDPBackend:
        with torch_sdpa_kernel(getattr(TorchBackend, backend.name)):
            try:
                torch.nn.functional.scaled_dot_product_attention(q, q, q)
                runs = True
            except RuntimeError:
                runs = False
        assert runs == (backend in RUNS_ON["cpu"]), backend
