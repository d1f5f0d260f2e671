"""``torch.use_deterministic_algorithms``, its queries, and the alert ops call where they
have no deterministic implementation.

ember's CPU kernels give the same bits on every run for a given thread budget (parallel
reductions split their work by a fixed plan), so the switch changes no CPU result. On
CUDA, with the switch on, the float sums that otherwise add with atomics (index_put_ and
index_add_ with accumulation, scatter_add, scatter_reduce 'sum'/'mean') take ordered
kernels instead, as PyTorch's take its sorted index_put; where PyTorch has no such path
(put_, bincount with weights, histc of floats and scatter's products on CUDA, put_
without accumulation anywhere) the backend calls `alert_not_deterministic` with the
name PyTorch's kernel reports, which raises PyTorch's error (or warns, with warn_only).
So do max_unpool (every device), N-d nll_loss and median/nanmedian with indices on CUDA;
the backward passes PyTorch refuses on CUDA alert through ember-nn's marks
(`nn_ops.nondeterministic_backward`) as the backward runs.
"""
import warnings

from .. import _backends

__all__ = ["use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
           "is_deterministic_algorithms_warn_only_enabled", "set_deterministic_debug_mode",
           "get_deterministic_debug_mode", "alert_not_deterministic", "alert_if_atomic"]

_state = {"enabled": False, "warn_only": False}
_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def use_deterministic_algorithms(mode, *, warn_only=False):
    """Ask for deterministic algorithms (``mode``), warning rather than raising where an
    op has none when ``warn_only``."""
    if not isinstance(mode, bool):
        raise TypeError(f"_set_deterministic_algorithms(): argument 'mode' (position 1) must be bool, "
                        f"not {type(mode).__name__}")
    _state.update(enabled=mode, warn_only=bool(warn_only))


def are_deterministic_algorithms_enabled():
    """Whether `use_deterministic_algorithms(True)` is in effect."""
    return _state["enabled"]


def is_deterministic_algorithms_warn_only_enabled():
    """Whether deterministic mode only warns (``warn_only=True``)."""
    return _state["warn_only"]


def set_deterministic_debug_mode(debug_mode):
    """The same switch by level: 0 or "default" (off), 1 or "warn", 2 or "error"."""
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, `warn`, `error`, "
                               f"but got {debug_mode}")
        debug_mode = _DEBUG_MODES[debug_mode]
    elif isinstance(debug_mode, bool) or not isinstance(debug_mode, int):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}")
    use_deterministic_algorithms(debug_mode > 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode():
    """The level `set_deterministic_debug_mode` takes: 0, 1 (warn only) or 2."""
    if not _state["enabled"]:
        return 0
    return 1 if _state["warn_only"] else 2


def alert_not_deterministic(caller):
    """PyTorch's ``alertNotDeterministic``: with deterministic algorithms on, raise its
    RuntimeError naming `caller` (the kernel PyTorch names), or warn with warn_only."""
    if not _state["enabled"]:
        return
    if _state["warn_only"]:
        warnings.warn(f"{caller} does not have a deterministic implementation, but you set "
                      "'torch.use_deterministic_algorithms(True, warn_only=True)'. You can file an issue at "
                      "https://github.com/pytorch/pytorch/issues to help us prioritize adding deterministic "
                      "support for this operation.", UserWarning, stacklevel=3)
        return
    raise RuntimeError(f"{caller} does not have a deterministic implementation, but you set "
                       "'torch.use_deterministic_algorithms(True)'. You can turn off determinism just for this "
                       "operation, or you can use the 'warn_only=True' option, if that's acceptable for your "
                       "application. You can also file an issue at https://github.com/pytorch/pytorch/issues to "
                       "help us prioritize adding deterministic support for this operation.")


def alert_if_atomic(tensor, caller):
    """`alert_not_deterministic(caller)` when `tensor`'s backend accumulates with atomics
    (CUDA): for the ops whose CUDA kernels PyTorch counts nondeterministic and whose CPU
    kernels it does not, at the op (median's indices) or in a backward (the marks of
    `nn_ops.nondeterministic_backward`). The backend says so: no device type is read here."""
    if _state["enabled"] and _backends.get(tensor._device).ATOMIC_ACCUMULATION:
        alert_not_deterministic(caller)
