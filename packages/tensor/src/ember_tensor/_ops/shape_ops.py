"""Shape ops that copy: repeat, tile, repeat_interleave, flip, roll, rot90, tril/triu,
plus the broadcasting helpers broadcast_to, broadcast_tensors and meshgrid.

Everything except `flip` and repeat_interleave's index of repeats is composed of views
(expand, reshape, narrow, transpose) and of cat/where/indexing, so it runs on every
device and autograd differentiates it through the ops it is made of. `flip` copies from
a reversed view (the device's `indexing.flip`); its gradient is a flip. The index of
repeats is built by the counts' device (`indexing.repeat_index`).
"""
from .. import _backends
from .. import _dtype as D
from .._dispatch import op
from .._tensor import Tensor, wrap_dim
from . import views
from ._iter import broadcast_shapes

__all__ = ["broadcast_to", "broadcast_tensors", "meshgrid", "repeat", "tile", "repeat_interleave",
           "flip", "fliplr", "flipud", "roll", "rot90", "tril", "triu", "tril_", "triu_", "atleast_1d",
           "atleast_2d", "atleast_3d", "block_diag"]


def _int_list(args, name="dims"):
    """Accept both ``f(x, 0, 1)`` and ``f(x, (0, 1))``; a bare int is a one-element list."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = tuple(args[0])
    return tuple(int(a) for a in args)


@op()
def broadcast_to(input, size):
    """`input` expanded to `size` (a view; -1 keeps a dim), like ``input.expand(size)``."""
    return views.expand(input, tuple(size))


@op()
def broadcast_tensors(*tensors):
    """Views of `tensors` expanded to their common broadcast shape."""
    if len(tensors) == 1 and isinstance(tensors[0], (tuple, list)):
        tensors = tuple(tensors[0])
    shape = broadcast_shapes(*(t.shape for t in tensors))
    return tuple(views.expand(t, shape) for t in tensors)


@op()
def meshgrid(*tensors, indexing=None):
    """Coordinate grids from 1-d tensors: output i varies along dim i (``indexing="ij"``).

    With ``indexing="xy"`` the first two dims are swapped (NumPy's default).

    >>> import ember_tensor as torch
    >>> [g.tolist() for g in torch.meshgrid(torch.tensor([1, 2]), torch.tensor([3, 4, 5]), indexing="ij")]
    [[[1, 1, 1], [2, 2, 2]], [[3, 4, 5], [3, 4, 5]]]
    """
    if len(tensors) == 1 and isinstance(tensors[0], (tuple, list)):
        tensors = tuple(tensors[0])
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    indexing = "ij" if indexing is None else indexing
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    for t in tensors:
        if t.dtype is not tensors[0].dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
        if t.device != tensors[0].device:
            raise RuntimeError("meshgrid expects all tensors to have the same device")
        if t.dim() > 1:
            raise RuntimeError(
                f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t}")
    swap = indexing == "xy" and len(tensors) >= 2
    if swap:
        tensors = (tensors[1], tensors[0]) + tuple(tensors[2:])
    shape = tuple(t.numel() for t in tensors)
    grids = []
    for i, t in enumerate(tensors):
        view_shape = [1] * len(tensors)
        view_shape[i] = -1
        grids.append(views.expand(views.reshape(t, view_shape), shape))
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


@op()
def repeat(input, *sizes):
    """Tile the whole tensor `sizes[i]` times along dim i (leading new dims allowed); a copy.

    >>> import ember_tensor as torch
    >>> torch.tensor([1, 2]).repeat(2, 2).tolist()
    [[1, 2, 1, 2], [1, 2, 1, 2]]
    """
    sizes = _int_list(sizes)
    ndim = input.dim()
    if len(sizes) < ndim:
        raise RuntimeError(
            "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor")
    shape = (1,) * (len(sizes) - ndim) + tuple(input.shape)
    final = [r * n for r, n in zip(sizes, shape)]
    if any(r < 0 for r in sizes):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(final)}: {final}")
    # View as (1, n0, 1, n1, ...), broadcast to (r0, n0, r1, n1, ...), then merge pairs.
    interleaved = []
    for n in shape:
        interleaved += [1, n]
    expanded_to = []
    for r, n in zip(sizes, shape):
        expanded_to += [r, n]
    tiled = views.expand(views.reshape(input, interleaved), expanded_to)
    from .convert import clone
    return views.reshape(clone(tiled), final)


@op()
def tile(input, *args, dims=None):
    """Like `repeat`, but a `dims` shorter than the tensor's rank is padded with leading 1s."""
    dims = _int_list(args if dims is None else (dims,))
    dims = (1,) * max(0, input.dim() - len(dims)) + dims
    return repeat(input, dims)


@op()
def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Repeat each element (or each slice along `dim`) `repeats` times, keeping order.

    With `dim` None the input is flattened first. ``repeat_interleave(counts)`` with one
    1-d integer tensor returns ``[0]*counts[0] + [1]*counts[1] + ...``.

    >>> import ember_tensor as torch
    >>> torch.tensor([1, 2]).repeat_interleave(2).tolist()
    [1, 1, 2, 2]
    """
    if repeats is None:
        _check_counts(input)
        return _repeat_index(input, output_size)
    if dim is None:
        input, dim = views.reshape(input, (-1,)), 0
    dim = wrap_dim(dim, input.dim())
    size = input.shape[dim] if input.dim() else 1
    if isinstance(repeats, Tensor) and repeats.numel() != 1:
        _check_counts(repeats)
        if repeats.numel() != size:
            raise RuntimeError(
                "repeats must have the same size as input along dim, but got "
                f"repeats.size(0) = {repeats.numel()} and input.size({dim}) = {size}")
        index = _repeat_index(repeats, output_size).to(input.device)
        return input[(slice(None),) * dim + (index,)]
    count = int(repeats.item() if isinstance(repeats, Tensor) else repeats)
    if count < 0:
        raise RuntimeError("Repeats must be non-negative" if not isinstance(repeats, Tensor)
                           else "repeats can not be negative")
    if input.dim() == 0:
        input, dim = views.reshape(input, (1,)), 0
    shape = list(input.shape)
    # Each slice along `dim` gets a new axis of length `count` right after it.
    expanded = views.expand(views.unsqueeze(input, dim + 1), shape[:dim + 1] + [count] + shape[dim + 1:])
    from .convert import clone
    return views.reshape(clone(expanded), shape[:dim] + [shape[dim] * count] + shape[dim + 1:])


def _check_counts(repeats):
    """PyTorch's checks of a tensor of repeat counts (made by its device: one value is read)."""
    if repeats.dim() > 1 or repeats.is_floating_point():
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    indexing = _backends.get(repeats._device).indexing
    if repeats.numel() and indexing.first_out_of_range(indexing.index_vector(repeats._data), 0, 1 << 62) is not None:
        raise RuntimeError("repeats can not be negative")


def _repeat_index(counts, output_size):
    """[0] * counts[0] + [1] * counts[1] + ... (counts checked): an int64 tensor on the
    counts' device."""
    index = _backends.get(counts._device).indexing.repeat_index(counts._data, output_size)
    return Tensor._wrap(index, D.int64, counts._device)


@op()
def flip(input, *args, dims=None):
    """Reverse the order of elements along `dims` (a copy, as in PyTorch): ``flip(x, (0, 1))``."""
    dims = _int_list(args if dims is None else (dims,))
    ndim = input.dim()
    wrapped = [wrap_dim(d, ndim) for d in dims]
    seen = set()
    for d in wrapped:
        if d in seen:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        seen.add(d)
    axes = tuple(d for d in wrapped if ndim)
    flipped = _backends.get(input._device).indexing.flip(input._data, axes)
    return Tensor._wrap(flipped, input._dtype, input._device)


@op()
def fliplr(input):
    """Reverse the columns (dim 1) of a tensor with at least 2 dims."""
    if input.dim() < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, 1)


