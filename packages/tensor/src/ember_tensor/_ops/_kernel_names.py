"""The kernel PyTorch names in a dtype dispatch error, on the device the op runs on.

PyTorch's message quotes the kernel its AT_DISPATCH macro was given, so the same mistake
reads `"lshift_cpu" not implemented for 'Bool'` on the CPU and `"lshift_cuda" not
implemented for 'Bool'` on a GPU. ember's checks are written once, with the CPU name;
`kernel_name` swaps in the CUDA name when the op's operands are on CUDA. Only names read
in PyTorch's CUDA sources (aten/src/ATen/native/cuda/*.cu, DistributionTemplates.h) are
listed; a CPU name without a CUDA entry is kept as it is.
"""
from .._device import device as Device
from .._tensor import Tensor

__all__ = ["kernel_name", "CUDA_KERNEL_NAMES"]

# Not here on purpose: "abs_cpu" (CUDA's abs_cuda dispatches Bool too: no error there) and
# "bernoulli_tensor_cpu_p_" (not checked against the CUDA source).
CUDA_KERNEL_NAMES = {
    "frac_cpu": "frac_cuda", "floor_vml_cpu": "floor_cuda", "ceil_vml_cpu": "ceil_cuda",
    "trunc_vml_cpu": "trunc_cuda", "round_vml_cpu": "round_cuda", "round_cpu": "round_cuda",
    "bitwise_not_cpu": "bitwise_not_cuda", "bitwise_and_cpu": "bitwise_and_cuda",
    "bitwise_or_cpu": "bitwise_or_cuda", "bitwise_xor_cpu": "bitwise_xor_cuda",
    "lshift_cpu": "lshift_cuda", "rshift_cpu": "rshift_cuda", "gcd_cpu": "gcd_cuda", "lcm_cpu": "lcm_cuda",
    "div_floor_cpu": "div_floor_cuda", "div_trunc_cpu": "div_trunc_cuda",
    "remainder_cpu": "remainder_cuda", "fmod_cpu": "fmod_cuda", "hypot_cpu": "hypot_cuda",
    "clamp_cpu": "clamp_cuda", "clamp_scalar_cpu": "clamp_scalar_cuda",
    "normal_kernel_cpu": "normal_kernel_cuda", "log_normal_cpu": "log_normal_cuda",
    "geometric_cpu": "geometric_cuda", "poisson_cpu": "poisson_cuda",
}


# PyTorch names its kernels per device type; ember's errors quote the name of the device's.
_KERNEL_NAMES_BY_DEVICE = {"cuda": CUDA_KERNEL_NAMES}


def kernel_name(cpu_name, *where):
    """`cpu_name`, or its CUDA twin when any of `where` (tensors, devices; other values
    are skipped) is on CUDA.

    >>> kernel_name("lshift_cpu")
    'lshift_cpu'
    >>> import ember_tensor as torch
    >>> kernel_name("lshift_cpu", 3, torch.device("cuda"))
    'lshift_cuda'
    """
    for w in where:
        device = w._device if isinstance(w, Tensor) else w if isinstance(w, Device) else None
        names = None if device is None else _KERNEL_NAMES_BY_DEVICE.get(device.type)
        if names is not None:
            return names.get(cpu_name, cpu_name)
    return cpu_name
