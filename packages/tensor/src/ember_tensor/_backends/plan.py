"""The layout plan of an op over strided arrays, made once and used by every backend.

Both backends run elementwise loops TensorIterator-style: operands broadcast to the
output's shape (stride 0 on broadcast dims), then dims that are contiguous for every
operand merged, so that one 4-d strided kernel serves every rank and layout. Reductions
merge the (size, stride) pairs of their kept and reduced dims the same way. Sliding
windows (convolution, pooling, unfold) have their geometry here too. The plan works on
shapes and strides only (any unit: elements or bytes), never on memory, so the ops and
every backend use the same one.
"""

__all__ = ["MAX_DIMS", "WORDS", "merge_dims", "merge_dims_jointly", "merged_layout", "rows_along", "rows_over_trailing",
           "row_layout", "pair_row_layout", "word_layout", "output_size", "adaptive_bounds"]

# Strided elementwise kernels index four dims; more that do not merge loop on the host.
MAX_DIMS = 4
# Kernels that only move elements read them as unsigned words of their size; a 16-byte
# item (complex128) moves as two uint64 words, so the uint64 kernels serve it too: its
# offsets are counted in words (strides times WORDS[itemsize]) and the kernels walk a
# trailing dim of the item's words (`word_layout`).
WORDS = {1: 1, 2: 1, 4: 1, 8: 1, 16: 2}


def merge_dims(dims):
    """Merge (size, stride) pairs that are adjacent in memory; drop size-1 dims.

    >>> merge_dims([(2, 12), (3, 4), (1, 9), (4, 1)])
    [(24, 1)]
    """
    merged = []
    for n, s in dims:
        if n == 1:
            continue
        if merged and merged[-1][1] == s * n:
            merged[-1] = (merged[-1][0] * n, s)
        else:
            merged.append((n, s))
    return merged


def merge_dims_jointly(sizes, strides):
    """Merge dims (`sizes`, each operand's `strides`) where every operand's strides are
    adjacent in memory; drop size-1 dims. Returns ``[(size, [stride per operand])]``.

    >>> merge_dims_jointly((2, 3), [(3, 1), (0, 0)])
    [(6, [1, 0])]
    >>> merge_dims_jointly((2, 3), [(3, 1), (1, 0)])
    [(2, [3, 1]), (3, [1, 0])]
    """
    merged = []
    for d, n in enumerate(sizes):
        column = [st[d] for st in strides]
        if n == 1:
            continue
        if merged and all(prev == s * n for prev, s in zip(merged[-1][1], column)):
            merged[-1] = (merged[-1][0] * n, column)
        else:
            merged.append((n, column))
    return merged


def rows_along(shape, axis, strides):
    """The rows of a row kernel along `axis` of `shape` (every dim after it of size 1)
    over operands of element `strides`: ``(n_rows, size, inner_rows, [(outer, inner,
    along) per operand])``, row ``o`` of an operand starting at ``(o // inner_rows) *
    outer + (o % inner_rows) * inner``, its elements `along` apart; or None when an
    operand's kept dims do not merge into two (or a stride is negative).

    Two levels, not one: a mask broadcast over the leading dims of attention scores
    ((B, H, L, L) + (L, L)) keeps two runs of rows.

    >>> rows_along((8, 4, 5), 2, [[20, 5, 1], [0, 5, 1]])
    (32, 5, 4, [(20, 5, 1), (0, 5, 1)])
    """
    if any(s < 0 for st in strides for s in st):
        return None
    kept = [d for d in range(len(shape)) if d != axis]
    merged = merge_dims_jointly([shape[d] for d in kept], [[st[d] for d in kept] for st in strides])
    if len(merged) > 2:
        return None
    n_rows = 1
    for d in kept:
        n_rows *= shape[d]
    outer = merged[-2][1] if len(merged) == 2 else [0] * len(strides)
    inner = merged[-1][1] if merged else [0] * len(strides)
    inner_rows = merged[-1][0] if merged else 1
    return n_rows, shape[axis], inner_rows, [(outer[k], inner[k], st[axis]) for k, st in enumerate(strides)]



def rows_over_trailing(shape, k, strides):
    """`rows_along` for rows made of the trailing `k` dims of `shape` (layer norm's): each
    operand's trailing dims merged into one run of elements (size-1 dims aside), then the
    rows of that last dim; None when an operand's trailing dims do not merge or
    `rows_along` finds none.

    >>> rows_over_trailing((3, 4, 5), 2, [[20, 5, 1], [0, 0, 0]])
    (3, 20, 3, [(0, 20, 1), (0, 0, 0)])
    >>> rows_over_trailing((3, 4, 5), 2, [[20, 5, 1], [0, 0, 1]]) is None   # a (5,) over dim 1
    True
    """
    lead = len(shape) - k
    dims = [d for d in range(lead, len(shape)) if shape[d] != 1]
    size = 1
    for d in range(lead, len(shape)):
        size *= shape[d]
    merged = []
    for st in strides:
        if any(st[a] != st[b] * shape[b] for a, b in zip(dims, dims[1:])):
            return None
        merged.append(list(st[:lead]) + [st[dims[-1]] if dims else 0])
    return rows_along(tuple(shape[:lead]) + (size,), lead, merged)

