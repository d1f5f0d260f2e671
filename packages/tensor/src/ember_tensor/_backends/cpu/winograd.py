"""CPU 3x3 stride-1 convolution by Winograd's F(2x2, 3x3) algorithm.

Each 2x2 output tile comes from a 4x4 input tile: with the filter transformed once,
U = G g G^T (16 numbers per in/out channel pair, NumPy), and the tiles transformed by a Numba
kernel, V = B^T d B, the convolution is 16 GEMMs, one per coordinate of the 4x4 tile,
M[xi] (O, T) = U[xi] (O, C) @ V[xi] (C, T), then the output transform Y = A^T M A
(`kernels/winograd.py`): 16 products of C*O multiply-adds per 4 outputs where the direct
convolution has 9*C*O per output, 2.25x fewer. The padding and partial edge tiles (odd
output sizes) are the transforms' business; the GEMMs see whole tiles only. The input
gradient is the same convolution of the output gradient with the flipped, transposed
kernel (`conv.backward_input`); the weight gradient (`backward_weight`) takes each step's
adjoint in reverse.

As in the blocked im2col path (`conv.py`), a few samples run at a time, their
transformed tiles and products in a per-thread buffer between the transform that writes
them and the GEMM that reads them; with a thread budget the blocks are split over
threads (`threads.run_parts`).

Where it is used (`usable`): float32 and float64, a 3x3 kernel, unit stride and
dilation, no groups, and enough channels on both sides for the 16 GEMMs to run near the
BLAS's peak (their depth is C, their height O): 32 and more measured a win (break-even
at 32), below it the transforms cost more than the multiplies they save; and 64 output
positions per sample (at 7x7 the 16 tiles of a sample make too narrow a GEMM). Its
rounding differs from the direct sum's by a few units in the last place of the sums (the
filter transform's halves are exact; the tile transforms add and subtract up to 9 inputs
before the product): float32 errors measured within 1.5x of the im2col path's.
"""
import math

import numpy as np

from . import threads
from ..lazy import lazy

__all__ = ["usable", "forward", "backward_weight"]

cpu_winograd = lazy("cpu.kernels.winograd")  # Numba loads on first use
cpu_conv = lazy("cpu.kernels.conv")  # the per-thread scratch buffer

# Fewest input and output channels for which the 16 GEMMs beat im2col's one (measured).
_MIN_CHANNELS = 32
# Fewest output positions per sample: below, a sample's tiles make too narrow a GEMM and
# the edge tiles of odd sizes waste much of the work (7x7: 16 tiles for 49 outputs).
_MIN_LENGTH = 64
# Bytes of transformed tiles and products per block of the forward convolution (and the
# input gradient, the same code). Machine-dependent: on the AMD EPYC of the ninth session
# (OpenBLAS's Haswell kernels) the 64->64 benchmark row's GEMMs took 7.1 ms at 4 samples,
# 2 MiB, against 8.6 ms at 1 sample, 512 KiB; on the AVX-512 Xeon of the tenth session
# (SkylakeX kernels, 2 MiB of L2 cache) the same 16 GEMMs took 4.9 ms at 4 samples, 3.4 ms
# at 1 or 2 (1 MiB; best of 20, 2026-11-28): the middle is taken.
_BLOCK_BYTES = 1 << 20
# Multiply-adds from which the blocks are split over the thread budget.
_PARALLEL_WORK = 1 << 22

# F(2x2, 3x3)'s filter transform: U = G g G^T.
_G = np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0.0, 0.0, 1.0]])
_GG = np.kron(_G, _G)  # (16, 9): row 4*a + b of U from the row-major 3x3 kernel


def usable(dtype, kernel, stride, dilation, groups, channels, out_channels, out):
    """Whether a 2-d convolution with these parameters takes the Winograd path."""
    return (np.dtype(dtype) in (np.float32, np.float64) and tuple(kernel) == (3, 3) and
            tuple(stride) == (1, 1) and tuple(dilation) == (1, 1) and groups == 1 and
            min(channels, out_channels) >= _MIN_CHANNELS and math.prod(out) >= _MIN_LENGTH)


def _transformed_filter(w):
    """U (16, O, C) = G g G^T of the weight w (O, C, 3, 3), coordinate xi = 4*row + column:
    one GEMM of G (x) G, the transform of a flattened 3x3 kernel, with the O*C kernels."""
    o, c = w.shape[:2]
    return (_GG.astype(w.dtype) @ w.reshape(o * c, 9).T).reshape(16, o, c)


