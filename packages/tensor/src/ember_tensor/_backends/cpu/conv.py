"""CPU convolution (N-d, strided, padded, dilated, grouped) by im2col + BLAS.

1-d and 2-d convolutions with enough output positions per sample (`_BLOCKED_MIN_LENGTH`)
run blocked: a few samples at a time, a Numba im2col that pads as it copies lays their
columns out in a cache-sized scratch buffer (`kernels/conv.py`) and one batched GEMM per
block writes (O, L) rows straight into the NCHW output: no padded copy of the input, no
9x copy of it in memory, no transposed copy of the output. The weight gradient is the
same loop with the GEMM `grad_b @ cols_b^T` summed over samples (with short rows, one
GEMM per block over its samples: `_backward_weight_short`). The input gradient of a
unit-stride convolution with C >= O is a blocked forward convolution of the output
gradient with the flipped, transposed kernel (no scatter); otherwise per block the
columns W^T @ grad_b and a Numba col2im into the block's samples. With a thread budget
the blocks are split over threads (`threads.run_parts`), and the whole-batch GEMMs below
over rows (`gemm.py`).

The rest keeps the whole-batch forms: small outputs (where per-sample GEMMs are too
small for the BLAS: ResNet's 7x7 layers) the same Numba im2col writing (C*K, N*L)
columns, one GEMM per group and the same Numba col2im reading them; 3-d convolutions a
strided window view of the input and a batched `np.matmul`. Arrays arrive in their compute dtype (half types as float32).

3x3 unit-stride convolutions with enough channels on both sides (`winograd.usable`) take
Winograd's F(2x2, 3x3) instead, forward and both gradients (`winograd.py`).
"""
import math

import numpy as np

from . import threads, winograd
from .gemm import gemm
from ..lazy import lazy
from ..plan import output_size
from .windows import add_windows, crop_spatial, pad_spatial, windows

__all__ = ["forward", "backward_input", "backward_weight", "add_channel_bias"]

cpu_conv = lazy("cpu.kernels.conv")  # Numba loads on first use

# Below this many output positions per sample a per-sample GEMM is too narrow for the
# BLAS to run near its peak, and the whole-batch GEMM plus a transposing copy wins.
_BLOCKED_MIN_LENGTH = 64
# Bytes of im2col columns per block: a block's columns stay in the core's L2 cache
# between the copy that writes them and the GEMM that reads them.
_BLOCK_BYTES = 1 << 19
# Multiply-adds from which a blocked convolution splits its blocks over the thread budget.
_PARALLEL_WORK = 1 << 22
# Below this many output positions per sample the weight gradient takes one product per
# block over its samples (`_backward_weight_short`). Measured on the MNIST net's second
# layer (10->20, 5x5 to 8x8, batch 64; AVX-512 Xeon, loaded, interleaved): 1.17-1.82
# against 1.51-2.52 ms for the layer; at 24x24 (its first layer) and 32x32 (3->64) the
# per-sample products won by 1.45-1.6x.
_SHORT_LENGTH = 128


