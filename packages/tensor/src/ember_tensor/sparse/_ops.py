"""Arithmetic and shape ops of sparse COO tensors, attached as `SparseTensor` methods.

Sums of sparse tensors concatenate their entries without coalescing (PyTorch does the
same: coalescing is paid once, when someone needs unique indices); ops that read values
by position (mul by a dense tensor, index_select, narrow_copy) work on any entries,
duplicates included, because they are linear in each entry.
"""
import numbers

from .. import _backends
from .. import _dtype as D
from .._ops.creation import tensor, zeros
from .._ops import linalg as _linalg
from .._ops.indexing import cat
from .._tensor import Tensor, wrap_dim
from . import _compose
from ._coo import SparseTensor, make_sparse
from ._compose import on_device_of as _on

__all__ = ["add_sparse_into_dense_", "sparse_add", "sparse_mul"]


def _check_same_size(a, b):
    if tuple(a.shape) != tuple(b.shape):
        raise RuntimeError(f"add: expected sizes of 'self' and 'other' to match, but "
                           f"{list(a.shape)} != {list(b.shape)}")


def _result_dtype(a, b):
    return D.promote_types(a._dtype, b._dtype)


def add_sparse_into_dense_(dense, sparse, alpha=1):
    """dense += alpha * sparse, in place (the update SGD and dense grad accumulation need)."""
    _check_same_size(dense, sparse)
    values = sparse._values_t if alpha == 1 else sparse._values_t * alpha
    return _compose.scatter_add_into_dense_(dense, _on(sparse._indices_t, dense), _on(values, dense))


def sparse_add(self, other, *, alpha=1):
    """self + alpha * other where self is sparse: sparse when other is, dense otherwise."""
    if isinstance(other, SparseTensor):
        _check_same_size(self, other)
        if self.sparse_dim() != other.sparse_dim():
            raise RuntimeError("add: expected 'self' and 'other' to have same sparse dimensions, but got "
                               f"{self.sparse_dim()} and {other.sparse_dim()}")
        dtype = _result_dtype(self, other)
        values = other._values_t if alpha == 1 else other._values_t * alpha
        idx = cat([self._indices_t, _on(other._indices_t, self)], 1)
        vals = cat([self._values_t.to(dtype), _on(values, self).to(dtype)])
        return make_sparse(idx, vals, self.shape, dtype, device=self._device)
    if isinstance(other, Tensor):
        raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")
    raise TypeError(f"add(): argument 'other' must be Tensor, not {type(other).__name__}")


def dense_add_sparse(dense, sparse, alpha=1):
    """dense + alpha * sparse as a new dense tensor."""
    _check_same_size(dense, sparse)
    dtype = _result_dtype(dense, sparse)
    return add_sparse_into_dense_(dense.to(dtype).clone(), sparse, alpha)


def _radd(self, other):
    # Reached for `dense + sparse`: Python prefers a subclass's reflected operator.
    if isinstance(other, Tensor) and not isinstance(other, SparseTensor):
        return dense_add_sparse(other, self)
    if isinstance(other, numbers.Number) and other == 0:
        return self  # sum() starts from 0
    return sparse_add(self, other)


def _add_(self, other, *, alpha=1):
    result = sparse_add(self, other, alpha=alpha)
    self._indices_t, self._values_t, self._coalesced = result._indices_t, result._values_t, False
    return self


def sparse_mul(self, other):
    """self * other: a scalar or 0-d tensor scales values; a dense or sparse tensor of the same
    size multiplies elementwise (result sparse, on self's pattern)."""
    if isinstance(other, numbers.Number) or (isinstance(other, Tensor) and not other.is_sparse and other.dim() == 0):
        dtype = self._dtype if isinstance(other, numbers.Number) else _result_dtype(self, other)
        if isinstance(other, float) and dtype.category != D._FLOAT:
            dtype = D.get_default_dtype()
        return make_sparse(self._indices_t, (self._values_t * other).to(dtype), self.shape, dtype,
                           self._coalesced, device=self._device)
    if not isinstance(other, Tensor):
        raise TypeError(f"mul(): argument 'other' must be Tensor, not {type(other).__name__}")
    if tuple(other.shape) != tuple(self.shape):
        raise RuntimeError(f"mul: expected sizes of 'self' and 'other' to match, but "
                           f"{list(self.shape)} != {list(other.shape)}")
    dtype = _result_dtype(self, other)
    if isinstance(other, SparseTensor):
        other = other.to_dense()  # the product lives on self's pattern either way
    picked = _compose.gather_dense(_on(other, self), self._indices_t, self.sparse_dim())
    return make_sparse(self._indices_t, (self._values_t * picked).to(dtype), self.shape, dtype,
                       self._coalesced, device=self._device)


