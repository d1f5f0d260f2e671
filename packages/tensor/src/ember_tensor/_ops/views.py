"""View ops: results share storage (and the version counter) with their input.

Every view is computed as (shape, strides, offset) here and made by the backend's
`as_strided`, so the same code serves the CPU and CUDA.
"""
import warnings

from .. import _backends
from .. import _dtype as D
from .._dispatch import op
from .._tensor import Tensor, wrap_dim
from .._size import Size


def make_view(self, shape, strides, offset):
    """A tensor viewing `self`'s storage with the given element strides and offset."""
    backend = _backends.get(self._device)
    data = backend.storage.as_strided(self._storage.buf, tuple(shape), tuple(strides), offset)
    return self._view_of(data, offset)


def _infer_size(shape, numel):
    """The tuple `shape` with its one -1 (if any) filled in for `numel` elements, checked
    in PyTorch's order (`infer_size_impl`: dims left to right, then the element count)."""
    known, infer = 1, None
    for i, n in enumerate(shape):
        if n == -1:
            if infer is not None:
                raise RuntimeError("only one dimension can be inferred")
            infer = i
        elif n >= 0:
            known *= n
        else:
            raise RuntimeError(f"invalid shape dimension {n} at index {i} of shape {list(shape)}")
    if infer is None:
        if known != numel:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        return shape
    if known == 0:
        if numel == 0:
            raise RuntimeError(f"cannot reshape tensor of 0 elements into shape {list(shape)} because the "
                               "unspecified dimension size -1 can be any value and is ambiguous")
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    if numel % known:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape[:infer] + (numel // known,) + shape[infer + 1:]


def view_strides(old_shape, old_strides, new_shape):
    """Strides that let `new_shape` view memory laid out as (old_shape, old_strides), or None.

    Each run of old dims that is contiguous in memory may be re-split freely; a new
    shape that would cross such a run's boundary needs a copy.
    """
    if not old_shape:
        return [1] * len(new_shape)
    numel = 1
    for n in old_shape:
        numel *= n
    if numel == 0:
        return list(_contiguous_strides(new_shape))
    new_strides = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_base_stride = old_strides[-1]
    tensor_numel = 1
    view_numel = 1
    for tensor_d in range(len(old_shape) - 1, -1, -1):
        tensor_numel *= old_shape[tensor_d]
        if tensor_d == 0 or (old_shape[tensor_d - 1] != 1 and
                             old_strides[tensor_d - 1] != tensor_numel * chunk_base_stride):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new_strides[view_d] = view_numel * chunk_base_stride
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base_stride = old_strides[tensor_d - 1]
                tensor_numel = 1
                view_numel = 1
    if view_d != -1:
        return None
    return new_strides


def _contiguous_strides(shape):
    strides, acc = [], 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(strides))


contiguous_strides = _contiguous_strides


def _shape_arg(shape):
    """The ints of a shape given as varargs or as one sequence."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list, Size)):
        shape = shape[0]
    return tuple(map(int, shape))


@op(view=True)
def view(self, *shape):
    """A view with a new shape (one dim may be -1); raises if memory layout forbids it."""
    if len(shape) == 1 and isinstance(shape[0], (D.dtype, type)):
        return self.view_dtype(shape[0])
    shape = _infer_size(_shape_arg(shape), self._data.size)
    if _backends.get(self._device).storage.is_contiguous(self._data):
        # Contiguous input: the backend array reshapes without copying (the common case).
        return self._view_of(self._data.reshape(shape), self._offset)
    strides = view_strides(tuple(self._data.shape), self.stride(), shape)
    if strides is None:
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead.")
    return make_view(self, shape, strides, self.storage_offset())


@op()
def reshape(self, *shape):
    """A view with a new shape when possible, otherwise a copy."""
    shape = _infer_size(_shape_arg(shape), self._data.size)
    if _backends.get(self._device).storage.is_contiguous(self._data):
        return view(self, shape)  # always a view: no strides to plan (most calls, ~3 us of 8)
    strides = view_strides(tuple(self._data.shape), self.stride(), shape)
    if strides is None:
        return view(self.contiguous(), shape)
    return view(self, shape)


def view_as(self, other):
    """`view` to `other`'s shape."""
    return view(self, tuple(other._data.shape))


def reshape_as(self, other):
    """`reshape` to `other`'s shape."""
    return reshape(self, tuple(other._data.shape))


@op()
def flatten(self, start_dim=0, end_dim=-1):
    """Merge dims start_dim..end_dim into one."""
    ndim = self._data.ndim
    if ndim == 0:
        return reshape(self, (1,))
    start, end = wrap_dim(start_dim, ndim), wrap_dim(end_dim, ndim)
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    shape = tuple(self._data.shape)
    return reshape(self, shape[:start] + (-1 if 0 not in shape[start:end + 1] else 0,) + shape[end + 1:])


