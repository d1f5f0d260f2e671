"""The sparse ops' algorithms, composed of dense tensor ops: device-free code.

A sparse COO tensor keeps its int64 indices (sparse_dim, nnz) and its values (nnz,
*dense_shape) as two tensors on its device (as PyTorch's). Every function here takes and
returns such tensors and uses only tensor ops (elementwise, sort, cumsum, nonzero,
index_select, index_add_, index_put_) or one call into the backend's sparse family
(`coalesce`), so the same code runs on every device. They return indices and values;
`_coo.make_sparse` builds the tensor.

The only device-to-host reads are single values: the count of unique keys or kept
entries, which sizes an output (PyTorch's CUDA ops synchronise there too), and the
one-flag bounds checks that decide whether to raise.
"""
import numpy as np

from .. import _backends
from .. import _dtype as D
from .._ops.nn._common import array_of, tensor_of
from .._tensor import Tensor, wrap_dim

__all__ = ["on_device_of", "flat_keys", "unflatten_keys", "coalesce", "to_dense", "gather_dense",
           "positions", "check_bounds", "inferred_sparse_size", "checked_coo", "dense_to_sparse",
           "scatter_add_into_dense_", "embedding_backward", "sparse_sum", "softmax_values",
           "narrow_copy", "index_select"]


def _T():
    import ember_tensor  # the public ops; imported late, as ember_tensor imports this package
    return ember_tensor


def _numel(shape):
    return int(np.prod(shape, dtype=np.int64))


# -- keys: sparse coordinates flattened row-major to one int64 per entry ----------------

def on_device_of(t, other):
    """`t` on `other`'s device (a no-op when it is already there)."""
    return t if t._device == other._device else t.to(other._device)


def flat_keys(indices, sparse_shape):
    """One int64 row-major key per column of the `indices` tensor (sparse_dim, nnz)."""
    keys = _T().zeros(indices.shape[1], dtype=D.int64, device=indices._device)
    for d, n in enumerate(sparse_shape):
        keys = keys * n + indices[d]
    return keys


def unflatten_keys(keys, sparse_shape):
    """Inverse of `flat_keys`: the (sparse_dim, nnz) int64 indices tensor."""
    T = _T()
    if not sparse_shape:
        return T.zeros((0, keys.shape[0]), dtype=D.int64, device=keys._device)
    rows = [None] * len(sparse_shape)
    rest = keys
    for d in range(len(sparse_shape) - 1, -1, -1):
        n = sparse_shape[d]
        rows[d] = rest % n if n else rest * 0
        rest = rest // n if n else rest
    return T.stack(rows).contiguous()


def _rows(values):
    """`values` (nnz, *dense) as a contiguous 2-d (nnz, prod(dense)) tensor."""
    return values.contiguous().reshape(values.shape[0], _numel(tuple(values.shape[1:])))


# -- conversions ------------------------------------------------------------------------

def coalesce(indices, values, sparse_shape):
    """Sorted unique indices and values summed per index: the backend's `sparse.coalesce`
    (a sort of the entries' row-major keys and a sum over each run of equal keys)."""
    idx, vals = _backends.get(values._device).sparse.coalesce(indices._data, array_of(values), tuple(sparse_shape))
    return tensor_of(idx, D.int64, values._device), tensor_of(vals, values._dtype, values._device)


def to_dense(indices, values, shape, dtype):
    """The dense tensor of `shape` and `dtype`: values scatter-added (index_add_) at their
    flat keys, so duplicate entries sum."""
    T = _T()
    sparse_shape = tuple(shape)[:indices.shape[0]]
    if not sparse_shape:  # every entry sits at the one (empty) index
        out = values.sum(0)
    else:
        out = T.zeros((_numel(sparse_shape), _numel(shape[len(sparse_shape):])), dtype=values._dtype,
                      device=values._device)
        out.index_add_(0, flat_keys(indices, sparse_shape), _rows(values))
        out = out.reshape(tuple(shape))
    return out if out._dtype is dtype else out.to(dtype)


def gather_dense(dense, indices, sparse_dim):
    """dense[indices[0], ..., indices[sparse_dim-1]]: the (nnz, *dense_shape) elements of a
    dense tensor at the sparse entries (gathered by flat key)."""
    shape = tuple(dense.shape)
    sparse_shape, dense_shape = shape[:sparse_dim], shape[sparse_dim:]
    nnz = indices.shape[1]
    flat = dense.reshape(_numel(sparse_shape), _numel(dense_shape))
    return flat.index_select(0, flat_keys(indices, sparse_shape)).reshape((nnz,) + dense_shape)


def positions(mask):
    """Positions (int64, 1-d) where the bool `mask` is true; reads one count."""
    return _T().nonzero(mask).reshape(-1)