def _neg(self):
    return sparse_mul(self, -1)


def _sub(self, other, *, alpha=1):
    return sparse_add(self, other, alpha=-alpha)


def _rsub(self, other):
    if isinstance(other, Tensor) and not isinstance(other, SparseTensor):
        return dense_add_sparse(other, self, alpha=-1)
    raise TypeError(f"unsupported operand type(s) for -: '{type(other).__name__}' and 'Tensor'")


def _div(self, other):
    if isinstance(other, Tensor) and other.dim() != 0:
        raise RuntimeError("ember: sparse division supports a scalar divisor only")
    dtype = self._dtype if self._dtype.category == D._FLOAT else D.get_default_dtype()
    return make_sparse(self._indices_t, (self._values_t / other).to(dtype), self.shape, dtype,
                       self._coalesced, device=self._device)


def _mul_(self, other):
    result = sparse_mul(self, other)
    self._values_t = result._values_t.to(self._dtype) if result._dtype is not self._dtype else result._values_t
    return self


def _zero_(self):
    self._indices_t = zeros((self.sparse_dim(), 0), dtype=D.int64, device=self._device)
    self._values_t = zeros((0,) + tuple(self.shape)[self.sparse_dim():], dtype=self._dtype, device=self._device)
    self._coalesced = True
    return self


def transpose(self, dim0, dim1):
    """Swap two sparse dimensions (dense dimensions are not supported, as in PyTorch)."""
    n = self.dim()
    d0, d1 = wrap_dim(dim0, n), wrap_dim(dim1, n)
    sd = self.sparse_dim()
    if (d0 < sd) != (d1 < sd):
        raise RuntimeError(f"transpose(): cannot transpose a sparse dimension with a dense dimension")
    if d0 >= sd:
        raise NotImplementedError("ember: transposing two dense dimensions of a hybrid sparse tensor")
    shape = list(self.shape)
    shape[d0], shape[d1] = shape[d1], shape[d0]
    rows = list(range(sd))
    rows[d0], rows[d1] = rows[d1], rows[d0]
    idx = self._indices_t.index_select(0, tensor(rows, dtype=D.int64, device=self._device))
    return make_sparse(idx, self._values_t, shape, self._dtype, coalesced=(d0 == d1 and self._coalesced),
                       device=self._device)


def t(self):
    """Transpose of a sparse matrix (sparse_dim 2)."""
    if self.sparse_dim() != 2 or self.dense_dim() != 0:
        raise RuntimeError(f"t() expects a tensor with <= 2 sparse and 0 dense dimensions, but self is "
                           f"{self.sparse_dim()} sparse and {self.dense_dim()} dense dimensions")
    return transpose(self, 0, 1)


def narrow_copy(self, dim, start, length):
    """Entries with start <= index < start + length along `dim`, as a new sparse tensor."""
    d = wrap_dim(dim, self.dim())
    size = self.shape[d]
    start = start + size if start < 0 else start
    if not (0 <= start <= size and 0 <= length and start + length <= size):
        raise RuntimeError("Invalid range to narrow. range(start, start+length) must be a subset of "
                           f"range(0, {size}).")
    shape = list(self.shape)
    shape[d] = length
    idx, vals = _compose.narrow_copy(self._indices_t, self._values_t, self.sparse_dim(), d, start, length)
    return make_sparse(idx, vals, shape, self._dtype, self._coalesced, device=self._device)


def index_select(self, dim, index):
    """Slices at positions `index` along `dim` (repeats allowed), as a new sparse tensor."""
    d = wrap_dim(dim, self.dim())
    shape = list(self.shape)
    idx, vals, shape[d], still_sorted = _compose.index_select(self._indices_t, self._values_t, self.sparse_dim(),
                                                              shape[d], d, index)
    return make_sparse(idx, vals, shape, self._dtype, self._coalesced and still_sorted, device=self._device)

def sum_method(self, dim=None, keepdim=False, dtype=None):
    """Tensor.sum on a sparse tensor (``torch.sparse.sum`` semantics; keepdim unsupported)."""
    from . import sum as sparse_sum
    if keepdim:
        raise NotImplementedError("ember: keepdim with a sparse sum")
    return sparse_sum(self, dim, dtype=dtype)


