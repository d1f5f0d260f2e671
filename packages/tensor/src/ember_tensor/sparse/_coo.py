"""Sparse COO tensors: `SparseTensor`, `sparse_coo_tensor`, coalescing, dense conversion.

A sparse tensor of size (*sparse_shape, *dense_shape) stores `indices`, an int64 tensor
(sparse_dim, nnz), and `values`, a tensor (nnz, *dense_shape) — PyTorch's hybrid COO
layout. `SparseTensor` subclasses `Tensor` so that it can sit wherever autograd and the
optimizers expect a tensor (a leaf, a ``.grad``); its `_data` is a `DenseDataPlaceholder`
holding only shape/dtype metadata, so shape checks work as for any tensor while the real
content lives in `_indices_t`/`_values_t`, and a dense kernel handed a sparse tensor raises.
The sparse API is the methods defined here and in `_ops`. Indices and values live on the
tensor's device; the ops run the device-free compositions of tensor ops in `_compose`
(coalescing is the backend's `sparse.coalesce`).
"""
import numpy as np

from .. import _backends
from .. import _dtype as D
from .._device import CPU, device as _device_cls
from .._dispatch import op
from .._layout import sparse_coo, strided
from .._ops.nn._common import tensor_of
from .._printing import _append_suffixes
from .._tensor import Tensor
from . import _compose

__all__ = ["SparseTensor", "sparse_coo_tensor", "to_sparse", "to_sparse_coo", "make_sparse"]


class SparseTensor(Tensor):
    """A tensor in the sparse COO layout (``layout=torch.sparse_coo``)."""

    # -- metadata ---------------------------------------------------------------------

    @property
    def layout(self):
        return sparse_coo

    @property
    def is_sparse(self):
        return True

    def _nnz(self):
        """Number of stored entries (duplicates included until coalesced)."""
        return self._values_t.shape[0]

    def sparse_dim(self):
        """Number of sparse dimensions (rows of `indices`)."""
        return self._indices_t.shape[0]

    def dense_dim(self):
        """Number of dense trailing dimensions (of each value)."""
        return self._values_t.dim() - 1

    def is_coalesced(self):
        """Whether indices are sorted and unique (known, not checked)."""
        return self._coalesced

    def is_contiguous(self, memory_format=None):
        # PyTorch raises here; autograd's accumulation asks, and a sparse gradient is
        # always stored as it is, so answer True.
        return True

    def _indices(self):
        """The indices tensor (sparse_dim, nnz), coalesced or not."""
        return self._indices_t

    def _values(self):
        """The values tensor (nnz, *dense_shape), coalesced or not."""
        return self._values_t

    def indices(self):
        """The indices of a coalesced tensor (sparse_dim, nnz)."""
        if not self._coalesced:
            raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call .coalesce() first")
        return self._indices_t

    def values(self):
        """The values of a coalesced tensor (nnz, *dense_shape)."""
        if not self._coalesced:
            raise RuntimeError("Cannot get values on an uncoalesced tensor, please call .coalesce() first")
        return self._values_t

    # -- conversion -------------------------------------------------------------------

    def coalesce(self):
        """Sorted, unique indices with duplicate entries summed (self if already so)."""
        if self._coalesced:
            return self
        if self._requires_grad or self._grad_fn is not None:
            return sparse_coalesce(self)  # recorded: each entry's gradient is its sum's
        return _coalesce_impl(self)

    def to_dense(self, dtype=None, *, masked_grad=None):
        """The dense (strided) tensor with the same elements."""
        if self._requires_grad or self._grad_fn is not None:
            out = sparse_to_dense(self)  # recorded: gradients flow back to the entries
            return out if dtype is None else out.to(dtype)
        return _to_dense_impl(self, dtype)

    def to_sparse(self, sparse_dim=None, *, layout=None):
        """Already sparse: returns self."""
        return self

    def to_sparse_coo(self):
        """Already sparse COO: returns self."""
        return self

    def clone(self, *, memory_format=None):
        """A copy with its own indices and values."""
        return make_sparse(self._indices_t.clone(), self._values_t.clone(), self.shape, self._dtype,
                           self._coalesced, device=self._device)

    def detach(self):
        """The same entries, cut from the graph (indices and values shared)."""
        return _share(self)

    def _sparse_shape(self):
        return tuple(self.shape)[:self.sparse_dim()]

    def __reduce_ex__(self, protocol):
        return (sparse_coo_tensor, (self._indices_t, self._values_t, tuple(self.shape)))

    def __deepcopy__(self, memo):
        return self.clone()

    def __repr__(self, *, tensor_contents=None):
        return format_sparse(self)

    __str__ = __repr__


