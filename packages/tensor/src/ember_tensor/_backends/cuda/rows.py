"""The nn row ops on CUDA tensors: softmax, NLL loss, linear (the norms: `_backends.cuda.normalization`).

The CUDA halves of `_ops.nn.activation`, `loss` and `dense`: those ops
check their arguments (shared with the CPU), then call here for CUDA inputs. Every
operand is brought to a flat C-contiguous device array in its compute dtype (float32
for float16/bfloat16, as on the CPU) with at most one device-side copy, the kernels of
`_backends.cuda.kernels.rows` run, and results are cast back to the storage dtype on the device:
nothing goes through the host, except nll_loss's bounds check, which reads one int64
(the first out-of-range sample, if any) to raise PyTorch's "Target N is out of bounds."
as the CPU does (PyTorch asserts on the device instead).

`linear` is cuBLAS's GEMM (through `_backends.cuda.storage.matmul`, with the weight read transposed in
place) plus a broadcast bias add.
"""

import numpy as np

from . import arrays, elementwise, launch, matmul, storage
from ... import _dtype as D
from . import runtime
from .kernels import rows as K
from .kernels.loops import SIMULATOR
from ..._tensor import Tensor

__all__ = ["softmax", "nll_loss", "nll_loss_backward", "linear"]

_HALF = (D.float16, D.bfloat16)


# --- operands, results and launches (shared with _cuda_norms) -----------------------------

def _compute(t, np_dtype=None):
    """t's device storage as a flat C-contiguous array in its compute dtype (or np_dtype)."""
    data = t._data
    want = np.dtype(np_dtype or (np.float32 if t._dtype in _HALF else data.dtype))
    if data.dtype != want or not arrays.is_c(data):
        data = storage.astype(data, want)
    return arrays.flat(data)


def _result(flat, shape, dtype, device):
    """A tensor of `dtype` from flat compute array `flat`, cast on the device if needed."""
    data = arrays.restride(flat, tuple(shape), _c_strides(shape, flat.dtype.itemsize))
    if data.dtype != dtype.np:
        data = storage.astype(data, dtype.np)
    return Tensor._wrap(data, dtype, device)


def _c_strides(shape, itemsize):
    strides, step = [], itemsize
    for n in reversed(tuple(shape)):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def _optional(t, placeholder, np_dtype=None):
    """(array, present flag) for an optional per-channel tensor; kernels skip a placeholder."""
    if t is None:
        return placeholder, False
    return _compute(t, np_dtype), True


def _blocks(n):
    return max(1, min(n, launch.max_blocks()))


def _launch_rows(kernel, n_rows, row_size, *args):
    """One block per row (blocks stride over rows), sized to the row: a power of two
    from a warp up to THREADS (under the simulator from 1, to keep it quick), with a
    float64 of dynamic shared memory per thread for the block's merges."""
    block = 1 if SIMULATOR else 32
    while block < min(row_size, K.THREADS):
        block *= 2
    if SIMULATOR:
        launch.sim_launch_synced(kernel, 1, block, *args, shared=block * 8)
        return
    launch.launch_grid(kernel, _blocks(n_rows), block, *args, shared=block * 8)


def _launch_flat(kernel, n, *args):
    if n:
        launch.grid_stride(kernel, n, *args)


def _on_device(fn):
    """Run `fn` with its first tensor argument's GPU current (allocations land there)."""
    def on_device(t, *args):
        with runtime.device_context(t._device.index or 0):
            return fn(t, *args)
    on_device.__name__ = fn.__name__
    on_device.__doc__ = fn.__doc__
    return on_device


# --- softmax -------------------------------------------------------------------------------