def merged_layout(shape, strides):
    """(shape, strides, extra): `shape` and each operand's `strides` with size-1 dims
    dropped, dims merged where every operand agrees, and padded to `MAX_DIMS` dims.

    `extra` > 0 when more than MAX_DIMS dims stay unmerged: the layout then has
    MAX_DIMS + extra dims and the caller loops over the leading `extra` ones.

    >>> merged_layout((2, 3, 4), [(12, 4, 1), (0, 0, 1)])
    ([1, 1, 6, 4], [[0, 0, 4, 1], [0, 0, 0, 1]], 0)
    """
    keep = [i for i, n in enumerate(shape) if n != 1]
    shape = [shape[i] for i in keep]
    strides = [[st[i] for i in keep] for st in strides]
    i = len(shape) - 2
    while i >= 0:
        if all(st[i] == st[i + 1] * shape[i + 1] for st in strides):
            shape[i] *= shape[i + 1]
            for st in strides:
                st[i] = st[i + 1]
                del st[i + 1]
            del shape[i + 1]
        i -= 1
    pad = MAX_DIMS - len(shape)
    if pad > 0:
        shape = [1] * pad + shape
        strides = [[0] * pad + st for st in strides]
    return shape, strides, len(shape) - MAX_DIMS


def row_layout(shape, strides):
    """(shape, outer, kinds) of a row loop over a C-contiguous output of `shape`, for
    operands of element `strides` (one list each, the output's last), or None when one
    does not fit: after `merged_layout`, `shape` is four dims whose last is the row, each
    operand's `outer` the element strides of the three dims before it (none negative),
    and its kind 'r' when it reads the row (inner stride 1) or 'k' one value a row (0).

    >>> row_layout((8, 2, 3), [[0, 0, 1], [6, 3, 1]])
    ([1, 1, 16, 3], [(0, 0, 0)], 'r')
    >>> row_layout((4, 5), [[1, 0], [0, 1], [5, 1]])
    ([1, 1, 4, 5], [(0, 0, 1), (0, 0, 0)], 'kr')
    """
    shape, strides, extra = merged_layout(shape, strides)
    if extra:
        return None
    kinds = ""
    outer = []
    for st in strides[:-1]:
        inner = st[3]
        if inner == 1:
            kinds += "r"
        elif inner == 0:
            kinds += "k"
        else:
            return None
        if st[0] < 0 or st[1] < 0 or st[2] < 0:
            return None
        outer.append((st[0], st[1], st[2]))
    return shape, outer, kinds


def pair_row_layout(shape_a, shape_b):
    """(out_shape, shape, outer_a, outer_b, kinds): `row_layout` for two C-contiguous
    operands of `shape_a` and `shape_b` broadcast together, found from the shapes alone
    (dims where each operand is whole or broadcast alike merge), or None when the shapes
    do not broadcast or leave more than four dims.

    >>> pair_row_layout((64, 512), (512,))
    ((64, 512), (1, 1, 64, 512), (0, 0, 512), (0, 0, 0), 'rr')
    >>> pair_row_layout((2, 3, 4, 5), (1, 3, 1, 1))
    ((2, 3, 4, 5), (1, 2, 3, 20), (0, 60, 20), (0, 0, 1), 'rk')
    """
    ndim = max(len(shape_a), len(shape_b))
    out_shape = [1] * ndim
    runs = []  # [size, a whole, b whole], innermost first
    for i in range(1, ndim + 1):
        n_a = shape_a[-i] if i <= len(shape_a) else 1
        n_b = shape_b[-i] if i <= len(shape_b) else 1
        if n_a == n_b:
            n = n_a
        elif n_a == 1:
            n = n_b
        elif n_b == 1:
            n = n_a
        else:
            return None
        out_shape[ndim - i] = n
        if n == 1:
            continue
        whole_a, whole_b = n_a != 1, n_b != 1
        if runs and runs[-1][1] == whole_a and runs[-1][2] == whole_b:
            runs[-1][0] *= n
        else:
            runs.append([n, whole_a, whole_b])
    if len(runs) > MAX_DIMS:
        return None
    if not runs:
        runs.append([1, True, True])
    shape, outer_a, outer_b = [1] * MAX_DIMS, [0] * MAX_DIMS, [0] * MAX_DIMS
    step_a = step_b = 1
    for d, (n, whole_a, whole_b) in zip(range(MAX_DIMS - 1, -1, -1), runs):
        shape[d] = n
        if whole_a:
            outer_a[d] = step_a
            step_a *= n
        if whole_b:
            outer_b[d] = step_b
            step_b *= n
    kinds = ("r" if runs[0][1] else "k") + ("r" if runs[0][2] else "k")
    return tuple(out_shape), tuple(shape), tuple(outer_a[:3]), tuple(outer_b[:3]), kinds


# --- sliding windows ------------------------------------------------------------------------

def word_layout(shape, strides, words):
    """(shape, strides) of a view counted in movement words, for items of `words` words
    (WORDS[itemsize]): unchanged for one word; else strides scaled and a trailing dim of
    the item's words.

    >>> word_layout([3, 4], [4, 1], 2)
    ([3, 4, 2], [8, 2, 1])
    """
    if words == 1:
        return list(shape), list(strides)
    return list(shape) + [words], [s * words for s in strides] + [1]


def output_size(size, kernel, stride, padding, dilation, ceil_mode=False):
    """Output length of a sliding window along one dim (PyTorch's pooling_output_shape)."""
    span = dilation * (kernel - 1) + 1
    numerator = size + 2 * padding - span
    if ceil_mode:
        out = -(-numerator // stride) + 1
        # The last window must start inside the input or the left padding.
        if (out - 1) * stride >= size + padding:
            out -= 1
        return out
    return numerator // stride + 1


def adaptive_bounds(size, out):
    """PyTorch's adaptive windows along one dim: [floor(i*size/out), ceil((i+1)*size/out)).

    >>> adaptive_bounds(5, 2)
    [(0, 3), (2, 5)]
    """
    return [((i * size) // out, -(-((i + 1) * size) // out)) for i in range(out)]
