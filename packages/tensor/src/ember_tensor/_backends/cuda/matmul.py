"""CUDA matrix products: `matmul` over device arrays with NumPy's (= PyTorch's) rules.

Operands are brought to 3-d (batch, rows, cols) views (broadcast batch dims have
stride 0; batch dims that cannot be merged are copied), then `_gemm` runs cuBLAS
through `_backends.cuda.blas` when it can (float16/bfloat16/float32/float64 on a GPU with
nvmath-python; the half types multiply natively there, accumulating in float32) and
otherwise the shared-memory tiled Numba kernel of `_backends.cuda.kernels.loops` (any dtype,
any strides; the one that runs under the simulator). The tiled kernel cannot type
half arrays: float16/bfloat16 operands are converted to float32 on the device for it
and the product converted back, which is what the CPU computes.

Under the simulator, cuBLAS's part (float32/float64 products of more than
`_SIM_LIBRARY_WORK` multiply-adds) is played by NumPy on the simulated device memory:
the tiled kernel simulated one Python thread per output element takes seconds for
the products of a small training step. Smaller products still run the tiled kernel,
so the simulator keeps checking it.

`linear` is the linear layer's product: one GEMM with the weight read transposed in
place, then a broadcast bias add.
"""
import numpy as np
from numba import cuda

from . import arrays, elementwise, launch, storage
from . import runtime
from .kernels.loops import SIMULATOR, loops

__all__ = ["matmul", "linear"]


def _batch_3d(x, batch):
    """x (batch..., r, c) as a 3-d (prod(batch), r, c) view, or a contiguous copy of it."""
    r, c = x.shape[-2:]
    lead = [(n, s) for n, s in zip(x.shape[:-2], x.strides[:-2]) if n != 1]
    merged = []
    for n, s in lead:
        if merged and merged[-1][1] == s * n:
            merged[-1] = (merged[-1][0] * n, s)
        else:
            merged.append((n, s))
    count = int(np.prod(batch, dtype=np.int64)) if batch else 1
    if len(merged) > 1:
        x = storage.astype(x, x.dtype)
        merged = [(count, r * c * x.dtype.itemsize)]
    n, s = merged[0] if merged else (1, 0)
    return arrays.restride(x, (count, r, c), (s,) + tuple(x.strides[-2:]))


def matmul(a, b):
    """Matrix product with NumPy's (= PyTorch's) rules for 1-d operands and batch dims."""
    a2 = a if a.ndim > 1 else arrays.restride(a, (1,) + a.shape, (0,) + a.strides)
    b2 = b if b.ndim > 1 else arrays.restride(b, b.shape + (1,), b.strides + (0,))
    batch = tuple(np.broadcast_shapes(a2.shape[:-2], b2.shape[:-2]))
    m, k = a2.shape[-2:]
    n = b2.shape[-1]
    a3 = _batch_3d(storage.broadcast_to(a2, batch + (m, k)), batch)
    b3 = _batch_3d(storage.broadcast_to(b2, batch + (k, n)), batch)
    out = storage.empty(batch + (m, n), a.dtype)
    if out.size:
        item = out.dtype.itemsize
        out3 = arrays.restride(out, (a3.shape[0], m, n), (m * n * item, n * item, item))
        if k == 0:
            storage.fill_(out3, 0)
        else:
            _gemm(a3, b3, out3)
    shape = batch + ((m,) if a.ndim > 1 else ()) + ((n,) if b.ndim > 1 else ())
    return out if shape == out.shape else out.reshape(shape)


def linear(x, weight, bias):
    """x @ weight.T + bias for x (*, in), weight (out, in), bias (out,) or None, of one
    float dtype: one GEMM (cuBLAS on a GPU) and a broadcast add."""
    in_features, out_features = weight.shape[1], weight.shape[0]
    if not arrays.is_c(x):
        x = storage.astype(x, x.dtype)
    item = x.dtype.itemsize
    x2 = arrays.restride(x, (x.size // in_features if in_features else 0, in_features), (in_features * item, item))
    w_t = arrays.restride(weight, (in_features, out_features), (weight.strides[1], weight.strides[0]))
    y = matmul(x2, w_t)
    if bias is not None and y.size:
        elementwise.binary("add", y, bias if bias.dtype == y.dtype else storage.astype(bias, y.dtype), y)
    return y.reshape(tuple(x.shape[:-1]) + (out_features,))


_HALF = ("float16", "bfloat16")


_SIM_LIBRARY_WORK = 1 << 14
_SIM_LIBRARY_DTYPES = ("float32", "float64")


def _simulated_library_gemm(a, b, out):
    """The simulator's stand-in for a cuBLAS call; False when the tiled kernel should run."""
    batch, m, n = out.shape
    if out.dtype.name not in _SIM_LIBRARY_DTYPES or batch * m * n * a.shape[2] <= _SIM_LIBRARY_WORK:
        return False
    np.matmul(a._ary, b._ary, out=out._ary)
    return True


def _gemm(a, b, out):
    """out[z] = a[z] @ b[z] over 3-d views: cuBLAS for floating types when it can be had."""
    if SIMULATOR and _simulated_library_gemm(a, b, out):
        return
    if not SIMULATOR:
        from . import blas as _cuda_blas
        if _cuda_blas.handles(out.dtype) and _cuda_blas.gemm(a, b, out, runtime.current_numba_stream()):
            if launch.LAUNCH_BLOCKING:
                cuda.synchronize()
            return
    if out.dtype.name in _HALF:
        wide = storage.empty(out.shape, np.float32)
        _tiled_gemm(storage.astype(a, np.float32), storage.astype(b, np.float32), wide)
        storage.copy_(out, wide)
        return
    _tiled_gemm(a, b, out)


def _tiled_gemm(a, b, out):
    mod = loops("gemm", out.dtype.name)
    tile = mod.TILE
    batch, m, n = out.shape
    grid = ((n + tile - 1) // tile, (m + tile - 1) // tile, min(batch, 65535))
    if SIMULATOR:
        launch.sim_launch_synced(mod.gemm, grid, (tile, tile), a, b, out)
    else:
        launch.launch_grid(mod.gemm, grid, (tile, tile), a, b, out)
