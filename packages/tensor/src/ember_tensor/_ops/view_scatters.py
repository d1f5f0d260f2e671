"""The out-of-place writes into a view: select_scatter, slice_scatter, diagonal_scatter.

Each is `input` cloned with `src` copied into one view of the clone (a select, a slice or
a diagonal), so it runs on every device and autograd differentiates it through clone and
copy_: `input`'s gradient is the incoming one with the view's positions zeroed, `src`'s is
the view of it. `src` is cast to `input`'s dtype, as PyTorch does.
"""
from .._dispatch import op
from . import convert, indexing, views
from .views import wrap_dim

__all__ = ["select_scatter", "slice_scatter", "diagonal_scatter"]


def _scatter_into_view(input, src, view_of):
    out = convert.clone(input)
    target = view_of(out)
    if tuple(src.shape) != tuple(target.shape):
        raise RuntimeError("expected src to have a size equal to the slice of self. "
                           f"src size = {list(src.shape)}, slice size = {list(target.shape)}")
    target.copy_(src)
    return out


@op()
def select_scatter(input, src, dim, index):
    """`input` with `src` written at index `index` of dim `dim` (a new tensor).

    >>> import ember_tensor as torch
    >>> torch.select_scatter(torch.zeros(2, 2), torch.ones(2), 0, 1).tolist()
    [[0.0, 0.0], [1.0, 1.0]]
    """
    if input.dim() == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    size = input.shape[wrap_dim(dim, input.dim())]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(input.shape)} "
                         f"at dimension {dim}")
    return _scatter_into_view(input, src, lambda out: views.select(out, dim, index))


@op()
def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """`input` with `src` written into the slice start:end:step of dim `dim` (a new tensor).

    >>> import ember_tensor as torch
    >>> torch.slice_scatter(torch.zeros(4), torch.ones(2), 0, 0, None, 2).tolist()
    [1.0, 0.0, 1.0, 0.0]
    """
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    key = (slice(None),) * wrap_dim(dim, max(input.dim(), 1)) + (slice(start, end, step),)
    return _scatter_into_view(input, src, lambda out: indexing.getitem(out, key))


@op()
def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """`input` with `src` written onto its `offset`-th diagonal over dims dim1 and dim2 (a
    new tensor; `src` has the shape ``input.diagonal(offset, dim1, dim2)`` has).

    >>> import ember_tensor as torch
    >>> torch.diagonal_scatter(torch.zeros(2, 2), torch.ones(2)).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    return _scatter_into_view(input, src, lambda out: views.diagonal(out, offset, dim1, dim2))