@op()
def flipud(input):
    """Reverse the rows (dim 0) of a tensor with at least 1 dim."""
    if input.dim() < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, 0)


@op()
def roll(input, shifts, dims=None):
    """Shift elements cyclically by `shifts` along `dims` (flattened when `dims` is None)."""
    shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    if dims is None:
        if len(shifts) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:0")
        flat = roll(views.reshape(input, (-1,)), shifts, 0)
        return views.view(flat, tuple(input.shape))
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    from .convert import clone
    from .indexing import cat
    result = input
    for shift, dim in zip(shifts, dims):
        dim = wrap_dim(dim, input.dim())
        size = input.shape[dim] if input.dim() else 1
        shift = shift % size if size else 0
        if shift and input.dim():
            # The last `shift` slices move to the front.
            result = cat([views.narrow(result, dim, size - shift, shift),
                          views.narrow(result, dim, 0, size - shift)], dim)
    return clone(result) if result is input else result


@op()
def rot90(input, k=1, dims=(0, 1)):
    """Rotate by 90 degrees `k` times in the plane of `dims` (from the first towards the second)."""
    dims = tuple(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    ndim = input.dim()
    if ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {ndim}")
    d0, d1 = wrap_dim(dims[0], ndim), wrap_dim(dims[1], ndim)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}")
    k %= 4
    if k == 1:
        return views.transpose(flip(input, d1), d0, d1)
    if k == 2:
        return flip(input, d0, d1)
    if k == 3:
        return views.transpose(flip(input, d0), d0, d1)
    from .convert import clone
    return clone(input)