@_on_device
def softmax(input, axis, log):
    """softmax (log: log_softmax) of float `input` (1 or more dims) along `axis`."""
    shape = tuple(input.shape) or (1,)  # a 0-d input is one row of one element
    size = shape[axis]
    inner = 1
    for n in shape[axis + 1:]:
        inner *= n
    x = _compute(input)
    y = storage.empty((x.size,), x.dtype)
    single = x.dtype == np.float32
    if x.size:
        if inner == 1:  # the common case: softmax over the last dim, a block per row
            _launch_rows(K.softmax_rows, x.size // size, size, x, y, x.size // size, size, log, single)
        else:
            outer = x.size // (size * inner)
            _launch_flat(K.softmax_columns, outer * inner, x, y, outer, size, inner, log, single)
    return _result(y, input.shape, input._dtype, input._device)


# --- negative log-likelihood ---------------------------------------------------------------

def _nll_operands(input, target, weight):
    """(x, targets, weights, has_weight, classes, inner, samples, first_bad) for the kernels."""
    x = _compute(input)
    t = _compute(target, np.int64)
    classes = input.shape[0] if input.dim() == 1 else input.shape[1]
    inner = x.size // (input.shape[0] * classes) if input.dim() > 2 and x.size else 1
    first_bad = storage.empty((1,), np.int64)
    storage.fill_(first_bad, t.size)
    w, has_weight = _optional(weight, first_bad, np.float64)  # weights read as float64
    return x, t, w, has_weight, classes, inner, first_bad


def _raise_if_out_of_bounds(t, first_bad):
    # One int64 comes back (and, on the error path, the offending target).
    at = int(storage.to_numpy(first_bad)[0])
    if at < t.size:
        value = int(storage.to_numpy(t[at:at + 1])[0])
        raise IndexError(f"Target {value} is out of bounds.")


@_on_device
def nll_loss(input, target, weight, reduction, ignore_index):
    """The NLL loss of checked operands: (N,) (or target's shape) for 'none', else 0-d."""
    x, t, w, has_weight, classes, inner, first_bad = _nll_operands(input, target, weight)
    losses = storage.empty((t.size,), np.float64)
    weights = storage.empty((t.size,), np.float64)
    _launch_flat(K.nll_forward, t.size, x, t, w, has_weight, classes, inner, ignore_index, losses,
                 weights, first_bad)
    _raise_if_out_of_bounds(t, first_bad)
    if reduction == "none":
        shape = () if input.dim() == 1 else (input.shape[0],) + tuple(input.shape[2:])
        return _result(losses, shape, input._dtype, input._device)
    out = storage.empty((1,), x.dtype)  # the kernel rounds its float64 result once, on the store
    _launch_rows(K.nll_reduce, 1, t.size, losses, weights, reduction == "mean", out)
    return _result(out, (), input._dtype, input._device)


@_on_device
def nll_loss_backward(grad_output, input, target, weight, reduction, ignore_index):
    """d nll_loss / d input: -w[t] * grad at each sample's target class, zeros elsewhere."""
    x, t, w, has_weight, classes, inner, first_bad = _nll_operands(input, target, weight)
    total_weight = storage.empty((1,), np.float64)
    if reduction == "mean":
        _launch_rows(K.nll_total_weight, 1, t.size, t, w, has_weight, classes, ignore_index,
                     total_weight, first_bad)
    grad = storage.empty((x.size,), x.dtype)
    storage.fill_(grad, 0)
    g = _compute(grad_output, np.float64)
    _launch_flat(K.nll_backward, t.size, t, w, has_weight, classes, inner, ignore_index, g,
                 reduction == "none", total_weight, reduction == "mean", grad, first_bad)
    _raise_if_out_of_bounds(t, first_bad)
    return _result(grad, input.shape, grad_output._dtype, grad_output._device)


# --- linear --------------------------------------------------------------------------------

@_on_device
def linear(input, weight, bias):
    """input @ weight.T + bias as one GEMM (cuBLAS on a GPU) and a broadcast add."""
    in_features, out_features = weight.shape[1], weight.shape[0]
    x = _compute(input)
    x2 = arrays.restride(x, (x.size // in_features if in_features else 0, in_features),
                         (in_features * x.dtype.itemsize, x.dtype.itemsize))
    w = weight._data
    if w.dtype != x.dtype:  # half types compute in float32, as on the CPU
        w = storage.astype(w, x.dtype)
    y = matmul.matmul(x2, arrays.restride(w, (in_features, out_features), (w.strides[1], w.strides[0])))
    if bias is not None and y.size:
        b = bias._data if bias._data.dtype == x.dtype else storage.astype(bias._data, x.dtype)
        elementwise.binary("add", y, b, y)
    return _result(arrays.flat(y), tuple(input.shape[:-1]) + (out_features,), input._dtype, input._device)
