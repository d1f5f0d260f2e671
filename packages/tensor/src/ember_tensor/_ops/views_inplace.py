"""In-place shape ops: unsqueeze_, squeeze_, transpose_ (swapdims_, swapaxes_), t_,
as_strided_ and resize_.

They change the tensor's own shape, strides and offset and leave its storage (and the
other tensors viewing it) alone. Each computes the geometry with the view op of the same
name and gives it to `self`, so the checks and errors are the view op's.
"""
from .. import _backends
from .._dispatch import op
from . import views

__all__ = ["unsqueeze_", "squeeze_", "transpose_", "swapdims_", "swapaxes_", "t_", "as_strided_", "resize_"]


def _take_geometry(self, view):
    """Make `self` look at memory the way `view` (a view of self's storage) does."""
    self._data = view._data
    self._offset = view._offset
    return self


def _plain_view(fn, self, *args):
    # The view op is called past the dispatcher (`.impl`): the in-place op is what gets
    # recorded, not a new tensor.
    return _take_geometry(self, fn.impl(self, *args))


@op(inplace=True)
def unsqueeze_(self, dim):
    """In-place `unsqueeze`: insert a size-1 dim at `dim`.

    >>> import ember_tensor as torch
    >>> x = torch.zeros(2, 3)
    >>> x.unsqueeze_(0).shape
    torch.Size([1, 2, 3])
    """
    return _plain_view(views.unsqueeze, self, dim)


@op(inplace=True)
def squeeze_(self, dim=None):
    """In-place `squeeze`: remove size-1 dims (all, or those in `dim`)."""
    return _plain_view(views.squeeze, self, dim)


@op(inplace=True)
def transpose_(self, dim0, dim1):
    """In-place `transpose`: swap dims `dim0` and `dim1`."""
    return _plain_view(views.transpose, self, dim0, dim1)


swapdims_ = swapaxes_ = transpose_


@op(inplace=True)
def t_(self):
    """In-place `t`: transpose a tensor of at most 2 dims."""
    if self._data.ndim > 2:
        raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is {self._data.ndim}D")
    return _plain_view(views.t, self)


@op(inplace=True)
def as_strided_(self, size, stride, storage_offset=None):
    """In-place `as_strided`: give `self` this size, stride and storage offset."""
    return _plain_view(views.as_strided, self, size, stride, storage_offset)


@op()
def resize_(self, *sizes, memory_format=None):
    """Give `self` shape `sizes`, contiguous. Elements that fit in the current storage
    keep their memory; a larger size gets a new storage holding the old elements first
    and uninitialised memory after them (PyTorch's contract: read only what you wrote).

    >>> import ember_tensor as torch
    >>> torch.arange(6).resize_(2, 2).tolist()
    [[0, 1], [2, 3]]
    """
    if self._requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    shape = views._shape_arg(sizes)
    for n in shape:
        if n < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {n}: {list(shape)}")
    numel = 1
    for n in shape:
        numel *= n
    backend = _backends.get(self._device).storage
    buf = self._storage.buf
    offset = self._offset
    if offset + numel > buf.size:
        # Grow: a new buffer with the old storage's contents at the same offsets. Other
        # tensors made over the old storage keep the old memory (ember's arrays cannot be
        # re-pointed), where PyTorch's would see the new one.
        grown = backend.empty((offset + numel,), buf.dtype)
        if buf.size:
            backend.copy_(grown[:buf.size], backend.as_strided(buf, (buf.size,), (1,), 0))
        self._storage.buf = buf = grown
    self._data = backend.as_strided(buf, shape, views._contiguous_strides(shape), offset)
    return self