def _im2col(x, kernel, stride, padding, dilation, groups):
    """(N, G, C/G*K, L) columns of input `x` and the output spatial shape (N-d, NumPy)."""
    n, c = x.shape[:2]
    out = tuple(output_size(s, k, st, p, d) for s, k, st, p, d in
                zip(x.shape[2:], kernel, stride, padding, dilation))
    view = windows(pad_spatial(x, padding), kernel, stride, dilation, out)
    cols = view.reshape(n, groups, (c // groups) * math.prod(kernel), math.prod(out))
    return cols, out


def _as_2d(x, kernel, stride, padding, dilation):
    """A 1-d problem as a 2-d one with height 1 (so one compiled kernel serves both)."""
    if len(kernel) == 2:
        return x, kernel, stride, padding, dilation
    return (x[:, :, None, :], (1,) + tuple(kernel), (1,) + tuple(stride), (0,) + tuple(padding),
            (1,) + tuple(dilation))


def _columns_2d(x, kernel, stride, padding, dilation):
    """(C*K, N*L) columns of a 1-d or 2-d input and the 2-d output shape: the Numba
    im2col of the blocked path writing the whole-batch layout, padding included (no
    padded copy of the input). In this thread's scratch buffer: every caller consumes
    the columns before the next im2col."""
    x2, kernel, stride, padding, dilation = _as_2d(x, kernel, stride, padding, dilation)
    n, c = x2.shape[:2]
    out = tuple(output_size(s, k, st, p, d) for s, k, st, p, d in
                zip(x2.shape[2:], kernel, stride, padding, dilation))
    cols = cpu_conv.scratch((c * math.prod(kernel), n * math.prod(out)), x2.dtype)
    cpu_conv.im2col_block(np.ascontiguousarray(x2), kernel, stride, padding, dilation, out, cols, parallel=True)
    return cols, out


def _grouped_matmul(a, b, groups, transpose_a=False):
    """Block-diagonal product: group g of the rows of `a` (transposed on request) times
    group g of the rows of `b`, the results stacked by rows."""
    parts = [gemm(p.T if transpose_a else p, q) for p, q in zip(np.split(a, groups), np.split(b, groups))]
    return parts[0] if groups == 1 else np.concatenate(parts, axis=0)


def _blocked_plan(x_shape, kernel, stride, padding, dilation, out=None):
    """The 2-d form of a 1-d or 2-d problem (shapes, kernel, stride, padding, dilation and
    output size) when it runs blocked, else None."""
    if len(kernel) > 2:
        return None
    if len(kernel) == 1:
        x_shape = tuple(x_shape[:2]) + (1,) + tuple(x_shape[2:])
        kernel, stride, padding, dilation = ((1,) + tuple(kernel), (1,) + tuple(stride), (0,) + tuple(padding),
                                             (1,) + tuple(dilation))
        out = None if out is None else (1,) + tuple(out)
    if out is None:
        out = tuple(output_size(s, k, st, p, d) for s, k, st, p, d in
                    zip(x_shape[2:], kernel, stride, padding, dilation))
    if math.prod(out) < _BLOCKED_MIN_LENGTH:
        return None
    return tuple(x_shape), tuple(kernel), tuple(stride), tuple(padding), tuple(dilation), tuple(out)


def _blocks(n, rows, length, itemsize):
    """(start, stop) of the sample blocks whose (rows, length) columns fill ~_BLOCK_BYTES."""
    size = max(1, min(n, _BLOCK_BYTES // max(1, rows * length * itemsize)))
    return [(b, min(b + size, n)) for b in range(0, n, size)], size


def _run_blocks(blocks, work, body):
    """[body(run, parallel)] over the blocks: one run of them all (`parallel`: Numba's
    kernels and the BLAS thread within each call) or, with a thread budget and `work`
    multiply-adds enough, one contiguous run per thread (`threads.run_parts`)."""
    parts = min(len(blocks), threads.budget()) if threads.parallel(work, _PARALLEL_WORK) else 1
    if parts <= 1:
        return [body(blocks, True)]
    return threads.run_parts(lambda i: body(blocks[i * len(blocks) // parts:(i + 1) * len(blocks) // parts],
                                            False), parts)


def _forward_blocked(x, wg, plan, bias=None):
    """(N, O, L) output of the convolution of `x` with the grouped weight matrix `wg`
    (G, O/G, C/G*K) per `plan` (`_blocked_plan`), plus `bias` (O,) if given."""
    shape, kernel, stride, padding, dilation, out = plan
    x = np.ascontiguousarray(x).reshape(shape)
    n, c = shape[:2]
    groups, og, per_group = wg.shape
    rows, length = c * math.prod(kernel), math.prod(out)
    # Without groups the bias rides in the GEMM: a column of bias beside the weights times
    # a row of ones below the columns. With a short product (3 input channels: 27 deep)
    # the GEMM is bound by writing its output, and the extra depth costs nothing where a
    # separate pass over the output costs a quarter of the GEMM (measured).
    fold = bias is not None and groups == 1
    if fold:
        wg = np.concatenate([wg[0], bias[:, None].astype(wg.dtype)], axis=1)[None]
    y = np.empty((n, groups * og, length), x.dtype)
    blocks, size = _blocks(n, rows + fold, length, x.itemsize)

    def body(run, parallel):
        cols = cpu_conv.scratch((size, rows + fold, length), x.dtype)  # this thread's
        for start, stop in run:
            m = stop - start
            block = cpu_conv.im2col_block(x[start:stop], kernel, stride, padding, dilation, out, cols[:m],
                                          parallel)
            if groups == 1:
                if fold:
                    block[:, rows] = 1
                np.matmul(wg[0], block, out=y[start:stop])
            else:
                np.matmul(wg, block.reshape(m, groups, per_group, length),
                          out=y[start:stop].reshape(m, groups, og, length))
                if bias is not None:
                    y[start:stop] += bias[:, None]  # while the block's output is in cache

    _run_blocks(blocks, n * groups * og * per_group * length, body)
    return y


def _backward_weight_blocked(gy, x, groups, plan):
    """(G, O/G, C/G*K) weight gradient: sum over samples of grad_b @ cols_b^T, blocked."""
    shape, kernel, stride, padding, dilation, out = plan
    x = np.ascontiguousarray(x).reshape(shape)
    n, c = shape[:2]
    o, length = gy.shape[1], math.prod(out)
    rows = c * math.prod(kernel)
    per_group = rows // groups
    blocks, size = _blocks(n, rows, length, x.itemsize)
    if length < _SHORT_LENGTH:
        return _backward_weight_short(gy, x, groups, plan, blocks, size)
    gy = np.ascontiguousarray(gy).reshape(n, groups, o // groups, length)

    def body(run, parallel):
        cols = cpu_conv.scratch((size, rows, length), x.dtype)  # this thread's
        gw = np.zeros((groups, o // groups, per_group), x.dtype)
        for start, stop in run:
            m = stop - start
            block = cpu_conv.im2col_block(x[start:stop], kernel, stride, padding, dilation, out, cols[:m],
                                          parallel)
            parts = np.matmul(gy[start:stop], block.reshape(m, groups, per_group, length).transpose(0, 1, 3, 2))
            gw += parts[0] if m == 1 else parts.sum(axis=0)
        return gw

    # Summed in the order of the runs: bit-reproducible for a given thread budget.
    return sum(_run_blocks(blocks, n * o * per_group * length, body))


def _backward_weight_short(gy, x, groups, plan, blocks, size):
    """`_backward_weight_blocked` for short rows (fewer than _SHORT_LENGTH positions per
    sample): per block and group one product over all the block's samples, cols (R,
    B*L) @ grad^T (B*L, O/G), on the block's gradient copied to (B*L, O) (1/R of the
    columns' size), where the per-sample products grad_b @ cols_b^T are only L deep and
    their second operand transposed, which OpenBLAS runs far below its peak."""
    shape, kernel, stride, padding, dilation, out = plan
    n, c = shape[:2]
    o, length = gy.shape[1], math.prod(out)
    rows = c * math.prod(kernel)
    per_group, og = rows // groups, o // groups
    gy = np.asarray(gy).reshape(n, o, length)

    def body(run, parallel):
        flat = cpu_conv.scratch((rows * size * length,), x.dtype)  # this thread's
        gw_t = np.zeros((groups, per_group, og), x.dtype)
        for start, stop in run:
            m = stop - start
            block = cpu_conv.im2col_block(x[start:stop], kernel, stride, padding, dilation, out,
                                          flat[:rows * m * length].reshape(rows, m * length), parallel)
            g = np.ascontiguousarray(gy[start:stop].transpose(0, 2, 1)).reshape(m * length, o)
            for k in range(groups):
                gw_t[k] += block[k * per_group:(k + 1) * per_group] @ g[:, k * og:(k + 1) * og]
        return gw_t

    # Summed in the order of the runs: bit-reproducible for a given thread budget.
    return sum(_run_blocks(blocks, n * o * per_group * length, body)).transpose(0, 2, 1)


def _backward_input_blocked(gy, w, groups, plan):
    """(N, C, *S) input gradient per `plan` (the forward problem's): per block the
    columns W^T @ grad_b, then the Numba col2im that sums them into the block's samples."""
    shape, kernel, stride, padding, dilation, out = plan
    n, c = shape[:2]
    o, length = gy.shape[1], math.prod(out)
    rows = c * math.prod(kernel)
    per_group = rows // groups
    wt = np.ascontiguousarray(w).reshape(groups, o // groups, per_group).transpose(0, 2, 1)
    gy = np.ascontiguousarray(gy).reshape(n, groups, o // groups, length)
    gx = np.empty(shape, gy.dtype)
    blocks, size = _blocks(n, rows, length, gy.itemsize)

    def body(run, parallel):
        cols = cpu_conv.scratch((size, rows, length), gy.dtype)  # this thread's
        for start, stop in run:
            m = stop - start
            np.matmul(wt, gy[start:stop], out=cols[:m].reshape(m, groups, per_group, length))
            cpu_conv.col2im_block(cols[:m], kernel, stride, padding, dilation, out, gx[start:stop], parallel)

    _run_blocks(blocks, n * o * per_group * length, body)
    return gx


def _flipped_transposed(w, groups):
    """The kernel of the adjoint of a unit-stride convolution by `w` (O, C/G, *K), as the
    grouped weight matrix (G, C/G, O/G*K): per group in and out channels swapped and
    every spatial axis reversed."""
    o, cg = w.shape[:2]
    kernel = w.shape[2:]
    wt = w.reshape((groups, o // groups, cg) + kernel).swapaxes(1, 2)
    wt = wt[(Ellipsis,) + (slice(None, None, -1),) * len(kernel)]
    return np.ascontiguousarray(wt).reshape(groups, cg, (o // groups) * math.prod(kernel))


def forward(x, w, stride, padding, dilation, groups, bias=None):
    """Convolution of x (N, C, *S) with w (O, C/G, *K), plus `bias` (O,) if given:
    (N, O, *out)."""
    n, o = x.shape[0], w.shape[0]
    kernel = w.shape[2:]
    if len(kernel) == 2:
        out = tuple(output_size(s, k, st, p, d) for s, k, st, p, d in
                    zip(x.shape[2:], kernel, stride, padding, dilation))
        if winograd.usable(x.dtype, kernel, stride, dilation, groups, x.shape[1], o, out):
            return winograd.forward(x, w, padding, out, bias)
    plan = _blocked_plan(x.shape, kernel, stride, padding, dilation)
    if plan is not None:
        wg = np.ascontiguousarray(w).reshape(groups, o // groups, math.prod(w.shape[1:]))
        return _forward_blocked(x, wg, plan, bias).reshape((n, o) + plan[-1][-len(kernel):])
    if len(kernel) > 2:
        cols, out = _im2col(x, kernel, stride, padding, dilation, groups)
        y = np.matmul(w.reshape(groups, o // groups, cols.shape[2]), cols).reshape((n, o) + out)
    else:
        # Few output positions: one GEMM per group over the whole batch, (O/G, C/G*K) @
        # (C/G*K, N*L), then one transposing copy to (N, O, L).
        cols, out = _columns_2d(x, kernel, stride, padding, dilation)
        y = _grouped_matmul(w.reshape(o, cols.shape[0] // groups), cols, groups)
        out = out[-len(kernel):]
        y = np.ascontiguousarray(y.reshape(o, n, math.prod(out)).transpose(1, 0, 2)).reshape((n, o) + out)
    return y if bias is None else add_channel_bias(y, bias)


def _grad_rows(gy):
    """grad (N, O, *out) as (O, N*L), the layout of the weight-gradient GEMM."""
    n, o = gy.shape[:2]
    length = math.prod(gy.shape[2:])
    return np.ascontiguousarray(gy.reshape(n, o, length).transpose(1, 0, 2)).reshape(o, n * length)


def backward_input(gy, w, input_size, stride, padding, dilation, groups):
    """Gradient of `forward` w.r.t. x of spatial `input_size`: col2im of W^T @ grad."""
    n, o = gy.shape[:2]
    c = w.shape[1] * groups
    kernel, out = w.shape[2:], gy.shape[2:]
    if winograd.usable(gy.dtype, kernel, stride, dilation, groups, o, c, input_size):
        # A 3x3 unit-stride convolution's adjoint is the convolution of the gradient with
        # the flipped, transposed kernel, padded by 2 - p (see below): by Winograd's
        # algorithm where the forward convolution would take it.
        return winograd.forward(gy, _flipped_transposed(w, groups).reshape((c, o) + tuple(kernel)),
                                tuple(2 - p for p in padding), tuple(input_size))
    if all(st == 1 for st in stride) and c >= o:
        # A unit-stride convolution's adjoint is a convolution of the gradient with the
        # flipped, transposed kernel, padded by d*(k-1) - p (negative: a crop), over an
        # output of the input's size: one GEMM per block with an O/G*K-deep product and no
        # scatter. Its columns are O*K rows per sample where col2im's are C*K: with fewer
        # input than output channels (3 -> 64) col2im moves less memory and wins.
        flipped_padding = tuple(d * (k - 1) - p for d, k, p in zip(dilation, kernel, padding))
        plan = _blocked_plan(gy.shape, kernel, stride, flipped_padding, dilation, out=tuple(input_size))
        if plan is not None:
            gx = _forward_blocked(gy, _flipped_transposed(w, groups), plan)
            return gx.reshape((n, c) + tuple(input_size))
    plan = _blocked_plan((n, c) + tuple(input_size), kernel, stride, padding, dilation, out=tuple(out))
    if plan is not None:
        return _backward_input_blocked(gy, w, groups, plan).reshape((n, c) + tuple(input_size))
    if len(kernel) > 2:
        wm = w.reshape(groups, o // groups, (c // groups) * math.prod(kernel))
        g = gy.reshape(n, groups, o // groups, math.prod(out))  # explicit sizes: n may be 0
        gcols = np.matmul(wm.transpose(0, 2, 1), g).reshape((n, c) + tuple(kernel) + tuple(out))
        padded = (n, c) + tuple(s + 2 * p for s, p in zip(input_size, padding))
        gx = add_windows(gcols, padded, kernel, stride, dilation, out)
        return crop_spatial(gx, padding, input_size)
    # Few output positions: one GEMM per group over the whole batch, W^T @ (O, N*L), and
    # the Numba col2im of the blocked path reading that (C*K, N*L) layout as it is,
    # dropping the padding as it sums (no per-sample copy, no padded array to crop).
    gcols = _grouped_matmul(w.reshape(o, math.prod(w.shape[1:])), _grad_rows(gy), groups, transpose_a=True)
    if len(kernel) == 1:
        kernel, stride, padding, dilation = ((1,) + tuple(kernel), (1,) + tuple(stride), (0,) + tuple(padding),
                                             (1,) + tuple(dilation))
        input_size, out = (1,) + tuple(input_size), (1,) + tuple(out)
    gx = np.empty((n, c) + tuple(input_size), gcols.dtype)
    cpu_conv.col2im_block(gcols, kernel, stride, padding, dilation, out, gx, parallel=True)
    return gx.reshape((n, c) + tuple(input_size)[-len(w.shape[2:]):])


def backward_weight(gy, x, weight_size, stride, padding, dilation, groups):
    """Gradient of `forward` w.r.t. w of shape `weight_size`: grad @ cols^T (summed over the batch)."""
    n, o = gy.shape[:2]
    kernel = tuple(weight_size[2:])
    if winograd.usable(x.dtype, kernel, stride, dilation, groups, x.shape[1], o, gy.shape[2:]):
        return winograd.backward_weight(gy, x, padding)
    plan = _blocked_plan(x.shape, kernel, stride, padding, dilation)
    if plan is not None:
        return _backward_weight_blocked(gy, x, groups, plan).reshape(weight_size)
    if len(kernel) > 2:
        cols, out = _im2col(x, kernel, stride, padding, dilation, groups)
        g = gy.reshape(n, groups, o // groups, math.prod(out))
        gw = np.matmul(g, cols.transpose(0, 1, 3, 2)).sum(axis=0)
        return gw.reshape(weight_size)
    cols, _ = _columns_2d(x, kernel, stride, padding, dilation)
    rows = _grad_rows(gy)
    # cols @ rows^T, then transposed: OpenBLAS is ~20x slower on the same product taken
    # as rows @ cols^T (a short, very deep GEMM) on this machine.
    gw = np.concatenate([gemm(q, p.T).T for p, q in zip(np.split(rows, groups), np.split(cols, groups))])
    return gw.reshape(weight_size)


def add_channel_bias(y, bias):
    """y (N, O, *S) += bias (O,) broadcast over the batch and positions, in place."""
    y += bias.reshape((1, -1) + (1,) * (y.ndim - 2))
    return y