@op()
def unflatten(self, dim, sizes):
    """Split dim `dim` into `sizes`."""
    if len(sizes) == 0:  # PyTorch refuses () even for a dim of size 1
        raise RuntimeError("unflatten: sizes must be non-empty")
    dim = wrap_dim(dim, self._data.ndim)
    shape = tuple(self._data.shape)
    return view(self, shape[:dim] + tuple(sizes) + shape[dim + 1:])


@op(view=True)
def as_strided(self, size, stride, storage_offset=None):
    """A view with explicit size, strides and storage offset (in elements)."""
    offset = self.storage_offset() if storage_offset is None else storage_offset
    return make_view(self, tuple(size), tuple(stride), offset)


@op(view=True)
def squeeze(self, dim=None):
    """Remove size-1 dims (all, or only those in `dim`)."""
    shape, strides = tuple(self._data.shape), self.stride()
    ndim = len(shape)
    if dim is None:
        dims = set(range(ndim))
    else:
        dims = {wrap_dim(d, ndim) for d in (dim if isinstance(dim, (tuple, list)) else (dim,))}
    keep = [i for i in range(ndim) if not (i in dims and shape[i] == 1)]
    return make_view(self, [shape[i] for i in keep], [strides[i] for i in keep], self.storage_offset())


@op(view=True)
def unsqueeze(self, dim):
    """Insert a size-1 dim at `dim`."""
    shape, strides = list(self._data.shape), list(self.stride())
    dim = wrap_dim(dim, len(shape) + 1)
    stride = strides[dim] * shape[dim] if dim < len(shape) else 1
    shape.insert(dim, 1)
    strides.insert(dim, stride)
    return make_view(self, shape, strides, self.storage_offset())


@op(view=True)
def permute(self, *dims):
    """Reorder dims: ``x.permute(2, 0, 1)``."""
    dims = _shape_arg(dims)
    ndim = self._data.ndim
    if len(dims) != ndim:
        raise RuntimeError(
            f"permute(sparse_coo): number of dimensions in the tensor input does not match the "
            f"length of the desired ordering of dimensions i.e. input.dim() = {ndim} is not equal "
            f"to len(dims) = {len(dims)}")
    dims = [wrap_dim(d, ndim) for d in dims]
    if len(set(dims)) != ndim:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    shape, strides = self._data.shape, self.stride()
    return make_view(self, [shape[d] for d in dims], [strides[d] for d in dims], self.storage_offset())


@op(view=True)
def transpose(self, dim0, dim1):
    """Swap two dims."""
    ndim = self._data.ndim
    if ndim == 0:
        wrap_dim(dim0, 0), wrap_dim(dim1, 0)
        return make_view(self, (), (), self.storage_offset())
    d0, d1 = wrap_dim(dim0, ndim), wrap_dim(dim1, ndim)
    # The two dims swapped here, not through the permute op: a second pass through the
    # wrappers and permute's checks of a whole order cost a transpose half its time.
    shape, strides = list(self._data.shape), list(self.stride())
    shape[d0], shape[d1] = shape[d1], shape[d0]
    strides[d0], strides[d1] = strides[d1], strides[d0]
    return make_view(self, shape, strides, self.storage_offset())


swapaxes = swapdims = transpose


@op(view=True)
def t(self):
    """Transpose a matrix (0-d and 1-d tensors are returned as they are)."""
    ndim = self._data.ndim
    if ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {ndim}D")
    return transpose.impl(self, 0, 1) if ndim == 2 else make_view(
        self, self._data.shape, self.stride(), self.storage_offset())


def _matrix_transpose(self):
    if self._data.ndim == 0:
        # PyTorch keeps 0-d tensors working (the tensor itself, as T does), with a warning.
        warnings.warn("Tensor.mT is deprecated on 0-D tensors. This function is the identity in these cases.",
                      UserWarning, stacklevel=3)
        return self
    if self._data.ndim < 2:
        raise RuntimeError("tensor.mT is only supported on matrices or batches of matrices. "
                           f"Got {self._data.ndim}-D tensor.")
    return transpose(self, -2, -1)


def _full_reverse(self):
    return permute(self, list(reversed(range(self._data.ndim))))


@op(view=True)
def expand(self, *sizes):
    """Broadcast size-1 dims to `sizes` without copying (-1 keeps a dim)."""
    sizes = _shape_arg(sizes)
    shape, strides = tuple(self._data.shape), self.stride()
    if len(sizes) < len(shape):
        raise RuntimeError(
            f"expand(torch.FloatTensor{{{list(shape)}}}, size={list(sizes)}): the number of sizes "
            "provided (%d) must be greater or equal to the number of dimensions in the tensor (%d)"
            % (len(sizes), len(shape)))
    lead = len(sizes) - len(shape)
    new_shape, new_strides = [], []
    for i, n in enumerate(sizes):
        j = i - lead
        if j < 0:
            if n < 0:
                raise RuntimeError(
                    f"The expanded size of the tensor ({n}) isn't allowed in a leading, "
                    "non-existing dimension 0")
            new_shape.append(n)
            new_strides.append(0)
            continue
        if n == -1:
            n = shape[j]
        if shape[j] == n:
            new_shape.append(n)
            new_strides.append(strides[j])
        elif shape[j] == 1:
            new_shape.append(n)
            new_strides.append(0)
        else:
            raise RuntimeError(
                f"The expanded size of the tensor ({n}) must match the existing size ({shape[j]}) "
                f"at non-singleton dimension {i}.  Target sizes: {list(sizes)}.  Tensor sizes: "
                f"{list(shape)}")
    return make_view(self, new_shape, new_strides, self.storage_offset())


