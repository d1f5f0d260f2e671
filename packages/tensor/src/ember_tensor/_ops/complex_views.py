"""Views between complex tensors and their real parts: ``.real``, ``.imag``,
`view_as_real` and `view_as_complex` (and their ``_copy`` forms).

A complex element is a (real, imag) pair of its part's type, so these views read the
same memory with the other element type (`StorageAlias`): shapes gain or lose a
trailing dim of 2, strides and offsets double or halve. Writes through either side show
on the other, and both count on the base storage's version counter.
"""
from .. import _backends
from .. import _dtype as D
from .._dispatch import op
from .._tensor import StorageAlias, Tensor
from .elementwise import copy_to_out

__all__ = ["real", "imag", "view_as_real", "view_as_complex", "view_as_real_copy", "view_as_complex_copy"]


def _reinterpreted(self, dtype, shape, strides, offset):
    """A view of `self`'s memory as `dtype` elements, with the given element layout."""
    storage = _backends.get(self._device).storage
    base = self._storage.base if isinstance(self._storage, StorageAlias) else self._storage
    alias = StorageAlias(base, storage.reinterpret_buffer(base.buf, dtype.np))
    data = storage.as_strided(alias.buf, tuple(shape), tuple(strides), offset)
    t = Tensor._wrap(data, dtype, self._device, alias, offset)
    t._view_base = self if self._view_base is None else self._view_base
    return t


def _parts_view(self, part):
    strides = [2 * s for s in self.stride()]
    return _reinterpreted(self, self._dtype.to_real(), self.shape, strides, 2 * self.storage_offset() + part)


@op(view=True)
def view_as_real(input):
    """A real view of complex `input` with a trailing dim of 2 holding (real, imag).

    >>> import ember_tensor as torch
    >>> torch.view_as_real(torch.tensor([1 + 2j]))
    tensor([[1., 2.]])
    """
    if input._dtype.category != D._COMPLEX:
        raise RuntimeError("view_as_real is only supported for complex tensors")
    strides = [2 * s for s in input.stride()] + [1]
    return _reinterpreted(input, input._dtype.to_real(), tuple(input.shape) + (2,), strides,
                          2 * input.storage_offset())


@op(view=True)
def view_as_complex(input):
    """A complex view of float `input` whose last dim (of size 2, stride 1) holds (real, imag).

    >>> import ember_tensor as torch
    >>> torch.view_as_complex(torch.tensor([[1., 2.]]))
    tensor([1.+2.j])
    """
    if input._dtype not in (D.float16, D.float32, D.float64):
        raise RuntimeError(
            "view_as_complex is only supported for half, float and double tensors, but got a tensor of "
            f"scalar type: {D.scalar_type_name(input._dtype)}")
    if input.dim() == 0 or input.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    strides = input.stride()
    if strides[-1] != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % 2 for s in strides[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if input.storage_offset() % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    return _reinterpreted(input, input._dtype.to_complex(), tuple(input.shape[:-1]),
                          [s // 2 for s in strides[:-1]], input.storage_offset() // 2)


@op(view=True)
def real(input):
    """The real parts of complex `input` as a view (a real tensor is returned as it is).

    >>> import ember_tensor as torch
    >>> torch.real(torch.tensor([1 + 2j]))
    tensor([1.])
    """
    if input._dtype.category != D._COMPLEX:
        return input
    return _parts_view(input, 0)


@op(view=True)
def imag(input):
    """The imaginary parts of complex `input` as a view; PyTorch's error for real tensors.

    >>> import ember_tensor as torch
    >>> torch.imag(torch.tensor([1 + 2j]))
    tensor([2.])
    """
    if input._dtype.category != D._COMPLEX:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return _parts_view(input, 1)


@op()
def view_as_real_copy(input, *, out=None):
    """`view_as_real` into new memory."""
    return copy_to_out(view_as_real(input).clone(), out)


@op()
def view_as_complex_copy(input, *, out=None):
    """`view_as_complex` into new memory."""
    return copy_to_out(view_as_complex(input).clone(), out)