def _triangle_mask(input, diagonal, lower, name):
    if input.dim() < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
    from .creation import arange
    rows, cols = input.shape[-2], input.shape[-1]
    offsets = views.unsqueeze(arange(cols, device=input.device), 0) - views.unsqueeze(
        arange(rows, device=input.device), 1)
    return offsets <= diagonal if lower else offsets >= diagonal


@op()
def tril(input, diagonal=0, *, out=None):
    """The lower triangle (on and below the `diagonal`-th diagonal) of the last two dims."""
    from .elementwise import where
    mask = _triangle_mask(input, diagonal, True, "tril")
    return where(mask, input, input.new_zeros(()), out=out)


@op()
def triu(input, diagonal=0, *, out=None):
    """The upper triangle (on and above the `diagonal`-th diagonal) of the last two dims."""
    from .elementwise import where
    mask = _triangle_mask(input, diagonal, False, "triu")
    return where(mask, input, input.new_zeros(()), out=out)


@op("tril_", inplace=True)
def tril_(self, diagonal=0):
    """In-place `tril`."""
    return self.copy_(tril(self, diagonal))


@op("triu_", inplace=True)
def triu_(self, diagonal=0):
    """In-place `triu`."""
    return self.copy_(triu(self, diagonal))


def _at_least(tensors, fit):
    if len(tensors) == 1 and isinstance(tensors[0], (tuple, list)):
        return tuple(fit(t) for t in tensors[0])
    if len(tensors) == 1:
        return fit(tensors[0])
    return tuple(fit(t) for t in tensors)


@op()
def atleast_1d(*tensors):
    """Views with at least 1 dim (0-d tensors become shape (1,)); one result per input."""
    return _at_least(tensors, lambda t: views.reshape(t, (1,)) if t.dim() == 0 else t)


@op()
def atleast_2d(*tensors):
    """Views with at least 2 dims: shape (n,) becomes (1, n)."""
    return _at_least(tensors, lambda t: views.reshape(t, (1,) * (2 - t.dim()) + tuple(t.shape)) if t.dim() < 2 else t)


@op()
def atleast_3d(*tensors):
    """Views with at least 3 dims: (n,) becomes (1, n, 1) and (m, n) becomes (m, n, 1), as NumPy."""
    def fit(t):
        if t.dim() == 0:
            return views.reshape(t, (1, 1, 1))
        if t.dim() == 1:
            return views.reshape(t, (1, t.shape[0], 1))
        if t.dim() == 2:
            return views.unsqueeze(t, -1)
        return t
    return _at_least(tensors, fit)


@op()
def block_diag(*tensors):
    """A block-diagonal matrix of the inputs (0-d and 1-d inputs count as one row)."""
    from .. import _dtype as D
    for i, t in enumerate(tensors):
        if t.dim() > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. "
                               f"Input {i} has {t.dim()} dimensions")
    blocks = [views.reshape(t, (1,) * (2 - t.dim()) + tuple(t.shape)) for t in tensors]
    if not blocks:
        from .creation import empty
        return empty(1, 0)
    dtype = D.result_type_of(blocks) if len({b.dtype for b in blocks}) > 1 else blocks[0].dtype
    rows = sum(b.shape[0] for b in blocks)
    cols = sum(b.shape[1] for b in blocks)
    from .indexing import cat
    # Each block row is the block padded with zeros left and right; rows stack with cat,
    # so autograd differentiates through cat and the blocks' own ops.
    pieces, col = [], 0
    for b in blocks:
        n, m = b.shape
        row = [b.to(dtype)]
        if col:
            row.insert(0, b.new_zeros((n, col), dtype=dtype))
        if cols - col - m:
            row.append(b.new_zeros((n, cols - col - m), dtype=dtype))
        pieces.append(cat(row, 1) if len(row) > 1 else row[0])
        col += m
    result = cat(pieces, 0) if len(pieces) > 1 else pieces[0]
    return result if rows else result.reshape(0, cols)
