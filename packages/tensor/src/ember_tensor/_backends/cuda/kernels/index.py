"""Numba CUDA kernels for indexing and index ops: the device twins of `_backends.cpu.kernels.index`.

Every kernel is a grid-stride loop over plain device arrays (launch them with
`_cuda._launch(kernel, n, ...)`). Kernels that only move elements take unsigned-integer
views of the data (`movement` arrays), so they compile once per item size and work for
float16/bfloat16 too. Shapes and strides of views arrive as tuples of MAX_DIMS int64,
padded at the front with size 1 / stride 0: one specialization serves every rank.

Bounds checks never raise inside a kernel: a kernel that finds a bad index records the
smallest bad position with an atomic min in a 1-element `bad` array (initialised to a
sentinel), and the host reads that one value afterwards to raise PyTorch's error.

Compiled kernels are cached on disk (`cache=True`): they call nothing outside this
file, so Numba's per-file cache key cannot miss a change.

Scans (nonzero, repeat_interleave) run in three passes over `nchunks` chunks (about
sqrt(n) of them, so both serial parts stay short): each thread sums its chunk, one
thread scans the chunk sums, each thread writes its chunk.
"""
from numba import cuda

__all__ = ["MAX_DIMS", "strided_offsets", "gather_strided", "add_index_offsets", "first_out_of_range",
           "gather_3", "put_3", "put_3_add", "dim_offsets", "add_scaled", "gather_dim", "take_flat", "put_flat",
           "put_flat_add", "put_flat_max", "put_flat_min", "count_flat", "mark_flat", "scatter_lines",
           "scatter_lines_complex", "chunk_sums", "scan_chunk_sums", "write_positions", "unravel",
           "positions_to_offsets", "chunk_prefix", "fill_repeats"]

MAX_DIMS = 8

# scatter_lines modes, as `_backends.cpu.kernels.index.SCATTER_MODES` numbers them, plus mean's counts.
COPY, ADD, MULTIPLY, AMAX, AMIN = 0, 1, 2, 3, 4


@cuda.jit(cache=True)
def strided_offsets(shape, strides, base, out):
    """out[i] = base + the element offset of the i-th (row-major) element of a view."""
    for i in range(cuda.grid(1), out.shape[0], cuda.gridsize(1)):
        rem = i
        off = base
        for d in range(MAX_DIMS - 1, -1, -1):
            n = shape[d]
            off += (rem % n) * strides[d]
            rem //= n
        out[i] = off


@cuda.jit(cache=True)
def gather_strided(buf, shape, strides, base, out):
    """out[i] = buf[base + offset of element i]: a strided copy (any signed strides)."""
    for i in range(cuda.grid(1), out.shape[0], cuda.gridsize(1)):
        rem = i
        off = base
        for d in range(MAX_DIMS - 1, -1, -1):
            n = shape[d]
            off += (rem % n) * strides[d]
            rem //= n
        out[i] = buf[off]


@cuda.jit(cache=True)
def add_index_offsets(idx, size, stride, offs, position, bad):
    """offs[i] += idx[i] * stride (negative indices wrap; the index array at position 0
    writes instead of adding, so offs needs no zeroing); an index outside [-size, size)
    records position * len(offs) + i in bad[0] (the smallest wins)."""
    n = offs.shape[0]
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        k = idx[i]
        if k < -size or k >= size:
            cuda.atomic.min(bad, 0, position * n + i)
        else:
            if k < 0:
                k += size
            if position == 0:
                offs[i] = k * stride
            else:
                offs[i] += k * stride


@cuda.jit(cache=True)
def first_out_of_range(idx, lo, hi, bad):
    """bad[0] = min(bad[0], first i with idx[i] outside [lo, hi))."""
    for i in range(cuda.grid(1), idx.shape[0], cuda.gridsize(1)):
        k = idx[i]
        if k < lo or k >= hi:
            cuda.atomic.min(bad, 0, i)


