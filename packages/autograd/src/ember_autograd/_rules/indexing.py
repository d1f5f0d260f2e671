"""Derivatives of indexing (getitem, setitem_) and of joining tensors (cat)."""
import numpy as np

import ember_tensor as E
from ember_tensor import Tensor

from ._registry import composite, derivative
from ._scatter import element_positions, scatter_add_flat


def _key_tuple(key):
    return key if isinstance(key, tuple) else (key,)


def _is_basic(key):
    for k in _key_tuple(key):
        if not (k is None or k is Ellipsis or isinstance(k, (int, slice, np.integer))) or isinstance(k, bool):
            return False
    return True


def _getitem_name(self, key):
    key = _key_tuple(key)
    if not _is_basic(key):
        return "IndexBackward0"
    if any(isinstance(k, slice) for k in key):
        return "SliceBackward0"
    if any(isinstance(k, (int, np.integer)) for k in key):
        return "SelectBackward0"
    if any(k is None for k in key):
        return "UnsqueezeBackward0"
    return "AliasBackward0"


@derivative("getitem", inputs=("self",), name=_getitem_name,
            save=lambda self, key: (tuple(self.shape), key))
def getitem(ctx, grad, shape, key):
    if _is_basic(key):
        out = grad.new_zeros(shape)
        out[key].copy_(grad)
        return out
    # Advanced indexing may pick an element more than once: those gradients add up.
    positions = element_positions(shape).to(grad.device)[key]
    return scatter_add_flat(grad, positions, shape)


def _setitem_name(self, key, value):
    return "CopySlices" if _is_basic(key) else "IndexPutBackward0"


def _value_shape(value):
    return tuple(value.shape) if isinstance(value, Tensor) else None


@derivative("setitem_", inputs=("self", "value"), name=_setitem_name,
            save=lambda self, key, value: (key, _value_shape(value)))
def setitem_(ctx, grad, key, value_shape):
    needs = ctx.needs_input_grad
    grad_self = grad_value = None
    if needs[0]:
        grad_self = grad.clone()
        grad_self[key] = 0
    if needs[1]:
        grad_value = grad[key]
        extra = len(value_shape) - grad_value.dim()
        if extra > 0:  # the value's leading size-1 dims that setitem dropped
            grad_value = grad_value.reshape((1,) * extra + tuple(grad_value.shape))
    return grad_self, grad_value


@derivative("cat", inputs=("*tensors",),
            save=lambda tensors, dim=0, **_: ([tuple(t.shape) for t in tensors], dim))
def cat(ctx, grad, shapes, dim):
    ndim = grad.dim()
    dim = dim % ndim
    grads, start = [], 0
    for shape, need in zip(shapes, ctx.needs_input_grad):
        if len(shape) == 1 and shape[0] == 0 and ndim != 1:
            grads.append(None)  # legacy: empty 1-d tensors take no part in cat
            continue
        n = shape[dim]
        grads.append(grad.narrow(dim, start, n) if need else None)
        start += n
    return tuple(grads)


composite("stack")


def is_tensor(x):
    return isinstance(x, Tensor)


__all__ = ["E"]
