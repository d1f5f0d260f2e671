"""``torch.autocast``: regions where ops run in the dtype PyTorch's op lists choose.

>>> import ember_tensor as torch
>>> from ember_amp import autocast
>>> a, b = torch.ones(2, 3), torch.ones(3, 4)
>>> with autocast("cpu"):
...     (a @ b).dtype, torch.cat([a, a.bfloat16()]).dtype
(torch.bfloat16, torch.float32)
>>> (a @ b).dtype
torch.float32
"""
import collections.abc
import contextlib
import functools
import warnings

import numpy as np

import ember_tensor
from ember_tensor import Tensor

from . import _casting
from ._casting import DEVICE_TYPES, state

__all__ = [
    "autocast", "autocast_decorator", "is_autocast_available", "custom_fwd", "custom_bwd",
    "is_autocast_enabled", "set_autocast_enabled", "get_autocast_dtype", "set_autocast_dtype",
    "is_autocast_cache_enabled", "set_autocast_cache_enabled", "clear_autocast_cache",
    "autocast_increment_nesting", "autocast_decrement_nesting",
    # PyTorch's deprecated per-device spellings (each warns with PyTorch's DeprecationWarning)
    "is_autocast_cpu_enabled", "set_autocast_cpu_enabled", "get_autocast_cpu_dtype", "set_autocast_cpu_dtype",
    "get_autocast_gpu_dtype", "set_autocast_gpu_dtype",
]


def _device_type(device_type):
    """`device_type` checked as PyTorch checks it (RuntimeError naming the valid types)."""
    ember_tensor.device(device_type)  # raises PyTorch's error for an unknown device string
    return device_type


def is_autocast_available(device_type):
    """Whether autocast can run on `device_type` ('cpu' and 'cuda' in ember)."""
    return _device_type(device_type) in DEVICE_TYPES


def _known(device_type):
    if _device_type(device_type) not in DEVICE_TYPES:
        raise RuntimeError(f"User specified an unsupported autocast device_type '{device_type}'")
    return device_type


def is_autocast_enabled(device_type=None):
    """Whether autocast is on for `device_type` in this thread (no argument: 'cuda', as PyTorch)."""
    return state.enabled[_known("cuda" if device_type is None else device_type)]


def set_autocast_enabled(device_type, enabled=None):
    """Turn autocast on or off for `device_type` in this thread (what the context manager
    calls); ``set_autocast_enabled(enabled)`` alone means 'cuda', as in PyTorch."""
    if enabled is None:
        device_type, enabled = "cuda", device_type
    _casting.set_enabled(_known(device_type), enabled)


def get_autocast_dtype(device_type):
    """The lower-precision dtype of `device_type`'s regions (bfloat16 on CPU, float16 on CUDA)."""
    return state.dtype[_known(device_type)]


def set_autocast_dtype(device_type, dtype):
    """Set the lower-precision dtype of `device_type`'s regions in this thread."""
    state.dtype[_known(device_type)] = dtype


def is_autocast_cache_enabled():
    """Whether casts of float32 weights are cached inside a region."""
    return state.cache_enabled


def set_autocast_cache_enabled(enabled):
    """Turn the weight-cast cache on or off in this thread."""
    state.cache_enabled = bool(enabled)


def clear_autocast_cache():
    """Drop the cached lower-precision copies of weights."""
    _casting.clear_cache()


def autocast_increment_nesting():
    """Enter one more autocast region; returns the depth."""
    state.nesting += 1
    return state.nesting


def autocast_decrement_nesting():
    """Leave an autocast region; returns the depth (the cache is cleared at 0)."""
    state.nesting -= 1
    return state.nesting


def _deprecated(old, new):
    warnings.warn(f"torch.{old} is deprecated. Please use torch.{new} instead.", DeprecationWarning, stacklevel=3)


def is_autocast_cpu_enabled():
    """Deprecated: ``is_autocast_enabled('cpu')``."""
    _deprecated("is_autocast_cpu_enabled()", "is_autocast_enabled('cpu')")
    return is_autocast_enabled("cpu")


def set_autocast_cpu_enabled(enabled):
    """Deprecated: ``set_autocast_enabled('cpu', enabled)``."""
    _deprecated("set_autocast_cpu_enabled(enabled)", "set_autocast_enabled('cpu', enabled)")
    set_autocast_enabled("cpu", enabled)


def get_autocast_cpu_dtype():
    """Deprecated: ``get_autocast_dtype('cpu')``."""
    _deprecated("get_autocast_cpu_dtype()", "get_autocast_dtype('cpu')")
    return get_autocast_dtype("cpu")


def set_autocast_cpu_dtype(dtype):
    """Deprecated: ``set_autocast_dtype('cpu', dtype)``."""
    _deprecated("set_autocast_cpu_dtype(dtype)", "set_autocast_dtype('cpu', dtype)")
    set_autocast_dtype("cpu", dtype)


def get_autocast_gpu_dtype():
    """Deprecated: ``get_autocast_dtype('cuda')``."""
    _deprecated("get_autocast_gpu_dtype()", "get_autocast_dtype('cuda')")
    return get_autocast_dtype("cuda")


def set_autocast_gpu_dtype(dtype):
    """Deprecated: ``set_autocast_dtype('cuda', dtype)``."""
    _deprecated("set_autocast_gpu_dtype(dtype)", "set_autocast_dtype('cuda', dtype)")
    set_autocast_dtype("cuda", dtype)


def autocast_decorator(autocast_instance, func):
    """`func` run inside `autocast_instance`."""
    @functools.wraps(func)
    def decorate_autocast(*args, **kwargs):
        with autocast_instance:
            return func(*args, **kwargs)
    return decorate_autocast