def expand_as(self, other):
    """`expand` to `other`'s shape."""
    return expand(self, tuple(other._data.shape))


@op(view=True)
def narrow(self, dim, start, length):
    """The slice start:start+length of dim `dim`, as a view."""
    dim = wrap_dim(dim, self._data.ndim)
    size = self._data.shape[dim]
    if isinstance(start, Tensor):
        start = start.item()
    if start < 0:
        start += size
    if not (0 <= start <= size and 0 <= length and start + length <= size):
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    shape, strides = list(self._data.shape), self.stride()
    shape[dim] = length
    return make_view(self, shape, strides, self.storage_offset() + start * strides[dim])


@op(view=True)
def select(self, dim, index):
    """Index `index` along dim `dim`, removing that dim (a view)."""
    ndim = self._data.ndim
    if ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    dim = wrap_dim(dim, ndim)
    size = self._data.shape[dim]
    if not -size <= index < size:
        raise IndexError(
            f"index {index} is out of bounds for dimension {dim} with size {size}")
    index %= size
    shape, strides = list(self._data.shape), list(self.stride())
    offset = self.storage_offset() + index * strides[dim]
    del shape[dim], strides[dim]
    return make_view(self, shape, strides, offset)


@op(view=True)
def diagonal(self, offset=0, dim1=0, dim2=1):
    """The diagonal over dims dim1 and dim2 as a view, appended as the last dim."""
    ndim = self._data.ndim
    d1, d2 = wrap_dim(dim1, ndim), wrap_dim(dim2, ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    shape, strides = list(self._data.shape), list(self.stride())
    start = self.storage_offset()
    if offset >= 0:
        n = max(0, min(shape[d1], shape[d2] - offset))
        start += offset * strides[d2] if n else 0
    else:
        n = max(0, min(shape[d1] + offset, shape[d2]))
        start -= offset * strides[d1] if n else 0
    diag_stride = strides[d1] + strides[d2]
    keep = [i for i in range(ndim) if i not in (d1, d2)]
    return make_view(self, [shape[i] for i in keep] + [n], [strides[i] for i in keep] + [diag_stride], start)


@op(view=True)
def unfold(self, dimension, size, step):
    """All windows of length `size` with stride `step` along `dimension`, as a new last dim."""
    ndim = self._data.ndim
    dim = wrap_dim(dimension, ndim) if ndim else 0
    shape, strides = list(self._data.shape) or [1], list(self.stride()) or [1]
    if size > shape[dim]:
        raise RuntimeError(f"maximum size for tensor at dimension {dim} is {shape[dim]} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    count = (shape[dim] - size) // step + 1
    new_shape = shape[:dim] + [count] + shape[dim + 1:] + [size]
    new_strides = strides[:dim] + [strides[dim] * step] + strides[dim + 1:] + [strides[dim]]
    if ndim == 0:
        new_shape, new_strides = [size], [1]
    return make_view(self, new_shape, new_strides, self.storage_offset())


@op()
def ravel(self):
    """The elements as a 1-d tensor: a view when the layout allows, else a copy.

    >>> import ember_tensor as torch
    >>> torch.tensor([[1, 2], [3, 4]]).t().ravel().tolist()
    [1, 3, 2, 4]
    """
    return reshape(self, (-1,))


@op()
def movedim(self, source, destination):
    """Move dims from `source` positions to `destination` positions."""
    ndim = self._data.ndim
    src = [wrap_dim(d, ndim) for d in (source if isinstance(source, (tuple, list)) else (source,))]
    dst = [wrap_dim(d, ndim) for d in (destination if isinstance(destination, (tuple, list)) else (destination,))]
    if len(src) != len(dst):
        raise RuntimeError(
            f"movedim: Invalid source or destination dims: source ({src} dims) should contain the same "
            f"number of dims as destination ({dst} dims)")
    order = [None] * ndim
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(d for d in range(ndim) if d not in src)
    order = [o if o is not None else next(rest) for o in order]
    return permute(self, order)


moveaxis = movedim


@op(view=True)
def alias(self):
    """A new tensor object viewing the same memory."""
    return make_view(self, self._data.shape, self.stride(), self.storage_offset())


@op(view=True)
def view_dtype(self, dtype):
    """Reinterpret the bytes as another dtype of the same size."""
    dtype = D.to_dtype(dtype)
    if dtype.itemsize != self._dtype.itemsize:
        raise RuntimeError("view(dtype) is only supported between dtypes of the same size here")
    t = Tensor._wrap(self._data.view(dtype.np), dtype, self._device, self._storage, self._offset)
    return t