def _padded(size, itemsize):
    """A coordinate's stride, in elements, in the scratch buffer for `size` elements: an
    odd number of cache lines. The transforms run 16 streams one stride apart, and at an
    even number (a multiple of 4 KiB, typically) they share few of the L1 cache's sets,
    more streams than the sets have ways (measured 2x slower transforms)."""
    per_line = 64 // itemsize
    lines = -(-size // per_line)
    return (lines + 1 - lines % 2) * per_line


def _coordinates(buf, stride, rows, count):
    """The (16, rows, count) view of the flat buffer whose coordinates lie `stride` apart."""
    return buf.reshape(16, stride)[:, :rows * count].reshape(16, rows, count)


def _blocks(n, channels, tiles, itemsize):
    """(start, stop) of the sample blocks whose transformed tiles and products
    (`channels` = C + O of them per tile) fill ~_BLOCK_BYTES, and the block size."""
    size = max(1, min(n, _BLOCK_BYTES // (16 * channels * tiles * itemsize)))
    return [(b, min(b + size, n)) for b in range(0, n, size)], size


def _run_blocks(blocks, work, body):
    """[body(run)] over the blocks: one run of them all, or with a thread budget and
    `work` multiply-adds enough, one contiguous run per thread (`threads.run_parts`)."""
    parts = min(len(blocks), threads.budget()) if threads.parallel(work, _PARALLEL_WORK) else 1
    if parts <= 1:
        return [body(blocks)]
    return threads.run_parts(lambda i: body(blocks[i * len(blocks) // parts:(i + 1) * len(blocks) // parts]), parts)


def _scratch_size(c, o, count, itemsize):
    """Elements of the scratch buffer for a block of `count` tiles (see `_buffers`)."""
    return 16 * (_padded(c * count, itemsize) + _padded(o * count, itemsize))


def _buffers(buf, c, o, count, itemsize):
    """The block's transformed tiles and products in the scratch buffer `buf`: two flat
    views and their coordinates' strides (`_padded`)."""
    v_stride, m_stride = _padded(c * count, itemsize), _padded(o * count, itemsize)
    return buf[:16 * v_stride], v_stride, buf[16 * v_stride:16 * (v_stride + m_stride)], m_stride


def forward(x, w, padding, out, bias=None):
    """Convolution (N, O, *out) of x (N, C, H, W) with w (O, C, 3, 3), unit stride and
    dilation, padded by `padding` (ph, pw), plus `bias` (O,) if given."""
    n, c = x.shape[:2]
    o = w.shape[0]
    th, tw = -(-out[0] // 2), -(-out[1] // 2)
    tiles = th * tw
    x = np.ascontiguousarray(x)
    u = _transformed_filter(np.asarray(w, x.dtype))
    shift = np.zeros(0, x.dtype) if bias is None else np.ascontiguousarray(bias, x.dtype)
    y = np.empty((n, o) + tuple(out), x.dtype)
    blocks, size = _blocks(n, c + o, tiles, x.itemsize)
    ph, pw = padding

    def body(run):
        buf = cpu_conv.scratch((_scratch_size(c, o, size * tiles, x.itemsize),), x.dtype)  # this thread's
        for start, stop in run:
            m = stop - start
            count = m * tiles
            v, v_stride, prod, m_stride = _buffers(buf, c, o, count, x.itemsize)
            cpu_winograd.input_transform(x[start:stop], ph, pw, th, tw, v, v_stride, 0, m * c)
            np.matmul(u, _coordinates(v, v_stride, c, count), out=_coordinates(prod, m_stride, o, count))
            cpu_winograd.output_transform(prod, m_stride, shift, th, tw, y[start:stop], 0, m * o)

    _run_blocks(blocks, 16 * n * tiles * c * o, body)
    return y


def backward_weight(gy, x, padding):
    """Gradient (O, C, 3, 3) of `forward` w.r.t. the weight: the adjoint of each step in
    reverse, dU[xi]^T (C, O) = sum over the tiles of V[xi] (C, T) @ (A g A^T)[xi] (T, O),
    one deep GEMM per coordinate and block, then G^T dU G. The gradient's tiles are
    transformed channels last (`output_adjoint`, from the block's gradient copied to
    (B, oh, ow, O)), so that both operands of the GEMMs are as the BLAS reads them fastest
    (V^T copied per block, or the transposed view, took 2x the time of the three steps
    now; 64->64 at 16x16 batch 64, AVX-512 Xeon, 2026-11-28)."""
    n, c = x.shape[:2]
    o = gy.shape[1]
    th, tw = -(-gy.shape[2] // 2), -(-gy.shape[3] // 2)
    tiles = th * tw
    x, gy = np.ascontiguousarray(x), np.asarray(gy, x.dtype)
    blocks, size = _blocks(n, c + o, tiles, x.itemsize)
    ph, pw = padding

    def body(run):
        buf = cpu_conv.scratch((_scratch_size(c, o, size * tiles, x.itemsize),), x.dtype)  # this thread's
        du_t = np.zeros((16, c, o), x.dtype)
        for start, stop in run:
            m = stop - start
            count = m * tiles
            v, v_stride, grad, _ = _buffers(buf, c, o, count, x.itemsize)
            cpu_winograd.input_transform(x[start:stop], ph, pw, th, tw, v, v_stride, 0, m * c)
            grad = grad[:16 * count * o].reshape(16, count, o)
            cpu_winograd.output_adjoint(np.ascontiguousarray(gy[start:stop].transpose(0, 2, 3, 1)), th, tw, grad)
            du_t += np.matmul(_coordinates(v, v_stride, c, count), grad)
        return du_t

    # Summed in the order of the runs: bit-reproducible for a given thread budget.
    du_t = sum(_run_blocks(blocks, 16 * n * tiles * c * o, body))
    return (_GG.T.astype(x.dtype) @ du_t.transpose(0, 2, 1).reshape(16, o * c)).T.reshape(o, c, 3, 3)
