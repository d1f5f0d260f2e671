"""``torch.backends.cuda``: whether ember was built with CUDA (its kernels are Numba's,
compiled when a GPU is there), and the matmul flags; ``matmul.allow_tf32`` is the
float32 matmul precision (`torch.set_float32_matmul_precision`)."""
from .._runtime import matmul_precision as _precision

__all__ = ["is_built", "matmul", "flash_sdp_enabled", "mem_efficient_sdp_enabled", "math_sdp_enabled",
           "cudnn_sdp_enabled", "enable_flash_sdp", "enable_mem_efficient_sdp", "enable_math_sdp",
           "enable_cudnn_sdp", "preferred_linalg_library", "preferred_blas_library"]


def is_built():
    """True: ember's CUDA support is part of every install (Numba compiles it on demand)."""
    return True


class _MatmulFlags:
    """``torch.backends.cuda.matmul``: allow_tf32 and the reduced-precision reduction
    flags; an unknown attribute is an AttributeError, as in PyTorch."""

    _FLAGS = ("allow_fp16_reduced_precision_reduction", "allow_bf16_reduced_precision_reduction",
              "allow_fp16_accumulation")

    def __init__(self):
        object.__setattr__(self, "_values", {"allow_fp16_reduced_precision_reduction": True,
                                             "allow_bf16_reduced_precision_reduction": True,
                                             "allow_fp16_accumulation": False})

    def __getattr__(self, name):
        if name == "allow_tf32":
            return _precision.allow_tf32()
        if name in self._FLAGS:
            return self._values[name]
        raise AttributeError(f"Unknown attribute {name}")

    def __setattr__(self, name, value):
        if name == "allow_tf32":
            _precision.set_allow_tf32(value)
        elif name in self._FLAGS:
            self._values[name] = value
        else:
            raise AttributeError(f"Unknown attribute {name}")


matmul = _MatmulFlags()

# Scaled-dot-product attention backends: ember's attention is one composite on every
# device; the switches are kept so that programs choosing a backend run.
_sdp = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True}


def flash_sdp_enabled():
    """Whether the flash attention backend may be chosen (a kept flag)."""
    return _sdp["flash"]


def mem_efficient_sdp_enabled():
    """Whether the memory-efficient attention backend may be chosen (a kept flag)."""
    return _sdp["mem_efficient"]


def math_sdp_enabled():
    """Whether the math attention backend may be chosen (a kept flag)."""
    return _sdp["math"]


def cudnn_sdp_enabled():
    """Whether the cuDNN attention backend may be chosen (a kept flag)."""
    return _sdp["cudnn"]


def enable_flash_sdp(enabled):
    """Allow or forbid the flash attention backend (kept; ember has one attention)."""
    _sdp["flash"] = bool(enabled)


def enable_mem_efficient_sdp(enabled):
    """Allow or forbid the memory-efficient attention backend (kept)."""
    _sdp["mem_efficient"] = bool(enabled)


def enable_math_sdp(enabled):
    """Allow or forbid the math attention backend (kept)."""
    _sdp["math"] = bool(enabled)


def enable_cudnn_sdp(enabled):
    """Allow or forbid the cuDNN attention backend (kept)."""
    _sdp["cudnn"] = bool(enabled)


_libraries = {"linalg": "default", "blas": "default"}


def preferred_linalg_library(backend=None):
    """The linear-algebra library CUDA ops prefer: a kept choice ("default")."""
    if backend is not None:
        _libraries["linalg"] = str(backend)
    return _libraries["linalg"]


def preferred_blas_library(backend=None):
    """The BLAS CUDA matmuls prefer: a kept choice ("default")."""
    if backend is not None:
        _libraries["blas"] = str(backend)
    return _libraries["blas"]
