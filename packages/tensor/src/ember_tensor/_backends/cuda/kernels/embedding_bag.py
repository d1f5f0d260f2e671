"""Numba CUDA kernels of embedding_bag: the forward with one thread per (bag, column) —
each walks its bag's entries and reads one column of each looked-up row straight from
the weight — and the backward's atomic scatter-add, one thread per (entry, column), or
per (bag, column) to the argmax rows in max mode.

Bag b holds entries ``offsets[b] .. offsets[b + 1]`` (the last bag, when offsets has one
element per bag, ends at the number of entries), clamped into [start, n]; entries equal
to ``padding_idx`` (-1: none) are skipped. The semantics are those of the CPU loops in
`_backends/cpu/kernels/embedding_bag.py`. Nothing here calls a function of another file (`_bag_bounds` is this file's),
so Numba's on-disk cache (keyed on this file) can never serve a stale kernel.
"""
from numba import cuda

__all__ = ["bag_sum", "bag_max", "bag_backward_rows", "bag_backward_max", "bag_weights_backward"]


@cuda.jit(device=True)
def _bag_bounds(offsets, b, n):
    """Bag b's entries start .. end, clamped into [0, n] (see the module docstring)."""
    start = min(max(offsets[b], 0), n)
    end = n
    if b + 1 < offsets.shape[0]:
        end = offsets[b + 1]
    return start, min(max(end, start), n)


@cuda.jit(cache=True)
def bag_sum(weight, indices, offsets, scales, padding_idx, mean, out, offset2bag, bag_size):
    """out[b, c] = sum of weight[indices[j], c] * scales[j] (scales empty: 1) over bag b's
    kept entries, divided by their count when `mean`; column 0's thread also writes
    offset2bag and bag_size.."""
    bags, dim = out.shape
    n = indices.shape[0]
    scaled = scales.shape[0] != 0
    for p in range(cuda.grid(1), bags * dim, cuda.gridsize(1)):
        b = p // dim
        c = p % dim
        start, end = _bag_bounds(offsets, b, n)
        total = out[b, c]  # zero (out arrives zeroed): the sum in out's dtype
        count = 0
        for j in range(start, end):
            r = indices[j]
            if c == 0:
                offset2bag[j] = b
            if r == padding_idx:
                continue
            count += 1
            if scaled:
                total += weight[r, c] * scales[j]
            else:
                total += weight[r, c]
        if mean and count > 0:
            total /= count
        out[b, c] = total
        if c == 0:
            bag_size[b] = count


@cuda.jit(cache=True)
def bag_max(weight, indices, offsets, padding_idx, out, offset2bag, bag_size, max_indices):
    """out[b, c] = max of weight[indices[j], c] over bag b's kept entries, max_indices[b, c]
    its row (the first on ties; -1 and 0 for an empty bag)."""
    bags, dim = out.shape
    n = indices.shape[0]
    for p in range(cuda.grid(1), bags * dim, cuda.gridsize(1)):
        b = p // dim
        c = p % dim
        start, end = _bag_bounds(offsets, b, n)
        best = out[b, c]  # zero, the empty bag's value
        arg = -1
        count = 0
        for j in range(start, end):
            r = indices[j]
            if c == 0:
                offset2bag[j] = b
            if r == padding_idx:
                continue
            v = weight[r, c]
            if count == 0 or v > best:
                best = v
                arg = r
            count += 1
        out[b, c] = best
        max_indices[b, c] = arg
        if c == 0:
            bag_size[b] = count


@cuda.jit(cache=True)
def bag_backward_rows(grad, indices, offset2bag, bag_size, scales, padding_idx, mean, freq, out):
    """out[indices[j], c] += grad[offset2bag[j], c] * scales[j] (/ count when `mean`, / the
    row's frequency when `freq` is not empty), atomically, for every kept entry j."""
    dim = grad.shape[1]
    scaled = scales.shape[0] != 0
    by_freq = freq.shape[0] != 0
    for p in range(cuda.grid(1), indices.shape[0] * dim, cuda.gridsize(1)):
        j = p // dim
        c = p % dim
        r = indices[j]
        if r == padding_idx:
            continue
        b = offset2bag[j]
        v = grad[b, c]
        if scaled:
            v = v * scales[j]
        if mean:
            v = v / bag_size[b]
        if by_freq:
            v = v / freq[r]
        cuda.atomic.add(out, (r, c), v)


@cuda.jit(cache=True)
def bag_backward_max(grad, max_indices, freq, out):
    """out[max_indices[b, c], c] += grad[b, c] (/ the row's frequency when `freq` is not
    empty), atomically; empty bags (-1) add nothing."""
    bags, dim = grad.shape
    by_freq = freq.shape[0] != 0
    for p in range(cuda.grid(1), bags * dim, cuda.gridsize(1)):
        b = p // dim
        c = p % dim
        r = max_indices[b, c]
        if r >= 0:
            v = grad[b, c]
            if by_freq:
                v = v / freq[r]
            cuda.atomic.add(out, (r, c), v)


@cuda.jit(cache=True)
def bag_weights_backward(grad, weight, indices, offset2bag, padding_idx, out):
    """out[j] = dot(grad[offset2bag[j]], weight[indices[j]]), 0 for padding entries."""
    dim = grad.shape[1]
    for j in range(cuda.grid(1), indices.shape[0], cuda.gridsize(1)):
        r = indices[j]
        total = out[j]  # zero (out arrives zeroed)
        if r != padding_idx:
            b = offset2bag[j]
            for c in range(dim):
                total += grad[b, c] * weight[r, c]
        out[j] = total
