"""Numba loops of embedding_bag: each bag's rows added (or compared) straight from the
weight into the bag's output row, with no (entries, dim) gather in between, and the
backward's scatter-add of each bag's gradient row into the rows its entries looked up.

Bag b holds entries ``offsets[b] .. offsets[b + 1]`` (the last bag, when offsets has one
element per bag, ends at the number of entries); ends are clamped into [start, n].
Entries equal to ``padding_idx`` (-1 for none) are skipped and not counted. Indices and
offsets arrive as int64, weights as float32 or float64: one specialisation per weight
dtype. Sums accumulate in the output row, in the weight's dtype, entry by entry, as
PyTorch's CPU kernel does. The forward loops take a range of bags, so that ranges can run
on several threads (`threads.split`); the scatter of the backward is serial.

The rows an entry reads (or, in the backward, adds into) are random, and fetching them is
most of the time: each loop asks the CPU to fetch the first cache line of the row
`_PREFETCH_DISTANCE` entries ahead (LLVM's prefetch, `_prefetch_row`; 1.15-1.2x on 512
bags of 1-64 rows of 64 float32). The bodies inline no function of another file, so
Numba's on-disk cache (keyed on this file) can never serve a stale kernel.
"""
import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

__all__ = ["bag_sum", "bag_max", "bag_backward_rows", "bag_backward_max", "bag_weights_backward",
           "empty_scales", "PARALLEL_THRESHOLD"]

_OPTIONS = dict(cache=True, nogil=True, error_model="numpy")
PARALLEL_THRESHOLD = 1 << 16  # row elements read: a split over threads costs ~20-40 us
_PREFETCH_DISTANCE = 16  # entries: 8 and 16 measured alike, 32 slower (lines evicted before use)


@intrinsic
def _prefetch_row(typingctx, table, row):
    """Hint the CPU to fetch table[row, 0]'s cache line (for reading, kept in all cache
    levels); no effect on results, nothing is read."""
    def codegen(context, builder, signature, args):
        table_type = signature.args[0]
        array = context.make_array(table_type)(context, builder, args[0])
        pointer = cgutils.get_item_pointer2(
            context, builder, array.data, cgutils.unpack_tuple(builder, array.shape),
            cgutils.unpack_tuple(builder, array.strides), table_type.layout,
            [args[1], context.get_constant(types.intp, 0)])
        byte_pointer, i32 = ir.IntType(8).as_pointer(), ir.IntType(32)
        prefetch = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [byte_pointer, i32, i32, i32]), "llvm.prefetch.p0")
        # (address, 0: read, 3: keep in every level, 1: data cache)
        builder.call(prefetch, [builder.bitcast(pointer, byte_pointer), i32(0), i32(3), i32(1)])
        return context.get_dummy_value()
    return types.void(table, row), codegen


@njit(inline="always")
def _bag_bounds(offsets, b, n):
    """Bag b's entries start .. end, clamped into [0, n] (see the module docstring)."""
    start = min(max(offsets[b], 0), n)
    return start, min(max(offsets[b + 1] if b + 1 < offsets.shape[0] else n, start), n)


@njit(**_OPTIONS)
def bag_sum(weight, indices, offsets, scales, padding_idx, mean, out, offset2bag, bag_size, b_lo, b_hi):
    """out[b] = sum of weight[indices[j]] * scales[j] over bag b's kept entries (divided by
    their count when `mean`) for bags b_lo .. b_hi; `scales` empty means 1. Fills
    offset2bag (entry -> bag) and bag_size (kept entries per bag)."""
    n = indices.shape[0]
    dim = weight.shape[1]
    scaled = scales.shape[0] != 0
    for b in range(b_lo, b_hi):
        start, end = _bag_bounds(offsets, b, n)
        count = 0
        for j in range(start, end):
            if j + _PREFETCH_DISTANCE < n:
                _prefetch_row(weight, indices[j + _PREFETCH_DISTANCE])
            offset2bag[j] = b
            r = indices[j]
            if r == padding_idx:
                continue
            count += 1
            if scaled:
                s = scales[j]
                for c in range(dim):
                    out[b, c] += weight[r, c] * s
            else:
                for c in range(dim):
                    out[b, c] += weight[r, c]
        bag_size[b] = count
        if mean and count > 0:
            for c in range(dim):
                out[b, c] /= count