class autocast:
    """Context manager or decorator: ops in the region run in mixed precision.

    Ops on PyTorch's lower-precision list (matmul, linear, conv, bmm, addmm, ...) run in
    `dtype`; ops on its float32 list (losses, norms, and on CUDA softmax, exp/log, sums, ...)
    in float32; ops on its promote list (cat, stack, ...) in the widest input dtype. The casts
    are recorded by autograd, so gradients come back in each parameter's own dtype. Wrap the
    forward pass and the loss, not the backward.

    Args:
        device_type: 'cpu' or 'cuda'.
        dtype: bfloat16 or float16 (default: `get_autocast_dtype(device_type)`, bfloat16 on
            CPU and float16 on CUDA).
        enabled: False turns autocast off inside the region (also inside an enabled one).
        cache_enabled: cache each float32 weight's cast inside the region (default: the
            current setting, True).

    >>> import ember_tensor as torch
    >>> with autocast(device_type="cpu", dtype=torch.bfloat16):
    ...     torch.mm(torch.ones(2, 2), torch.ones(2, 2)).dtype
    torch.bfloat16
    """

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.device = _known(device_type)
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtype
        self._cache_enabled = is_autocast_cache_enabled() if cache_enabled is None else cache_enabled
        supported = (ember_tensor.bfloat16, ember_tensor.float16)
        if enabled:
            if self.device == "cuda":
                if not ember_tensor.cuda.is_available():
                    warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.",
                                  stacklevel=2)
                    enabled = False
                elif self.fast_dtype == ember_tensor.bfloat16 and not ember_tensor.cuda.is_bf16_supported():
                    raise RuntimeError(
                        "Current CUDA Device does not support bfloat16. Please switch dtype to float16.")
            elif self.fast_dtype not in supported:
                name = self.device.upper()
                warnings.warn(f"In {name} autocast, but the target dtype is not supported. Disabling autocast.\n"
                              f"{name} Autocast only supports dtypes of "
                              + ", ".join(map(str, supported)) + " currently.", stacklevel=2)
                enabled = False
        self._enabled = enabled

    def __enter__(self):
        self.prev_cache_enabled = is_autocast_cache_enabled()
        self.prev = is_autocast_enabled(self.device)
        self.prev_fastdtype = get_autocast_dtype(self.device)
        set_autocast_enabled(self.device, self._enabled)
        set_autocast_dtype(self.device, self.fast_dtype)
        autocast_increment_nesting()
        set_autocast_cache_enabled(self._cache_enabled)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        if autocast_decrement_nesting() == 0:
            clear_autocast_cache()
        set_autocast_enabled(self.device, self.prev)
        set_autocast_dtype(self.device, self.prev_fastdtype)
        set_autocast_cache_enabled(self.prev_cache_enabled)
        return False

    def __call__(self, func):
        if not callable(func):
            raise TypeError(
                f"autocast()(func) requires a callable, but got {type(func).__name__}. "
                f"Did you mean to use autocast as a context manager? For example:\n"
                f"    with torch.autocast(device_type=...):\n"
                f"        output = model(input)")
        return autocast_decorator(self, func)


def _cast(value, device_type, dtype):
    """`value` with its eligible floating tensors (nested in lists, tuples, dicts) cast to `dtype`."""
    if isinstance(value, Tensor):
        eligible = (value.is_floating_point() and value.device.type == device_type
                    and value.dtype is not ember_tensor.float64)
        return value.to(dtype) if eligible else value
    if isinstance(value, (str, bytes, np.ndarray)):
        return value
    if isinstance(value, collections.abc.Mapping):
        return {_cast(k, device_type, dtype): _cast(v, device_type, dtype) for k, v in value.items()}
    if isinstance(value, collections.abc.Iterable):
        iterable = (_cast(v, device_type, dtype) for v in value)
        return type(value)(iterable) if isinstance(value, (list, tuple)) else iterable
    return value


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """Decorator for the ``forward`` of an ``autograd.Function`` under autocast.

    With `cast_inputs`, floating inputs are cast to it and ``forward`` runs with autocast
    off (inside an enabled region only); without it, ``forward`` runs in the current state,
    which `custom_bwd` restores for ``backward``.
    """
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        args[0]._dtype = get_autocast_dtype(device_type)
        if cast_inputs is None:
            args[0]._fwd_used_autocast = is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        in_region = is_autocast_enabled(device_type)
        args[0]._fwd_used_autocast = False
        if in_region:
            with autocast(device_type=device_type, enabled=False):
                return fwd(*_cast(args, device_type, cast_inputs), **_cast(kwargs, device_type, cast_inputs))
        return fwd(*args, **kwargs)

    return decorate_fwd


def custom_bwd(bwd=None, *, device_type):
    """Decorator for the ``backward`` of an ``autograd.Function``: runs it in the autocast
    state its ``forward`` (decorated with `custom_fwd`) ran in."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        with autocast(device_type=device_type, enabled=args[0]._fwd_used_autocast, dtype=args[0]._dtype):
            return bwd(*args, **kwargs)

    return decorate_bwd


@contextlib.contextmanager
def _regions(settings):
    with contextlib.ExitStack() as stack:
        for device_type, dtype in settings:
            stack.enter_context(autocast(device_type, dtype=dtype))
        yield


def recompute_state():
    """The autocast regions in force now, as a context manager that re-enters them:
    torch.utils.checkpoint recomputes a region in backward, outside the forward's
    ``with autocast(...)``, and must cast as the forward did (registered with
    ember-autograd's checkpoint at import)."""
    return _regions([(d, get_autocast_dtype(d)) for d in ("cpu", "cuda") if is_autocast_enabled(d)])
