"""``torch.nn.attention``: choosing the kernel behind `scaled_dot_product_attention`.

PyTorch has several SDPA kernels (math, flash, memory-efficient, cuDNN); `sdpa_kernel`
limits a block to some of them through ``torch.backends.cuda``'s ``*_sdp`` switches.
ember has one kernel, the composition in ``ember_nn.functional``, and it stands in for
the kernels PyTorch would run on the tensor's device: on the CPU the math and flash
kernels (PyTorch's CPU has both), on CUDA any of the four. With none of them enabled it
raises PyTorch's "No viable backend" error, as PyTorch does.

    >>> import ember as torch
    >>> from ember.nn.attention import SDPBackend, sdpa_kernel
    >>> q = torch.ones(1, 1, 2, 4)
    >>> with sdpa_kernel(SDPBackend.MATH):
    ...     torch.nn.functional.scaled_dot_product_attention(q, q, q).shape
    torch.Size([1, 1, 2, 4])
"""
import contextlib
import enum

from ember_tensor.backend_flags import cuda as _flags

__all__ = ["SDPBackend", "sdpa_kernel", "WARN_FOR_UNFUSED_KERNELS"]

# PyTorch warns, when this is True, each time a fused kernel cannot be used.
WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(enum.IntEnum):
    """The SDPA kernels PyTorch knows, with its values."""

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4

    def __str__(self):
        return f"SDPBackend.{self.name}"


SDPBackend.__module__ = "torch.nn.attention"

# Each backend's switch in torch.backends.cuda (OVERRIDEABLE and ERROR have none).
_SWITCHES = {
    SDPBackend.MATH: (_flags.math_sdp_enabled, _flags.enable_math_sdp),
    SDPBackend.FLASH_ATTENTION: (_flags.flash_sdp_enabled, _flags.enable_flash_sdp),
    SDPBackend.EFFICIENT_ATTENTION: (_flags.mem_efficient_sdp_enabled, _flags.enable_mem_efficient_sdp),
    SDPBackend.CUDNN_ATTENTION: (_flags.cudnn_sdp_enabled, _flags.enable_cudnn_sdp),
}


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority=False):
    """Run the block with only `backends` (an SDPBackend or a list of them) enabled for
    `scaled_dot_product_attention`; the switches are put back afterwards.
    `set_priority` orders PyTorch's choice among several kernels: ember has one."""
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError("Backend must be an instance of SDPBackend or a list of SDPBackend instances, "
                             f"got {type(backends).__name__}")
    if isinstance(backends, SDPBackend):
        backends = [backends]
    saved = {backend: enabled() for backend, (enabled, _) in _SWITCHES.items()}
    try:
        for backend, (_, enable) in _SWITCHES.items():
            enable(backend in backends)
        yield {}
    finally:
        for backend, (_, enable) in _SWITCHES.items():
            enable(saved[backend])


def check_a_kernel_is_enabled(device_type):
    """PyTorch's error when `sdpa_kernel` (or the switches) left no kernel that runs on
    `device_type`: ember's one kernel stands for math and flash on the CPU, any on CUDA."""
    usable = (SDPBackend.MATH, SDPBackend.FLASH_ATTENTION) if device_type == "cpu" else tuple(_SWITCHES)
    if not any(_SWITCHES[backend][0]() for backend in usable):
        raise RuntimeError("No viable backend for scaled_dot_product_attention was found. This is likely due "
                           "to turning off both the math kernel and the fused kernels.")