@cuda.jit(cache=True)
def gather_3(buf, before, offs, after, out):
    """out[b, o, a] (flat) = buf[before[b] + offs[o] + after[a]]."""
    no = offs.shape[0]
    na = after.shape[0]
    for i in range(cuda.grid(1), out.shape[0], cuda.gridsize(1)):
        a = i % na
        t = i // na
        out[i] = buf[before[t // no] + offs[t % no] + after[a]]


@cuda.jit(cache=True)
def put_3(buf, before, offs, after, vals):
    """buf[before[b] + offs[o] + after[a]] = vals[b, o, a] (flat)."""
    no = offs.shape[0]
    na = after.shape[0]
    for i in range(cuda.grid(1), vals.shape[0], cuda.gridsize(1)):
        a = i % na
        t = i // na
        buf[before[t // no] + offs[t % no] + after[a]] = vals[i]


@cuda.jit(cache=True)
def put_3_add(buf, before, offs, after, vals):
    """buf[before[b] + offs[o] + after[a]] += vals[b, o, a], atomically (repeats add up)."""
    no = offs.shape[0]
    na = after.shape[0]
    for i in range(cuda.grid(1), vals.shape[0], cuda.gridsize(1)):
        a = i % na
        t = i // na
        cuda.atomic.add(buf, before[t // no] + offs[t % no] + after[a], vals[i])


@cuda.jit(cache=True)
def put_3_add_ordered(buf, before, offs, after, vals):
    """put_3_add without atomics, for deterministic algorithms: one thread per (b, a) adds
    vals[b, :, a] in index order. Targets of different (b, a) differ (the advanced dims are
    not b's or a's), so the threads never meet, and each sum runs in the CPU's order."""
    no = offs.shape[0]
    na = after.shape[0]
    for t in range(cuda.grid(1), before.shape[0] * na, cuda.gridsize(1)):
        a = t % na
        b = t // na
        for o in range(no):
            buf[before[b] + offs[o] + after[a]] += vals[(b * no + o) * na + a]


@cuda.jit(cache=True)
def dim_offsets(shape, strides, dim_stride, idx, offs):
    """offs[i] = offset of element i of a view of `shape` (its `strides` 0 at the indexed
    dim) + idx[i] * dim_stride: where gather reads / scatter writes element i."""
    for i in range(cuda.grid(1), offs.shape[0], cuda.gridsize(1)):
        rem = i
        off = idx[i] * dim_stride
        for d in range(MAX_DIMS - 1, -1, -1):
            n = shape[d]
            off += (rem % n) * strides[d]
            rem //= n
        offs[i] = off


@cuda.jit(cache=True)
def add_scaled(offs, idx, stride):
    """offs[i] += idx[i] * stride."""
    for i in range(cuda.grid(1), offs.shape[0], cuda.gridsize(1)):
        offs[i] += idx[i] * stride


@cuda.jit(cache=True)
def gather_dim(buf, shape, strides, dim_stride, idx, out):
    """out[i] = buf[offset of element i (strides 0 at dim) + idx[i] * dim_stride]."""
    for i in range(cuda.grid(1), out.shape[0], cuda.gridsize(1)):
        rem = i
        off = idx[i] * dim_stride
        for d in range(MAX_DIMS - 1, -1, -1):
            n = shape[d]
            off += (rem % n) * strides[d]
            rem //= n
        out[i] = buf[off]


@cuda.jit(cache=True)
def take_flat(buf, offs, out):
    """out[i] = buf[offs[i]]."""
    for i in range(cuda.grid(1), out.shape[0], cuda.gridsize(1)):
        out[i] = buf[offs[i]]


@cuda.jit(cache=True)
def put_flat(buf, offs, vals):
    """buf[offs[i]] = vals[i] (with repeated offsets some write wins, as on PyTorch's GPU)."""
    for i in range(cuda.grid(1), vals.shape[0], cuda.gridsize(1)):
        buf[offs[i]] = vals[i]


@cuda.jit(cache=True)
def put_flat_add(buf, offs, vals):
    """buf[offs[i]] += vals[i], atomically."""
    for i in range(cuda.grid(1), vals.shape[0], cuda.gridsize(1)):
        cuda.atomic.add(buf, offs[i], vals[i])


@cuda.jit(cache=True)
def put_flat_max(buf, offs, vals):
    """buf[offs[i]] = max(buf[offs[i]], vals[i]), atomically (integers: exact in any order)."""
    for i in range(cuda.grid(1), vals.shape[0], cuda.gridsize(1)):
        cuda.atomic.max(buf, offs[i], vals[i])


@cuda.jit(cache=True)
def put_flat_min(buf, offs, vals):
    """buf[offs[i]] = min(buf[offs[i]], vals[i]), atomically (integers: exact in any order)."""
    for i in range(cuda.grid(1), vals.shape[0], cuda.gridsize(1)):
        cuda.atomic.min(buf, offs[i], vals[i])


@cuda.jit(cache=True)
def count_flat(offs, counts):
    """counts[offs[i]] += 1, atomically."""
    for i in range(cuda.grid(1), offs.shape[0], cuda.gridsize(1)):
        cuda.atomic.add(counts, offs[i], 1)


@cuda.jit(cache=True)
def mark_flat(offs, marks):
    """marks[offs[i]] = 1 (every writer writes the same value: no race to lose)."""
    for i in range(cuda.grid(1), offs.shape[0], cuda.gridsize(1)):
        marks[offs[i]] = 1


@cuda.jit(cache=True)
def scatter_lines(dst, offs, vals, line_len, inner, mode, counts):
    """Scatter-reduce along lines: one thread per line of the index along its dim.

    Element p = (o * line_len + j) * inner + k of the index (and of offs, vals) lands on
    dst[offs[p]]. Repeated targets can only come from the same line (the other coords
    are the target's own), so walking each line in order applies the values in the
    CPU's order: the results are the CPU's bit for bit, with no atomics (and so for
    every mode and dtype). NaN wins amax/amin. `counts` (empty, or dst's size) counts
    the values each element received (for mean).
    """
    lines = offs.shape[0] // line_len
    count = counts.shape[0] > 0
    for line in range(cuda.grid(1), lines, cuda.gridsize(1)):
        start = (line // inner) * line_len * inner + line % inner
        for j in range(line_len):
            p = start + j * inner
            pos = offs[p]
            v = vals[p]
            if mode == COPY:
                dst[pos] = v
            elif mode == ADD:
                dst[pos] += v
            elif mode == MULTIPLY:
                dst[pos] *= v
            elif v != v or (mode == AMAX and v > dst[pos]) or (mode == AMIN and v < dst[pos]):
                dst[pos] = v
            if count:
                counts[pos] += 1


@cuda.jit(cache=True)
def scatter_lines_complex(dst, offs, vals, line_len, inner, mode, counts):
    """`scatter_lines` for complex numbers, which have no order: ADD or MULTIPLY (any
    other mode copies), one thread per line of the index walking it in order."""
    lines = offs.shape[0] // line_len
    count = counts.shape[0] > 0
    for line in range(cuda.grid(1), lines, cuda.gridsize(1)):
        start = (line // inner) * line_len * inner + line % inner
        for j in range(line_len):
            p = start + j * inner
            pos = offs[p]
            if mode == ADD:
                dst[pos] += vals[p]
            elif mode == MULTIPLY:
                dst[pos] *= vals[p]
            else:
                dst[pos] = vals[p]
            if count:
                counts[pos] += 1


@cuda.jit(cache=True)
def chunk_sums(values, chunk, sums):
    """sums[c] = values[c * chunk] + ... (the chunk's sum; values are counts or 0/1 flags)."""
    n = values.shape[0]
    for c in range(cuda.grid(1), sums.shape[0], cuda.gridsize(1)):
        acc = 0
        for i in range(c * chunk, min(n, (c + 1) * chunk)):
            acc += values[i]
        sums[c] = acc


@cuda.jit(cache=True)
def scan_chunk_sums(sums, starts, total):
    """One thread: starts = exclusive prefix sums of `sums`, total[0] = their sum."""
    if cuda.grid(1) == 0:
        acc = 0
        for c in range(sums.shape[0]):
            starts[c] = acc
            acc += sums[c]
        total[0] = acc


@cuda.jit(cache=True)
def write_positions(flags, chunk, starts, out):
    """out[k] = the position of the k-th nonzero flag (row-major order)."""
    n = flags.shape[0]
    for c in range(cuda.grid(1), starts.shape[0], cuda.gridsize(1)):
        k = starts[c]
        for i in range(c * chunk, min(n, (c + 1) * chunk)):
            if flags[i]:
                out[k] = i
                k += 1


@cuda.jit(cache=True)
def unravel(positions, shape, ndim, out):
    """out[j * ndim + d] = coordinate d of flat position positions[j] in `shape`
    (padded at the front: its last `ndim` entries are the real dims)."""
    for j in range(cuda.grid(1), positions.shape[0], cuda.gridsize(1)):
        rem = positions[j]
        for d in range(MAX_DIMS - 1, MAX_DIMS - 1 - ndim, -1):
            n = shape[d]
            out[j * ndim + d - (MAX_DIMS - ndim)] = rem % n
            rem //= n


@cuda.jit(cache=True)
def positions_to_offsets(positions, shape, strides, out):
    """out[j] = element offset (in a view of `shape`, `strides`) of flat position positions[j]."""
    for j in range(cuda.grid(1), positions.shape[0], cuda.gridsize(1)):
        rem = positions[j]
        off = 0
        for d in range(MAX_DIMS - 1, -1, -1):
            n = shape[d]
            off += (rem % n) * strides[d]
            rem //= n
        out[j] = off


@cuda.jit(cache=True)
def chunk_prefix(values, chunk, starts, prefix):
    """prefix[i] = values[0] + ... + values[i - 1], chunk by chunk from `starts`."""
    n = values.shape[0]
    for c in range(cuda.grid(1), starts.shape[0], cuda.gridsize(1)):
        acc = starts[c]
        for i in range(c * chunk, min(n, (c + 1) * chunk)):
            prefix[i] = acc
            acc += values[i]


@cuda.jit(cache=True)
def fill_repeats(prefix, out):
    """out[j] = the last i with prefix[i] <= j, i.e. i repeated counts[i] times
    (repeat_interleave's index): a binary search per output element, so one large
    count does not leave a single thread writing all of its copies."""
    last = prefix.shape[0] - 1
    for j in range(cuda.grid(1), out.shape[0], cuda.gridsize(1)):
        lo = 0
        hi = last
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if prefix[mid] <= j:
                lo = mid
            else:
                hi = mid - 1
        out[j] = lo
