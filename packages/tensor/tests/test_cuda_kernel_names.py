"""dtype dispatch errors name PyTorch's kernel for the device the op runs on.

PyTorch quotes the kernel its dispatch macro was given: `"lshift_cpu" not implemented for
'Bool'` on the CPU, `"lshift_cuda" ...` on a GPU (names read in PyTorch's CUDA sources).
Each case runs on both devices; the CPU messages are also checked against PyTorch's when
it is installed. The errors are raised before any kernel runs, so no device copy is made.
"""
import pytest

import ember_tensor as et
from ember_tensor._ops._kernel_names import CUDA_KERNEL_NAMES, kernel_name


# (id, call(lib, device) -> raises, CPU kernel, dtype name); `lib` is ember or torch.
CASES = [
    ("lshift bool", lambda m, d: m.bitwise_left_shift(m.tensor([True], device=d), m.tensor([True], device=d)),
     "lshift_cpu", "Bool"),
    ("rshift float", lambda m, d: m.bitwise_right_shift(m.tensor([1.0], device=d), 1), "rshift_cpu", "Float"),
    ("bitwise_and float", lambda m, d: m.bitwise_and(m.tensor([1.0], device=d), m.tensor([1.0], device=d)),
     "bitwise_and_cpu", "Float"),
    ("bitwise_or float", lambda m, d: m.bitwise_or(m.tensor([1.0], device=d), 1.0), "bitwise_or_cpu", "Float"),
    ("bitwise_xor float", lambda m, d: m.bitwise_xor(m.tensor([1.0], device=d), 1.0), "bitwise_xor_cpu", "Float"),
    ("bitwise_not float", lambda m, d: m.bitwise_not(m.tensor([1.0], device=d)), "bitwise_not_cpu", "Float"),
    ("floor_divide bool", lambda m, d: m.floor_divide(m.tensor([True], device=d), m.tensor([True], device=d)),
     "div_floor_cpu", "Bool"),
    ("div trunc bool", lambda m, d: m.div(m.tensor([True], device=d), m.tensor([True], device=d),
                                          rounding_mode="trunc"), "div_trunc_cpu", "Bool"),
    ("remainder bool", lambda m, d: m.remainder(m.tensor([True], device=d), m.tensor([True], device=d)),
     "remainder_cpu", "Bool"),
    ("fmod bool", lambda m, d: m.fmod(m.tensor([True], device=d), m.tensor([True], device=d)), "fmod_cpu", "Bool"),
    ("hypot long", lambda m, d: m.hypot(m.tensor([3], device=d), m.tensor([4], device=d)), "hypot_cpu", "Long"),
    ("frac long", lambda m, d: m.frac(m.tensor([1], device=d)), "frac_cpu", "Long"),
    ("floor bool", lambda m, d: m.floor(m.tensor([True], device=d)), "floor_vml_cpu", "Bool"),
    ("ceil bool", lambda m, d: m.ceil(m.tensor([True], device=d)), "ceil_vml_cpu", "Bool"),
    ("trunc bool", lambda m, d: m.trunc(m.tensor([True], device=d)), "trunc_vml_cpu", "Bool"),
    ("round decimals long", lambda m, d: m.round(m.tensor([1], device=d), decimals=1), "round_cpu", "Long"),
    ("clamp tensors bool", lambda m, d: m.clamp(m.tensor([True], device=d), m.tensor([False], device=d),
                                                m.tensor([True], device=d)), "clamp_cpu", "Bool"),
    ("clamp numbers bool", lambda m, d: m.clamp(m.tensor([True], device=d), True, False), "clamp_scalar_cpu",
     "Bool"),
    ("normal_ long", lambda m, d: m.zeros(2, dtype=m.int64, device=d).normal_(), "normal_kernel_cpu", "Long"),
    ("randn long", lambda m, d: m.randn(2, dtype=m.int64, device=d), "normal_kernel_cpu", "Long"),
    ("log_normal_ long", lambda m, d: m.zeros(2, dtype=m.int64, device=d).log_normal_(), "log_normal_cpu", "Long"),
    ("geometric_ bool", lambda m, d: m.zeros(2, dtype=m.bool, device=d).geometric_(0.5), "geometric_cpu", "Bool"),
    ("poisson long", lambda m, d: m.poisson(m.tensor([1], device=d)), "poisson_cpu", "Long"),
]

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(not et.cuda.is_available(),
                                                                  reason="no CUDA and no simulator"))]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("call, cpu_kernel, dtype_name", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_dtype_error_names_the_kernel_of_the_device(call, cpu_kernel, dtype_name, device):
    kernel = cpu_kernel if device == "cpu" else CUDA_KERNEL_NAMES[cpu_kernel]
    with pytest.raises(NotImplementedError) as error:
        call(et, device)
    assert str(error.value) == f"\"{kernel}\" not implemented for '{dtype_name}'"


@pytest.mark.parametrize("call, cpu_kernel, dtype_name", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_cpu_messages_are_pytorchs(call, cpu_kernel, dtype_name):
    torch = pytest.importorskip("torch")
    with pytest.raises(NotImplementedError) as error:
        call(torch, "cpu")
    assert str(error.value) == f"\"{cpu_kernel}\" not implemented for '{dtype_name}'"


def test_every_cuda_name_is_the_cpu_name_with_cuda_for_cpu_or_vml_cpu():
    # A guard on typos in the table: the names differ from the CPU's only in that suffix.
    for cpu, cuda in CUDA_KERNEL_NAMES.items():
        assert cuda == cpu.removesuffix("_vml_cpu").removesuffix("_cpu") + "_cuda"


def test_abs_of_bool_keeps_the_cpu_name_which_has_no_cuda_twin():
    # CUDA's abs dispatches Bool (no error there): no CUDA name is invented for it.
    assert kernel_name("abs_cpu", et.device("cuda")) == "abs_cpu"
    assert kernel_name("lshift_cpu", 2, et.device("cpu")) == "lshift_cpu"