def _to_dense_impl(t, dtype=None):
    return _compose.to_dense(t._indices_t, t._values_t, tuple(t.shape), t._dtype if dtype is None else dtype)


def _coalesce_impl(t):
    idx, vals = _compose.coalesce(t._indices_t, t._values_t, t._sparse_shape())
    return make_sparse(idx, vals, t.shape, t._dtype, coalesced=True, device=t._device)


def _share(t):
    s = Tensor._wrap.__func__(SparseTensor, t._data, t._dtype, t._device)
    s._indices_t, s._values_t, s._coalesced = t._indices_t, t._values_t, t._coalesced
    return s


class DenseDataPlaceholder:
    """What a SparseTensor has as `_data`: the array metadata (shape, dtype, ...) that
    Tensor and autograd read, and no elements. A dense op handed a sparse tensor fails
    here, loudly, instead of computing on made-up values."""

    __slots__ = ("shape", "dtype", "ndim", "size", "strides", "itemsize")

    def __init__(self, shape, np_dtype):
        self.shape = tuple(shape)
        self.dtype = np.dtype(np_dtype)
        self.ndim = len(self.shape)
        self.size = int(np.prod(self.shape, dtype=np.int64))
        self.itemsize = self.dtype.itemsize
        self.strides = (0,) * self.ndim

    def __array__(self, dtype=None, copy=None):
        raise NotImplementedError(
            "Could not run this op with arguments from the 'SparseCPU' backend (ember: a sparse COO "
            "tensor reached a dense-only op; call .to_dense() first)")

    def __getattr__(self, name):
        self.__array__()


def _fits(t, dtype, device):
    # Checked here, not left to .to() and .contiguous(): each is a dispatched call, and
    # every sparse op builds its result through make_sparse.
    return t._dtype is dtype and t._device == device and t.is_contiguous()


def make_sparse(indices, values, size, dtype, coalesced=False, device=CPU):
    """A SparseTensor over `indices` (sparse_dim, nnz) and `values` (nnz, ...); no checks.

    Each may be a NumPy array or a tensor; both end up on `device` (a CUDA sparse tensor
    keeps its indices on the device too), values in `dtype`, indices int64.
    """
    if isinstance(values, Tensor):
        values_t = values if _fits(values, dtype, device) else values.to(device=device, dtype=dtype).contiguous()
    else:  # host values: taken as they are on the CPU, uploaded to a device
        values_t = tensor_of(_backends.get(device).storage.adopt(np.ascontiguousarray(values)), dtype, device)
    placeholder = DenseDataPlaceholder(size, values_t._data.dtype)
    t = Tensor._wrap.__func__(SparseTensor, placeholder, dtype, device)
    if isinstance(indices, Tensor):
        t._indices_t = indices if _fits(indices, D.int64, device) else indices.to(device=device, dtype=D.int64).contiguous()
    else:
        t._indices_t = Tensor._wrap(_backends.get(device).storage.adopt(np.ascontiguousarray(indices, np.int64)),
                                    D.int64, device)
    t._values_t = values_t
    t._coalesced = bool(coalesced or values_t.shape[0] <= 1)
    return t


def _as_tensor(data, dtype=None):
    if isinstance(data, Tensor):
        return data if dtype is None or data._dtype is dtype else data.to(dtype)
    from .._ops.creation import tensor
    return tensor(data, dtype=dtype)


def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None, requires_grad=False,
                      check_invariants=None, is_coalesced=None):
    """A sparse COO tensor with entries `values` at `indices`, like ``torch.sparse_coo_tensor``.

    Args:
        indices: int (sparse_dim, nnz) tensor or nested list: one column per entry.
        values: (nnz, *dense_shape) tensor or list.
        size: the full size; inferred as (max index + 1, ..., *dense_shape) when None.

    Example:
        >>> s = sparse_coo_tensor([[0, 1, 1], [2, 0, 2]], [3., 4., 5.], (2, 3))
        >>> s.to_dense().tolist()
        [[0.0, 0.0, 3.0], [4.0, 0.0, 5.0]]
    """
    indices_given_as_tensor = isinstance(indices, Tensor)
    indices = _as_tensor(indices)
    values = _as_tensor(values, D.to_dtype(dtype) if dtype is not None else None)
    if device is not None and values._device != _device_cls(device):
        values = values.to(_device_cls(device))
    if indices._device != values._device and (device is not None or not indices_given_as_tensor):
        indices = indices.to(values._device)  # built from a list, or a device asked for: follow values
    if indices._dtype.category != D._INT:
        raise RuntimeError(f"indices must be an int64 tensor")
    if indices.dim() != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(indices.shape)}")
    if indices._device != values._device:
        raise RuntimeError(f"backend of indices ({_backend_name(indices)}) must match backend of values "
                           f"({_backend_name(values)})")
    idx, size = _compose.checked_coo(indices, values, size)
    if values._requires_grad or values._grad_fn is not None:
        # Through the dispatcher, so that autograd records it: gradients reach `values`.
        return sparse_coo_from_values(idx.clone(), values, size, bool(is_coalesced))
    out = make_sparse(idx.clone(), values.clone(), size, values._dtype, coalesced=bool(is_coalesced),
                      device=values._device)
    if requires_grad:
        out.requires_grad_(True)
    return out