def check_bounds(indices, size):
    """PyTorch's errors for negative or out-of-range indices: one flag is read back, and
    per-dimension extremes only when an error is to be raised."""
    T = _T()
    sparse_dim = indices.shape[0]
    if indices.shape[1] == 0 or sparse_dim == 0:
        return
    limits = T.tensor(list(size[:sparse_dim]), dtype=D.int64, device=indices._device).reshape(-1, 1)
    if not bool(((indices < 0) | (indices >= limits)).any()):
        return
    for d in range(sparse_dim):
        low, high = int(indices[d].min()), int(indices[d].max())
        if low < 0:
            raise RuntimeError(f"found negative index {low} for dim {d}")
        if high >= size[d]:
            raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is {size[d]} "
                               f"but found index {high}")


def inferred_sparse_size(indices):
    """(max index + 1) per sparse dim (one read per dim), as sparse_coo_tensor's default size."""
    if indices.shape[1] == 0:
        return (0,) * indices.shape[0]
    return tuple(int(indices[d].max()) + 1 for d in range(indices.shape[0]))


def checked_coo(indices, values, size):
    """`sparse_coo_tensor`'s checks of same-device `indices` and `values`, with PyTorch's
    errors: (int64 indices, the full size as a tuple). PyTorch checks the bounds only on
    request; an out-of-range index would corrupt memory in the kernels, so ember always
    checks (one flag read back)."""
    idx = indices.to(D.int64)
    if values.dim() == 0:
        raise RuntimeError("values must be at least 1-dimensional (nnz x ...), but got a 0-d tensor")
    if idx.shape[1] != values.shape[0]:
        raise RuntimeError("indices and values must have same nnz, but got nnz from indices: "
                           f"{idx.shape[1]}, nnz from values: {values.shape[0]}")
    sparse_dim, dense_shape = idx.shape[0], tuple(values.shape[1:])
    if size is None:
        size = inferred_sparse_size(idx) + dense_shape
    size = tuple(int(s) for s in size)
    if len(size) != sparse_dim + len(dense_shape):
        raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: len(size) = {len(size)}, "
                           f"sparse_dim = {sparse_dim}, dense_dim = {len(dense_shape)}")
    if size[sparse_dim:] != dense_shape:
        raise RuntimeError(f"values has incorrect size, expected {list(size[:sparse_dim]) + list(dense_shape)}, "
                           f"got {list(values.shape)}")
    check_bounds(idx, size)
    return idx, size


def dense_to_sparse(x, sparse_dim):
    """(indices, values) of the slices of dense `x` along its first `sparse_dim` dims
    holding any nonzero element, in row-major order (nonzero reads one count)."""
    T = _T()
    shape = tuple(x.shape)
    sparse_shape, dense_shape = shape[:sparse_dim], shape[sparse_dim:]
    if sparse_dim == 0:  # one entry holding the whole tensor, or none when it is all zero
        nnz = int(bool((x != 0).any()))
        return (T.zeros((0, nnz), dtype=D.int64, device=x._device),
                x.reshape((1,) + shape)[:nnz].contiguous())
    width = _numel(dense_shape)
    flat = x.reshape(_numel(sparse_shape), width)
    if width == 0:
        keys = T.zeros(0, dtype=D.int64, device=x._device)
    else:
        keys = positions((flat != 0).any(1))
    values = flat.index_select(0, keys).reshape((keys.shape[0],) + dense_shape)
    return unflatten_keys(keys, sparse_shape), values


def scatter_add_into_dense_(dense, indices, values):
    """dense[indices] += values in place (index_put_ with accumulate, any strides)."""
    if values._dtype is not dense._dtype:
        values = values.to(dense._dtype)
    if indices.shape[0] == 0:
        dense.add_(values.sum(0))
    elif indices.shape[1]:
        dense.index_put_(tuple(indices[d] for d in range(indices.shape[0])), values, accumulate=True)
    return dense


def embedding_backward(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq):
    """(indices (1, n), rows (n, dim)) of the sparse weight gradient of an embedding lookup."""
    T = _T()
    idx = indices.reshape(-1).to(D.int64)
    g = grad_output.reshape(idx.shape[0], -1)
    if scale_grad_by_freq:
        counts = T.bincount(idx, minlength=num_weights).index_select(0, idx)
        g = g / counts.reshape(-1, 1).to(g._dtype)
    if padding_idx is not None and padding_idx >= 0:
        keep = positions(idx != padding_idx)
        idx, g = idx.index_select(0, keep), g.index_select(0, keep)
    return idx.reshape(1, -1), g


# -- selection ----------------------------------------------------------------------------