def _to(self, *args, **kwargs):
    """A copy with another dtype and/or device (self when neither changes)."""
    from .._device import device as device_cls
    dtype, device = self._dtype, self._device
    for a in list(args) + [v for k, v in kwargs.items() if k in ("dtype", "device")]:
        if isinstance(a, D.dtype):
            dtype = a
        elif isinstance(a, (str, device_cls)):
            device = _backends.resolve(device_cls(a))  # as dense .to("cuda"): the current device
    if dtype is self._dtype and device == self._device:
        return self
    return make_sparse(self._indices_t.to(device), self._values_t.to(device=device, dtype=dtype), self.shape,
                       dtype, self._coalesced, device=device)


_METHODS = {
    "add": sparse_add, "__add__": sparse_add, "__radd__": _radd, "add_": _add_, "__iadd__": _add_,
    "sub": _sub, "__sub__": _sub, "__rsub__": _rsub,
    "mul": sparse_mul, "__mul__": sparse_mul, "__rmul__": sparse_mul, "mul_": _mul_, "__imul__": _mul_,
    "div": _div, "__truediv__": _div, "neg": _neg, "__neg__": _neg, "zero_": _zero_,
    "transpose": transpose, "t": t, "narrow_copy": narrow_copy, "index_select": index_select,
    "sum": sum_method, "to": _to,
    # Products with dense (or sparse) operands; `dense @ s` reaches __rmatmul__ first, as
    # SparseTensor subclasses Tensor.
    "mm": _linalg.mm, "matmul": _linalg.matmul, "__matmul__": _linalg.matmul,
    "__rmatmul__": lambda self, other: _linalg.matmul(other, self),
    "double": lambda self: _to(self, D.float64), "float": lambda self: _to(self, D.float32),
}
for _name, _fn in _METHODS.items():
    setattr(SparseTensor, _name, _fn)


def sparse_mask(self, mask):
    """The elements of dense `self` at the entries of sparse `mask`, as a sparse tensor on
    `mask`'s pattern (duplicates kept, as PyTorch)."""
    if not isinstance(mask, SparseTensor):
        raise RuntimeError("sparse_mask(): expected mask to be a sparse COO tensor")
    if tuple(self.shape) != tuple(mask.shape):
        raise RuntimeError(f"sparse_mask(): operands have incompatible sizes; self has size {list(self.shape)} "
                           f"but mask has size {list(mask.shape)}")
    picked = _compose.gather_dense(_on(self, mask), mask._indices_t, mask.sparse_dim())
    return make_sparse(mask._indices_t, picked, self.shape, self._dtype, mask._coalesced, device=mask._device)


def _detach_(self):
    self._grad_fn = None
    return self


def _numpy(self, *, force=False):
    raise TypeError("can't convert Sparse layout tensor to numpy. Use Tensor.to_dense() first.")


def _unsupported(name):
    def method(self, *args, **kwargs):
        raise NotImplementedError(
            f"Could not run 'aten::{name.strip('_')}' with arguments from the 'SparseCPU' backend. "
            "(ember: this op has no sparse kernel; call .to_dense() first)")
    method.__name__ = name
    method.__doc__ = f"Not available on sparse tensors: raises NotImplementedError (as PyTorch for {name})."
    return method


def _block_dense_methods():
    # A SparseTensor's `_data` is only a zero placeholder: a dense op run as a method
    # would silently compute on zeros. Every op method Tensor got from `_ops` that this
    # module does not define for sparse tensors raises instead, as PyTorch's dispatcher
    # does for an op with no SparseCPU kernel.
    from .._dispatch import Operator
    keep = {"__hash__", "__eq__", "__ne__"}
    for name, fn in list(vars(Tensor).items()):
        if name in vars(SparseTensor) or name in keep:
            continue
        # (an op's method is a function wrapping the op: `_dispatch.method`)
        if isinstance(fn, Operator) or isinstance(getattr(fn, "__wrapped__", None), Operator) or \
                (getattr(fn, "__module__", "") or "").startswith("ember_tensor._ops"):
            setattr(SparseTensor, name, _unsupported(name))


_METHODS.update({"detach_": _detach_, "cpu": lambda self, memory_format=None: _to(self, "cpu"),
                 "cuda": lambda self, device=None, non_blocking=False, memory_format=None: _to(self, device or "cuda"), "numpy": _numpy,
                 "__array__": lambda self, dtype=None, copy=None: _numpy(self),
                 "tolist": lambda self: _numpy(self), "item": lambda self: _numpy(self)})
for _name, _fn in _METHODS.items():
    setattr(SparseTensor, _name, _fn)
_block_dense_methods()
# Dense tensors: `x.sparse_mask(s)`, and `x.to_dense()` is x itself (as PyTorch).
Tensor.sparse_mask = sparse_mask
Tensor.to_dense = lambda self, dtype=None, *, masked_grad=None: self if dtype is None else self.to(dtype)