def _backend_name(t):
    """PyTorch's name of a tensor's backend in its device-mismatch errors ("CPU", "CUDA")."""
    return str(t._device.type).upper()


@op("sparse_coo_from_values")
def sparse_coo_from_values(indices, values, size, is_coalesced=False):
    """The sparse tensor with entries `values` at checked int64 `indices` (differentiable in
    `values`; `sparse_coo_tensor` validates and calls this when values need a gradient)."""
    storage = _backends.get(values._device).storage
    copy = tensor_of(storage.astype(values._data, values._data.dtype), values._dtype, values._device)
    return make_sparse(indices, copy, size, values._dtype, is_coalesced, device=values._device)


@op("sparse_coalesce")
def sparse_coalesce(input):
    """`input.coalesce()` as a recorded op (used when `input` needs a gradient)."""
    return _coalesce_impl(input)


@op("sparse_to_dense")
def sparse_to_dense(input):
    """`input.to_dense()` as a recorded op (its gradient is the dense gradient on `input`'s pattern)."""
    return _to_dense_impl(input)


def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
    """The sparse COO form of a dense tensor: its nonzero entries (rows when `sparse_dim` < dim).

    Example:
        >>> from ember_tensor import tensor
        >>> tensor([[0., 2.], [3., 0.]]).to_sparse()._nnz()
        2
    """
    if layout is not None and layout is not sparse_coo:
        raise NotImplementedError(f"ember: to_sparse supports layout=torch.sparse_coo only, got {layout}")
    ndim = self.dim()
    sparse_dim = ndim if sparse_dim is None else int(sparse_dim)
    if not 0 <= sparse_dim <= ndim:
        raise RuntimeError(f"sparse_dim argument must be in [0,{ndim}] range, but {sparse_dim} is given")
    idx, values = _compose.dense_to_sparse(self, sparse_dim)
    return make_sparse(idx, values, tuple(self.shape), self._dtype, coalesced=True, device=self._device)


def to_sparse_coo(self):
    """The sparse COO form of a dense tensor (``to_sparse()`` with every dim sparse).

    Example:
        >>> from ember_tensor import tensor
        >>> tensor([[0., 2.], [3., 0.]]).to_sparse_coo()._nnz()
        2
    """
    return to_sparse(self)


def format_sparse(t):
    """PyTorch's repr of a sparse tensor: indices, values, then size, nnz and suffixes."""
    from .._printing import format_tensor
    head = "tensor(indices="
    body = _indented(_plain_repr(t._indices_t), len(head))
    values_head = " " * 7 + "values="
    values = _indented(_plain_repr(t._values_t), len(values_head))
    text = head + body + ",\n" + values_head + values + ",\n" + " " * 7
    suffixes = [f"size={tuple(t.shape)}", f"nnz={t._nnz()}"]
    if str(t._device) != "cpu":
        suffixes.append(f"device='{t._device}'")
    if t._dtype not in (D.get_default_dtype(), D.int64, D.bool):
        suffixes.append(f"dtype=torch.{t._dtype.name}")
    suffixes.append("layout=torch.sparse_coo")
    if t._grad_fn is not None:
        suffixes.append(f"grad_fn=<{type(t._grad_fn).__name__}>")
    elif t._requires_grad:
        suffixes.append("requires_grad=True")
    first, rest = suffixes[0], suffixes[1:]
    return _append_suffixes(text + first, rest, 7)


def _plain_repr(values):
    # Values print without their dtype suffix: the sparse tensor names the dtype once.
    from .._printing import format_tensor
    arr = values._host_numpy()
    if values._dtype in (D.float16, D.bfloat16):
        arr = arr.astype(np.float32)
    if arr.size == 0 and arr.ndim == 1:
        return "tensor([], size=(0,))"  # PyTorch spells out even this shape inside a sparse repr
    return format_tensor(arr, values._dtype.name, default_dtype_name=values._dtype.name)


def _indented(text, width):
    return text.replace("\n", "\n" + " " * width)


# Dense tensors answer the layout questions too, and convert with `x.to_sparse()`.
Tensor.layout = property(lambda self: strided, doc="The memory layout: torch.strided for dense tensors.")
Tensor.to_sparse = to_sparse
Tensor.to_sparse_coo = to_sparse_coo
