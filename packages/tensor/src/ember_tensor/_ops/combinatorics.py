"""Index and combination builders: triu_indices, tril_indices, unravel_index,
cartesian_prod, combinations, vander, and the membership test isin.

All are compositions: index patterns that depend only on sizes are made by NumPy on the
host (like `arange`) and moved to the device; the rest is meshgrid, index_select,
cumprod, sort and searchsorted. cartesian_prod, combinations and vander are
differentiated through their parts.
"""
import itertools

import numpy as np

from .. import _dtype as D
from .._dispatch import op
from .._tensor import Tensor
from . import _iter, creation, views
from . import elementwise as E
from . import counting, index_ops, indexing, shape_ops, sorting
from .elementwise import copy_to_out

__all__ = ["triu_indices", "tril_indices", "unravel_index", "cartesian_prod", "combinations", "vander", "isin"]


def _triangle_indices(name, np_fn, row, col, offset, dtype, device):
    if row < 0:
        raise RuntimeError(f"row must be non-negative, got{row}")
    if col < 0:
        raise RuntimeError(f"col must be non-negative, got{col}")
    dtype = D.int64 if dtype is None else D.to_dtype(dtype)
    if dtype not in (D.int32, D.int64):
        raise NotImplementedError(f'"{name}" not implemented for \'{_iter.type_name(dtype)}\'')
    rows, cols = np_fn(row, offset, col)
    return creation.tensor(np.stack([rows, cols]).reshape(2, -1), dtype=dtype, device=device)


@op()
def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The (row, col) coordinates of the upper triangle of a `row` x `col` matrix, as a
    (2, N) tensor in row-major order; `offset` moves the diagonal (> 0: above it).

    >>> import ember_tensor as torch
    >>> torch.triu_indices(2, 3).tolist()
    [[0, 0, 0, 1, 1], [0, 1, 2, 1, 2]]
    """
    return _triangle_indices("triu_indices", np.triu_indices, row, col, offset, dtype, device)


@op()
def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The (row, col) coordinates of the lower triangle of a `row` x `col` matrix, as a
    (2, N) tensor in row-major order; `offset` moves the diagonal (> 0: above it).

    >>> import ember_tensor as torch
    >>> torch.tril_indices(2, 2).tolist()
    [[0, 1, 1], [0, 0, 1]]
    """
    return _triangle_indices("tril_indices", np.tril_indices, row, col, offset, dtype, device)


@op()
def unravel_index(indices, shape):
    """The coordinates in a tensor of `shape` of each flat (row-major) index, as a tuple of
    tensors shaped like `indices` (one per dim). Indices wrap around, as in PyTorch.

    >>> import ember_tensor as torch
    >>> [c.tolist() for c in torch.unravel_index(torch.tensor([5, 7]), (2, 4))]
    [[1, 1], [1, 3]]
    """
    if not isinstance(indices, Tensor):
        raise TypeError(f"expected 'indices' to be a Tensor, but got {type(indices).__name__}")
    if indices._dtype.category != D._INT or indices._dtype is D.bool:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    shape = (shape,) if isinstance(shape, int) else tuple(int(s) for s in shape)
    if any(s < 0 for s in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {shape}")
    flat = indices.to(D.int64)
    coords = []
    for size in reversed(shape):
        coords.append(E.remainder(flat, size) if size else E.mul(flat, 0))
        flat = E.floor_divide(flat, size) if size else flat
    return tuple(reversed(coords))


def _check_vector(t):
    if t._data.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(t._data.shape)}")


@op()
def cartesian_prod(*tensors):
    """The Cartesian product of 1-d tensors: one row per combination, like
    ``itertools.product``; a single tensor is returned as it is.

    >>> import ember_tensor as torch
    >>> torch.cartesian_prod(torch.tensor([1, 2]), torch.tensor([3, 4])).tolist()
    [[1, 3], [1, 4], [2, 3], [2, 4]]
    """
    if len(tensors) == 1 and isinstance(tensors[0], (tuple, list)):
        tensors = tuple(tensors[0])
    for t in tensors:
        _check_vector(t)
    if len(tensors) == 1:
        return tensors[0]
    grids = shape_ops.meshgrid(*tensors, indexing="ij")
    return indexing.stack([views.reshape(g, (-1,)) for g in grids], 1)


