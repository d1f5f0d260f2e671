"""Splitting view ops: a tensor's pieces along one dim, each a view of it (`narrow` or
`select`), by piece size, by count, at indices, or along a named direction."""
from .._dispatch import op
from .._tensor import wrap_dim
from .views import narrow, select


def _split_sizes(self, split_size_or_sections, dim):
    size = self._data.shape[dim]
    if isinstance(split_size_or_sections, int):
        step = split_size_or_sections
        if step <= 0 and size:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {size}")
        return [min(step, size - i) for i in range(0, size, step)] if size else [0]
    sections = list(split_size_or_sections)
    if sum(sections) != size:
        raise RuntimeError(
            f"split_with_sizes expects split_sizes to sum exactly to {size} (input tensor's size at "
            f"dimension {dim}), but got split_sizes={sections}")
    return sections


@op()
def split(self, split_size_or_sections, dim=0):
    """Views of consecutive pieces of dim `dim` (int: pieces of that size; list: those sizes)."""
    dim = wrap_dim(dim, self._data.ndim)
    pieces, start = [], 0
    for n in _split_sizes(self, split_size_or_sections, dim):
        pieces.append(narrow(self, dim, start, n))
        start += n
    return tuple(pieces)


@op()
def tensor_split(self, indices_or_sections, dim=0):
    """Split into `n` nearly equal pieces, or at the given indices."""
    dim = wrap_dim(dim, self._data.ndim)
    size = self._data.shape[dim]
    if isinstance(indices_or_sections, int):
        n = indices_or_sections
        base, extra = divmod(size, n)
        sizes = [base + 1] * extra + [base] * (n - extra)
    else:
        bounds = [0] + [min(max(i, 0), size) for i in indices_or_sections] + [size]
        sizes = [max(0, b - a) for a, b in zip(bounds, bounds[1:])]
    pieces, start = [], 0
    for n in sizes:
        pieces.append(narrow(self, dim, min(start, size), n))
        start += n
    return tuple(pieces)


def _directional_split(name, self, indices_or_sections, dim, min_dims):
    """hsplit/vsplit/dsplit: `tensor_split` along `dim`, with an int that must divide it."""
    ndim = self._data.ndim
    if ndim < min_dims:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {min_dims} dimension, but got "
                           f"a tensor with {ndim} dimensions!")
    if isinstance(indices_or_sections, int):
        size = self._data.shape[dim]
        if indices_or_sections < 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {indices_or_sections}")
        if indices_or_sections == 0 or size % indices_or_sections:
            raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the size of the "
                               f"dimension {size} is not divisible by the split_size {indices_or_sections}!")
    return tensor_split(self, indices_or_sections, dim)


@op()
def hsplit(self, indices_or_sections):
    """Split horizontally: along dim 1 (dim 0 of a 1-d tensor), into equal sections or at
    indices (`tensor_split`'s rules; an int must divide the dim).

    >>> import ember_tensor as torch
    >>> [p.tolist() for p in torch.hsplit(torch.arange(4).reshape(1, 4), 2)]
    [[[0, 1]], [[2, 3]]]
    """
    dim = 1 if self._data.ndim >= 2 else 0
    return _directional_split("hsplit", self, indices_or_sections, dim, 1)


@op()
def vsplit(self, indices_or_sections):
    """Split vertically: along dim 0 of a tensor of 2 or more dims (see `hsplit`)."""
    return _directional_split("vsplit", self, indices_or_sections, 0, 2)


@op()
def dsplit(self, indices_or_sections):
    """Split depth-wise: along dim 2 of a tensor of 3 or more dims (see `hsplit`)."""
    return _directional_split("dsplit", self, indices_or_sections, 2, 3)


@op()
def chunk(self, chunks, dim=0):
    """Split into `chunks` pieces of size ceil(n / chunks) (the last may be smaller)."""
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0, got: %d" % chunks)
    dim = wrap_dim(dim, self._data.ndim)
    size = self._data.shape[dim]
    step = max(1, -(-size // chunks))
    return split(self, step, dim)


@op()
def unbind(self, dim=0):
    """All slices along `dim`, each without that dim."""
    dim = wrap_dim(dim, self._data.ndim)
    return tuple(select(self, dim, i) for i in range(self._data.shape[dim]))
