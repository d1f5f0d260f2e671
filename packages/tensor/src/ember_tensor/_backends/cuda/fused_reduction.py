"""Fused reductions on CUDA: an elementwise program reduced in eager's reduction kernels.

The CUDA twin of `_backends.cpu.fused_reduction` with the kernels of
`_backends.cuda.kernels.reduction` as they are, except that where eager's kernels read
``buf[o*s_o + r*s_r]`` these call the program's device function on each operand's element
(``f(b0[o*so0 + r*sr0], ...)``): a block of THREADS threads per output row, each folding
a strided share, then the block's shared-memory tree; few long rows split over more
blocks (`reduction._chunks`) and merged by eager's own `merge` kernel. The same shares,
tree and chunks as eager's, so results are eager ember's on CUDA bit for bit.

Kernels close over the program's device function, so they compile in memory once per
process per (program, kind, dtype), as ``ember.kernel``'s do (not disk-cached).
"""
import numpy as np
from numba import cuda

from .. import codegen
from ..cpu.kernels.reduction import ACCUMULATE
from ..plan import merge_dims_jointly
from . import arrays, storage
from .kernels.reduction import THREADS, _TREE, kernels as reduction_kernels
from .reduction import _chunks, _init, _launch

__all__ = ["run"]

_KERNELS = '''
def rows(n_o, n_r, init, out, {operands}):
    part = cuda.shared.array(THREADS, ACC)
    tid = cuda.threadIdx.x
    n = n_r
    for o in range(cuda.blockIdx.x, n_o, cuda.gridDim.x):
        acc = init
        for r in range(tid, n_r, THREADS):
            x = f({elements})
            acc = {step}
''' + _TREE + '''
        if tid == 0:
            acc = part[0]
            out[o] = {store}
        cuda.syncthreads()


def partial(n_o, n_r, init, nchunks, size, partials, {operands}):
    part = cuda.shared.array(THREADS, ACC)
    tid = cuda.threadIdx.x
    for t in range(cuda.blockIdx.x, n_o * nchunks, cuda.gridDim.x):
        lo = (t % nchunks) * size
        hi = min(lo + size, n_r)
        o = t // nchunks
        acc = init
        for r in range(lo + tid, hi, THREADS):
            x = f({elements})
            acc = {step}
''' + _TREE + '''
        if tid == 0:
            partials[t] = part[0]
        cuda.syncthreads()
'''

_compiled = {}   # (module name, kind) -> (rows, partial)


def _kernels(module_name, program, kind, np_dtype, arity, acc, epilogue=None):
    found = _compiled.get((module_name, kind))
    if found is None:
        step, merge, final = ACCUMULATE[kind]
        ks = range(arity)
        # An epilogue runs on the value eager would store (rounded to the dtype).
        store = final if epilogue is None else f"g(T({final}))"
        source = _KERNELS.format(operands=", ".join(f"b{k}, so{k}, sr{k}" for k in ks),
                                 elements=", ".join(f"b{k}[o * so{k} + r * sr{k}]" for k in ks),
                                 step=step, merge=merge, store=store)
        namespace = {"cuda": cuda, "np": np, "THREADS": THREADS, "ACC": acc, "T": np.dtype(np_dtype).type,
                     "f": cuda.jit(device=True)(program)}
        if epilogue is not None:
            namespace["g"] = cuda.jit(device=True)(epilogue)
        found = _compiled[(module_name, kind)] = tuple(
            cuda.jit(codegen.compile_function(source, name, namespace, f"<ember fused reduction {module_name}>"))
            for name in ("rows", "partial"))
    return found


def _layout(operands, dims):
    """(n_o, n_r, [(1-d buffer, row stride, reduced stride) per operand])."""
    shape = operands[0].shape
    kept_dims = [d for d in range(len(shape)) if d not in dims]
    n_o = int(np.prod([shape[d] for d in kept_dims], dtype=np.int64))
    n_r = int(np.prod([shape[d] for d in dims], dtype=np.int64))
    strides = [[s // a.dtype.itemsize for s in a.strides] for a in operands]
    if all(s >= 0 for st in strides for s in st):
        kept = merge_dims_jointly([shape[d] for d in kept_dims], [[st[d] for d in kept_dims] for st in strides])
        red = merge_dims_jointly([shape[d] for d in dims], [[st[d] for d in dims] for st in strides])
        if len(kept) <= 1 and len(red) <= 1:
            so = kept[0][1] if kept else [0] * len(operands)
            sr = red[0][1] if red else [0] * len(operands)
            layout = []
            for k, a in enumerate(operands):
                span = 1 + (n_o - 1) * so[k] + (n_r - 1) * sr[k]
                layout.append((arrays.restride(a, (span,), (a.dtype.itemsize,)), so[k], sr[k]))
            return n_o, n_r, layout
    order = kept_dims + list(dims)
    layout = []
    for a in operands:  # copied into (kept, reduced) order: every row contiguous
        view = arrays.restride(a, tuple(shape[d] for d in order), tuple(a.strides[d] for d in order))
        layout.append((arrays.flat(storage.astype(view, a.dtype)), n_r, 1))
    return n_o, n_r, layout


def run(module_name, program, kind, np_dtype, operands, dims, out, epilogue=None, epilogue_pass=None):
    """``out`` (flat, the kept dims) = reduction `kind` over `dims` of the device function
    `program` applied to device `operands` (non-empty, broadcast to one shape), then the
    device function `epilogue` (a one-input program, or None) on each reduced value: in
    the row kernel, or, for rows split over blocks (eager's `merge` kernel writes them), by
    ``epilogue_pass(out)``, an elementwise pass over `out` in place, afterwards."""
    n_o, n_r, layout = _layout(operands, dims)
    init = _init(kind, np.dtype(np_dtype))
    acc = type(init)
    rows, partial = _kernels(module_name, program, kind, np_dtype, len(operands), acc, epilogue)
    flat_args = [x for operand in layout for x in operand]
    nchunks = _chunks(n_o, n_r)
    if nchunks == 1:
        _launch(rows, n_o, n_o, n_r, init, out, *flat_args)
        return out
    size = -(-n_r // nchunks)
    partials = storage.empty((n_o * nchunks,), np.dtype(acc))
    _launch(partial, n_o * nchunks, n_o, n_r, init, nchunks, size, partials, *flat_args)
    _launch(reduction_kernels(kind, np.dtype(acc).name).merge, n_o, partials, n_o, nchunks, n_r, init, out)
    if epilogue is not None:
        epilogue_pass(out)
    return out