@njit(**_OPTIONS)
def bag_max(weight, indices, offsets, padding_idx, out, offset2bag, bag_size, max_indices, b_lo, b_hi):
    """out[b, c] = max of weight[indices[j], c] over bag b's kept entries, max_indices[b, c]
    the row it came from (the first on ties; -1 and a zero output for an empty bag), for
    bags b_lo .. b_hi."""
    n = indices.shape[0]
    dim = weight.shape[1]
    for b in range(b_lo, b_hi):
        start, end = _bag_bounds(offsets, b, n)
        count = 0
        for c in range(dim):
            max_indices[b, c] = -1
        for j in range(start, end):
            if j + _PREFETCH_DISTANCE < n:
                _prefetch_row(weight, indices[j + _PREFETCH_DISTANCE])
            offset2bag[j] = b
            r = indices[j]
            if r == padding_idx:
                continue
            if count == 0:
                for c in range(dim):
                    out[b, c] = weight[r, c]
                    max_indices[b, c] = r
            else:
                for c in range(dim):
                    v = weight[r, c]
                    if v > out[b, c]:
                        out[b, c] = v
                        max_indices[b, c] = r
            count += 1
        bag_size[b] = count


@njit(**_OPTIONS)
def bag_backward_rows(grad, indices, offset2bag, bag_size, scales, padding_idx, mean, freq, out):
    """out[indices[j]] += grad[offset2bag[j]] * scales[j] / (count if mean) / (freq of the
    index, when `freq` is not empty) for every kept entry j (sum and mean modes)."""
    dim = grad.shape[1]
    n = indices.shape[0]
    scaled = scales.shape[0] != 0
    by_freq = freq.shape[0] != 0
    for j in range(n):
        if j + _PREFETCH_DISTANCE < n:
            _prefetch_row(out, indices[j + _PREFETCH_DISTANCE])
        r = indices[j]
        if r == padding_idx:
            continue
        b = offset2bag[j]
        s = 1.0
        if scaled:
            s = scales[j]
        if mean:
            s = s / bag_size[b]
        if by_freq:
            s = s / freq[r]
        for c in range(dim):
            out[r, c] += grad[b, c] * s


@njit(**_OPTIONS)
def bag_backward_max(grad, max_indices, freq, out):
    """out[max_indices[b, c], c] += grad[b, c] (divided by the row's frequency when `freq`
    is not empty); empty bags (-1) give nothing."""
    by_freq = freq.shape[0] != 0
    for b in range(grad.shape[0]):
        for c in range(grad.shape[1]):
            r = max_indices[b, c]
            if r >= 0:
                if by_freq:
                    out[r, c] += grad[b, c] / freq[r]
                else:
                    out[r, c] += grad[b, c]


@njit(**_OPTIONS)
def bag_weights_backward(grad, weight, indices, offset2bag, padding_idx, out):
    """out[j] = dot(grad[offset2bag[j]], weight[indices[j]]), 0 for padding entries: the
    gradient of per_sample_weights in sum mode."""
    dim = grad.shape[1]
    for j in range(indices.shape[0]):
        r = indices[j]
        if r == padding_idx:
            out[j] = 0
            continue
        b = offset2bag[j]
        total = 0.0
        for c in range(dim):
            total += grad[b, c] * weight[r, c]
        out[j] = total


def empty_scales(dtype):
    """The `scales`/`freq` argument that means none (an empty array of `dtype`)."""
    return np.empty(0, dtype)