def narrow_copy(indices, values, sparse_dim, d, start, length):
    """(indices, values) of the entries with start <= index < start + length along the
    (wrapped, checked) dim `d`."""
    if d < sparse_dim:
        keep = positions((indices[d] >= start) & (indices[d] < start + length))
        indices, values = indices.index_select(1, keep), values.index_select(0, keep)
        indices[d] -= start
    else:
        values = values.narrow(d - sparse_dim + 1, start, length)
    return indices, values.contiguous()


def index_select(indices, values, sparse_dim, size, d, index):
    """(indices, values, number of slices, whether entries stay sorted) of the slices at
    positions `index` along the (wrapped) dim `d` of extent `size` (repeats allowed)."""
    T = _T()
    pick = index if isinstance(index, Tensor) else T.tensor(index, dtype=D.int64)
    pick = on_device_of(pick.reshape(-1).to(D.int64), values)
    if pick.shape[0] and bool(((pick < -size) | (pick >= size)).any()):  # one flag read back
        raise IndexError("index out of range in self")
    pick = T.where(pick < 0, pick + size, pick)
    if d >= sparse_dim:
        return indices, values.index_select(d - sparse_dim + 1, pick), pick.shape[0], True
    # Every (entry, output position) pair whose source index matches, found by binary
    # search in the stably sorted picks (memory O(nnz + matches), not O(nnz * len(index)));
    # repeat_interleave reads back one count.
    sorted_pick, order = T.sort(pick, stable=True)
    key = indices[d].contiguous()
    lo = T.searchsorted(sorted_pick, key)
    counts = T.searchsorted(sorted_pick, key, right=True) - lo
    entry = T.repeat_interleave(T.arange(indices.shape[1], device=values._device), counts)
    within = T.arange(entry.shape[0], device=values._device) - (T.cumsum(counts, 0) - counts).index_select(0, entry)
    position = order.index_select(0, lo.index_select(0, entry) + within)
    new_indices = indices.index_select(1, entry)
    new_indices[d] = position
    return new_indices, values.index_select(0, entry), pick.shape[0], False


# -- reductions ---------------------------------------------------------------------------

def sparse_sum(indices, values, shape, dim, out_dtype):
    """``torch.sparse.sum``: dense dims reduce on the values, the kept sparse dims
    coalesce: (indices, values, size), or (None, dense result, None) when no sparse dim
    is kept."""
    T = _T()
    if dim is None:
        return None, values.sum().to(out_dtype), None
    ndim = len(shape)
    dims = sorted({wrap_dim(d, ndim) for d in ((dim,) if isinstance(dim, int) else dim)})
    sd = indices.shape[0]
    dense_red = [d - sd + 1 for d in dims if d >= sd]
    if dense_red:
        values = values.sum(dense_red)
    kept = [d for d in range(sd) if d not in dims]
    if not kept:
        return None, values.sum(0).to(out_dtype), None
    kept_indices = indices.index_select(0, T.tensor(kept, dtype=D.int64, device=values._device))
    sparse_shape = tuple(shape[d] for d in kept)
    kept_indices, values = coalesce(kept_indices, values, sparse_shape)
    return kept_indices, values.to(out_dtype), sparse_shape + tuple(values.shape[1:])


def softmax_values(indices, values, shape, d, log):
    """Values of ``torch.sparse.(log_)softmax`` along dim `d` of a coalesced sparse tensor:
    entries that share every sparse coordinate but `d` form a group (numbered by unique);
    per-group max (scatter_reduce amax) and sum of exponentials (index_add_). Unspecified
    entries count as -inf: they contribute nothing."""
    T = _T()
    sd = indices.shape[0]
    if d >= sd:
        return (T.log_softmax if log else T.softmax)(values, d - sd + 1)
    nnz = values.shape[0]
    if nnz == 0:
        return values
    others = [i for i in range(sd) if i != d]
    rows = indices.index_select(0, T.tensor(others, dtype=D.int64, device=values._device))
    unique_keys, group = T.unique(flat_keys(rows, tuple(shape[i] for i in others)), return_inverse=True)
    flat = _rows(values)
    groups = (unique_keys.shape[0], flat.shape[1])
    peak = T.full(groups, float("-inf"), dtype=flat._dtype, device=values._device).scatter_reduce(
        0, group.reshape(-1, 1).expand(nnz, flat.shape[1]).contiguous(), flat, "amax")
    shifted = flat - peak.index_select(0, group)
    total = T.zeros(groups, dtype=flat._dtype, device=values._device).index_add_(0, group, shifted.exp())
    out = shifted - total.log().index_select(0, group)
    return (out if log else out.exp()).reshape(tuple(values.shape))
