"""Numba loops of embedding_bag: each bag's rows added (or compared) straight from the
weight into the bag's output row, with no (entries, dim) gather in between, and the
backward's scatter-add of each bag's gradient row into the rows its entries looked up.

Bag b holds entries ``offsets[b] .. offsets[b + 1]`` (the last bag, when offsets has one
element per bag, ends at the number of entries); ends are clamped into [start, n].
Entries equal to ``padding_idx`` (-1 for none) are skipped and not counted. Indices and
offsets arrive as int64, weights as float32 or float64: one specialisation per weight
dtype. Sums accumulate in the output row, in the weight's dtype, entry by entry, as
PyTorch's CPU kernel does. The bodies inline no function of another file, so Numba's
on-disk cache (keyed on this file) can never serve a stale kernel.
"""
import numpy as np
from numba import njit

__all__ = ["bag_sum", "bag_max", "bag_backward_rows", "bag_backward_max", "bag_weights_backward",
           "empty_scales"]

_OPTIONS = dict(cache=True, nogil=True, error_model="numpy")


@njit(**_OPTIONS)
def bag_sum(weight, indices, offsets, bags, scales, padding_idx, mean, out, offset2bag, bag_size):
    """out[b] = sum of weight[indices[j]] * scales[j] over bag b's kept entries (divided by
    their count when `mean`); `scales` empty means 1. Fills offset2bag (entry -> bag) and
    bag_size (kept entries per bag)."""
    n = indices.shape[0]
    dim = weight.shape[1]
    scaled = scales.shape[0] != 0
    for b in range(bags):
        start = min(max(offsets[b], 0), n)
        end = min(max(offsets[b + 1] if b + 1 < offsets.shape[0] else n, start), n)
        count = 0
        for j in range(start, end):
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
def bag_max(weight, indices, offsets, bags, padding_idx, out, offset2bag, bag_size, max_indices):
    """out[b, c] = max of weight[indices[j], c] over bag b's kept entries, max_indices[b, c]
    the row it came from (the first on ties; -1 and a zero output for an empty bag)."""
    n = indices.shape[0]
    dim = weight.shape[1]
    for b in range(bags):
        start = min(max(offsets[b], 0), n)
        end = min(max(offsets[b + 1] if b + 1 < offsets.shape[0] else n, start), n)
        count = 0
        for c in range(dim):
            max_indices[b, c] = -1
        for j in range(start, end):
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
    scaled = scales.shape[0] != 0
    by_freq = freq.shape[0] != 0
    for j in range(indices.shape[0]):
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
