"""AMP's gradient ops: PyTorch's ``torch._amp_foreach_non_finite_check_and_unscale_`` and
``torch._amp_update_scale_`` (same names, arguments and errors), which GradScaler
(ember-amp) calls once per step.

The check-and-unscale op takes every gradient of a device and dtype group in one call and
makes one pass over each (multiply by the inverse scale, and in the same pass look for inf
and nan), where a composition of ops would make three (isfinite, all, mul). ``found_inf``,
``inv_scale``, the scale and the growth tracker are one-element tensors that stay on their
device: on CUDA the kernels read and write them there, and nothing is read back.
"""
from .. import _backends
from .. import _dtype as D
from .._dispatch import op
from .._tensor import Tensor
from ._iter import type_name

__all__ = ["_amp_foreach_non_finite_check_and_unscale_", "_amp_update_scale_"]

_FLOAT_TYPES = (D.float16, D.bfloat16, D.float32, D.float64)
_INT_TYPES = (D.int32, D.int64)


def _check_one_element(t, name, dtypes, kind):
    if t._data.size != 1:
        raise RuntimeError(f"{name} must be a 1-element tensor.")
    if t._dtype not in dtypes:
        raise RuntimeError(f"{name} must be {kind} tensor.")


@op("_amp_foreach_non_finite_check_and_unscale_")
def _amp_foreach_non_finite_check_and_unscale_(self, found_inf, inv_scale):
    """Multiply every tensor of ``self`` (a list of gradients) by ``inv_scale`` in place and set
    ``found_inf`` to 1.0 if any of their elements is inf or nan.

    >>> import ember_tensor as torch
    >>> grads = [torch.tensor([2.0, 4.0]), torch.tensor([float("inf")])]
    >>> found_inf = torch.zeros(1)
    >>> torch._amp_foreach_non_finite_check_and_unscale_(grads, found_inf, torch.tensor([0.5]))
    >>> grads[0], found_inf
    (tensor([1., 2.]), tensor([1.]))
    """
    _check_one_element(found_inf, "found_inf", (D.float32,), "a float")
    _check_one_element(inv_scale, "inv_scale", (D.float32,), "a float")
    grads = list(self)
    for g in grads:
        if not isinstance(g, Tensor):
            raise TypeError(f"expected Tensor as element 0 in argument 0, but got {type(g).__name__}")
        if g._dtype not in _FLOAT_TYPES:
            raise NotImplementedError(
                f"\"_amp_foreach_non_finite_check_and_unscale_{g._device.type}\" not implemented for "
                f"'{type_name(g._dtype)}'")
        if g._device != found_inf._device or g._device != inv_scale._device:
            raise RuntimeError("Expected all tensors to be on the same device, but found at least two "
                               f"devices, {found_inf._device} and {g._device}!")
    if not grads:
        return
    _backends.get(found_inf._device).optim.non_finite_check_and_unscale(
        [g._data for g in grads], found_inf._data, inv_scale._data)
    for g in grads:
        g._bump_version()
    found_inf._bump_version()


@op("_amp_update_scale_")
def _amp_update_scale_(self, growth_tracker, found_inf, scale_growth_factor, scale_backoff_factor,
                       growth_interval):
    """Update the loss scale ``self`` and ``growth_tracker`` in place: times
    ``scale_backoff_factor`` (and the tracker reset) when ``found_inf`` is nonzero, else times
    ``scale_growth_factor`` once ``growth_interval`` clean steps have run in a row. Returns ``self``.

    >>> import ember_tensor as torch
    >>> scale, tracker = torch.tensor(4.0), torch.tensor(0, dtype=torch.int32)
    >>> torch._amp_update_scale_(scale, tracker, torch.tensor(1.0), 2.0, 0.5, 3)
    tensor(2.)
    """
    if growth_tracker._dtype not in _INT_TYPES:
        raise RuntimeError("growth_tracker must be an int tensor.")
    if self._dtype is not D.float32:
        raise RuntimeError("current_scale must be a float tensor.")
    if self._data.size != 1:
        raise RuntimeError("current_scale must be a 1-element tensor.")
    if growth_tracker._data.size != 1:
        raise RuntimeError("growth_tracker must be a 1-element tensor.")
    if found_inf._dtype is not D.float32:
        raise RuntimeError("found_inf must be a float tensor.")
    if found_inf._data.size != 1:
        raise RuntimeError("found_inf must be a 1-element tensor.")
    _backends.get(self._device).optim.update_scale(
        self._data, growth_tracker._data, found_inf._data, scale_growth_factor, scale_backoff_factor,
        growth_interval)
    self._bump_version()
    growth_tracker._bump_version()
    return self
