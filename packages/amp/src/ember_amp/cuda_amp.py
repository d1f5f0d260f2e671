"""``torch.cuda.amp``: the deprecated CUDA spellings of `autocast`, `custom_fwd`, `custom_bwd`
and `GradScaler`, each warning (FutureWarning) with PyTorch's message and delegating."""
import functools
import warnings

import ember_tensor

from . import autocast_mode
from .grad_scaler import GradScaler as _GradScaler

__all__ = ["amp_definitely_not_available", "autocast", "custom_bwd", "custom_fwd", "GradScaler"]


def amp_definitely_not_available():
    """True when no CUDA device is usable."""
    return not ember_tensor.cuda.is_available()


class autocast(autocast_mode.autocast):
    """See `ember_amp.autocast`. ``torch.cuda.amp.autocast(args...)`` is deprecated: use
    ``torch.amp.autocast("cuda", args...)``."""

    def __init__(self, enabled=True, dtype=ember_tensor.float16, cache_enabled=True):
        warnings.warn("`torch.cuda.amp.autocast(args...)` is deprecated. "
                      "Please use `torch.amp.autocast('cuda', args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cuda", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


def custom_fwd(fwd=None, *, cast_inputs=None):
    """Deprecated: use ``torch.amp.custom_fwd(args..., device_type='cuda')``."""
    warnings.warn("`torch.cuda.amp.custom_fwd(args...)` is deprecated. "
                  "Please use `torch.amp.custom_fwd(args..., device_type='cuda')` instead.",
                  FutureWarning, stacklevel=2)
    return functools.partial(autocast_mode.custom_fwd, device_type="cuda")(fwd=fwd, cast_inputs=cast_inputs)


def custom_bwd(bwd):
    """Deprecated: use ``torch.amp.custom_bwd(args..., device_type='cuda')``."""
    warnings.warn("`torch.cuda.amp.custom_bwd(args...)` is deprecated. "
                  "Please use `torch.amp.custom_bwd(args..., device_type='cuda')` instead.",
                  FutureWarning, stacklevel=2)
    return functools.partial(autocast_mode.custom_bwd, device_type="cuda")(bwd)


class GradScaler(_GradScaler):
    """See `ember_amp.GradScaler`. ``torch.cuda.amp.GradScaler(args...)`` is deprecated: use
    ``torch.amp.GradScaler("cuda", args...)``."""

    def __init__(self, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                 enabled=True):
        warnings.warn("`torch.cuda.amp.GradScaler(args...)` is deprecated. "
                      "Please use `torch.amp.GradScaler('cuda', args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cuda", init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval, enabled=enabled)