@op()
def combinations(input, r=2, with_replacement=False):
    """The length-`r` combinations of the elements of a 1-d tensor, one per row, like
    ``itertools.combinations`` (``combinations_with_replacement`` when asked).

    >>> import ember_tensor as torch
    >>> torch.combinations(torch.tensor([1, 2, 3])).tolist()
    [[1, 2], [1, 3], [2, 3]]
    """
    _check_vector(input)
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return creation.empty((0,), dtype=input._dtype, device=input.device)
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    positions = np.array(list(pick(range(input._data.shape[0]), r)), dtype=np.int64).reshape(-1, r)
    index = creation.tensor(positions.reshape(-1), device=input.device)
    return views.reshape(index_ops.index_select(input, 0, index), (-1, r))


@op()
def vander(x, N=None, increasing=False):  # noqa: N803 - PyTorch's name
    """The Vandermonde matrix of a 1-d tensor: column j is ``x ** (N - 1 - j)`` (``x ** j``
    with `increasing`); `N` columns, ``len(x)`` by default. Integers and bool give int64.

    >>> import ember_tensor as torch
    >>> torch.vander(torch.tensor([1, 2, 3]), 3).tolist()
    [[1, 1, 1], [4, 2, 1], [9, 3, 1]]
    """
    if x._data.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x._data.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    dtype = x._dtype if x._dtype.category == D._FLOAT else D.int64
    x = x.to(dtype)
    if n == 0:
        return creation.empty((x._data.shape[0], 0), dtype=dtype, device=x.device)
    ones = creation.ones((x._data.shape[0], 1), dtype=dtype, device=x.device)
    # A running product of the columns: every power is one multiplication away.
    columns = indexing.cat([ones, views.expand(views.unsqueeze(x, 1), (x._data.shape[0], n - 1))], 1)
    powers = columns.cumprod(1)
    return powers if increasing else shape_ops.flip(powers, (1,))


@op()
def isin(elements, test_elements, *, assume_unique=False, invert=False, out=None):
    """Whether each element of `elements` is among `test_elements` (bool, shaped like
    `elements`); either may be a number. NaN is never found.

    >>> import ember_tensor as torch
    >>> torch.isin(torch.tensor([1, 2, 3]), torch.tensor([2, 5])).tolist()
    [False, True, False]
    """
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError("isin() received an invalid combination of arguments - got "
                        f"({type(elements).__name__}, {type(test_elements).__name__})")
    dtype = D.result_type(elements, test_elements)
    for t in (elements, test_elements):
        if isinstance(t, Tensor) and t._dtype is D.bool:
            raise RuntimeError("Unsupported input type encountered for isin(): Bool")
    like = elements if isinstance(elements, Tensor) else test_elements
    if not isinstance(elements, Tensor):
        elements = creation.tensor(elements, dtype=dtype, device=like.device)
    if not isinstance(test_elements, Tensor):
        test_elements = creation.tensor([test_elements], dtype=dtype, device=like.device)
    if test_elements.numel() == 0 or elements.numel() == 0:
        found = creation.zeros(elements.shape, dtype=D.bool, device=elements.device)
    else:
        # Sort the test set once and binary-search every element: O((n + m) log m).
        sorted_tests = sorting.sort(views.reshape(test_elements.to(dtype), (-1,))).values
        values = elements.to(dtype)
        where = counting.searchsorted(sorted_tests, views.reshape(values, (-1,)))
        where = E.clamp(where, max=sorted_tests.numel() - 1)
        found = views.reshape(E.eq(index_ops.index_select(sorted_tests, 0, where), views.reshape(values, (-1,))),
                              elements.shape)
    return copy_to_out(E.logical_not(found) if invert else found, out)
