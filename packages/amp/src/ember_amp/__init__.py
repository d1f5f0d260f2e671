"""ember-amp: automatic mixed precision for ember (``torch.amp``).

``autocast`` regions run each op in the dtype PyTorch's per-device op lists choose (a
wrapper of ember-tensor's dispatcher, above autograd's recording, so the casts have
gradients); ``GradScaler`` scales the loss, unscales the gradients and skips steps that
found inf or nan.

>>> import ember_tensor as torch
>>> import ember_amp
>>> with ember_amp.autocast("cpu"):
...     torch.ones(2, 3).matmul(torch.ones(3, 1)).dtype
torch.bfloat16
"""

import ember_autograd  # noqa: F401 -- the casts are recorded by autograd: it must be installed
import ember_tensor  # noqa: F401
from ember_tensor.version import check_layers

__version__ = "0.1.0"

_NEEDED_BY = f"ember-amp {__version__}"
check_layers(__file__, _NEEDED_BY)

from . import autocast_mode, grad_scaler  # noqa: E402 -- after the version checks
from .autocast_mode import (  # noqa: E402
    autocast, autocast_decrement_nesting, autocast_increment_nesting, clear_autocast_cache, custom_bwd,
    custom_fwd, get_autocast_cpu_dtype, get_autocast_dtype, get_autocast_gpu_dtype, is_autocast_available,
    is_autocast_cache_enabled, is_autocast_cpu_enabled, is_autocast_enabled, set_autocast_cache_enabled,
    set_autocast_cpu_dtype, set_autocast_cpu_enabled, set_autocast_dtype, set_autocast_enabled,
    set_autocast_gpu_dtype,
)
from .grad_scaler import GradScaler, OptState  # noqa: E402
from ember_autograd.checkpoint import register_recompute_state  # noqa: E402

register_recompute_state(autocast_mode.recompute_state)  # a checkpoint recomputes under the forward's autocast
from . import cpu_amp, cuda_amp  # noqa: E402,F401

__all__ = [
    "autocast", "custom_fwd", "custom_bwd", "is_autocast_available", "GradScaler",
    # PyTorch keeps these at its top level (torch.is_autocast_enabled, ...); ember re-exports them there.
    "is_autocast_enabled", "set_autocast_enabled", "get_autocast_dtype", "set_autocast_dtype",
    "is_autocast_cache_enabled", "set_autocast_cache_enabled", "clear_autocast_cache",
    "autocast_increment_nesting", "autocast_decrement_nesting", "is_autocast_cpu_enabled",
    "set_autocast_cpu_enabled", "get_autocast_cpu_dtype", "set_autocast_cpu_dtype", "get_autocast_gpu_dtype",
    "set_autocast_gpu_dtype", "OptState", "autocast_mode", "grad_scaler",
    "cpu_amp", "cuda_amp",
]
