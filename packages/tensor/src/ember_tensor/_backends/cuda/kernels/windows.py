"""Numba CUDA kernels of the sliding-window nn ops: im2col / col2im (convolution,
unfold / fold), max and average pooling with their backward passes, adaptive max
pooling, the plane scatter / gather of max pooling's indices, and the index bounds count.

Every window kernel sees 3 spatial dims: the launch wrappers (`_backends.cuda.windows`) view
1-d and 2-d problems as 3-d ones with leading size-1 dims, so one compiled kernel per
dtype serves them all. The window kernels are two-level grid-stride loops: blocks along
x over rows ((n, c) planes; (n, c, kernel offset) for im2col), the threads of the blocks
along y over the row's elements (a few long rows are split over several blocks), so the
costly integer divisions that locate an element are two per element rather than six. One thread computes each *output* element, so no two threads
write the same place: col2im and avg_pool's backward are
gathers (each input element sums the windows that cover it, in a fixed order: the
result is deterministic) rather than scatters with atomics. Only max pooling's backward
scatters (its indices are data), with atomic adds.

Typed scalars come in as arguments (`zero`, `low`): the accumulator takes their type,
so float32 sums stay float32 as on the CPU. Padding is bounds checks, never a padded
copy. Nothing here calls a function of another file, so Numba's on-disk cache (keyed
on this file) can never serve a stale kernel.
"""
from numba import cuda

__all__ = ["im2col", "col2im", "max_pool", "avg_pool", "avg_pool_backward", "adaptive_max_pool",
           "scatter_add_planes", "gather_planes", "put_planes", "count_outside"]


@cuda.jit(cache=True)
def im2col(x, kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw, od, oh, ow, cols):
    """cols[b, c*K + k, l] = x[b, c, window l at kernel offset k] (0 in the padding).

    x: (N, C, D, H, W); cols: (N, C*K, L) of any strides, K = kd*kh*kw, L = od*oh*ow.
    Blocks stride over the N*C*K rows, threads (and blocks along y) over a row's L positions.
    """
    channels, depth, height, width = x.shape[1], x.shape[2], x.shape[3], x.shape[4]
    k_size = kd * kh * kw
    length = od * oh * ow
    lane = cuda.blockIdx.y * cuda.blockDim.x + cuda.threadIdx.x  # blocks along y split long rows
    lanes = cuda.gridDim.y * cuda.blockDim.x
    for row in range(cuda.blockIdx.x, x.shape[0] * channels * k_size, cuda.gridDim.x):
        k = row % k_size
        c = (row // k_size) % channels
        b = row // (k_size * channels)
        z_shift = (k // (kw * kh)) * dd - pd
        y_shift = ((k // kw) % kh) * dh - ph
        x_shift = (k % kw) * dw - pw
        for l in range(lane, length, lanes):
            q = l // ow  # the output position varies fastest: writes are coalesced
            z = (q // oh) * sd + z_shift
            y = (q % oh) * sh + y_shift
            xx = (l % ow) * sw + x_shift
            if 0 <= z < depth and 0 <= y < height and 0 <= xx < width:
                cols[b, c * k_size + k, l] = x[b, c, z, y, xx]
            else:
                cols[b, c * k_size + k, l] = 0


@cuda.jit(cache=True)
def col2im(cols, kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw, od, oh, ow, zero, out):
    """The adjoint of `im2col`: out[b, c, z, y, x] = sum of the columns that read it.

    A gather: each output element walks the kernel offsets whose window covers it.
    Blocks stride over the N*C planes, threads (and blocks along y) over a plane's elements.
    """
    channels, depth, height, width = out.shape[1], out.shape[2], out.shape[3], out.shape[4]
    k_size = kd * kh * kw
    plane = depth * height * width
    lane = cuda.blockIdx.y * cuda.blockDim.x + cuda.threadIdx.x  # blocks along y split long rows
    lanes = cuda.gridDim.y * cuda.blockDim.x
    for row in range(cuda.blockIdx.x, out.shape[0] * channels, cuda.gridDim.x):
        c = row % channels
        b = row // channels
        for p in range(lane, plane, lanes):
            xx = p % width
            q = p // width
            y = q % height
            z = q // height
            acc = zero
            for kz in range(kd):
                tz = z + pd - kz * dd
                if tz < 0 or tz % sd != 0 or tz // sd >= od:
                    continue
                for ky in range(kh):
                    ty = y + ph - ky * dh
                    if ty < 0 or ty % sh != 0 or ty // sh >= oh:
                        continue
                    for kx in range(kw):
                        tx = xx + pw - kx * dw
                        if tx < 0 or tx % sw != 0 or tx // sw >= ow:
                            continue
                        k = (kz * kh + ky) * kw + kx
                        l = ((tz // sd) * oh + ty // sh) * ow + tx // sw
                        acc += cols[b, c * k_size + k, l]
            out[b, c, z, y, xx] = acc


@cuda.jit(cache=True)
def max_pool(x, kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw, low, values, indices):
    """Window maxima of x (N, C, D, H, W) and their flat positions in the (n, c) plane.

    PyTorch's rule, as the CPU kernel: a larger value or any NaN replaces the best so
    far (the first maximum wins ties, the last NaN wins);
    a window that lies wholly in the padding gives `low` and index -1. Blocks stride
    over the N*C planes, threads (and blocks along y) over a plane's outputs.
    """
    channels, depth, height, width = x.shape[1], x.shape[2], x.shape[3], x.shape[4]
    od, oh, ow = values.shape[2], values.shape[3], values.shape[4]
    lane = cuda.blockIdx.y * cuda.blockDim.x + cuda.threadIdx.x  # blocks along y split long rows
    lanes = cuda.gridDim.y * cuda.blockDim.x
    for row in range(cuda.blockIdx.x, x.shape[0] * channels, cuda.gridDim.x):
        c = row % channels
        b = row // channels
        for p in range(lane, od * oh * ow, lanes):
            ox = p % ow
            q = p // ow
            oy = q % oh
            oz = q // oh
            best = low
            where = -1
            for kz in range(kd):
                z = oz * sd - pd + kz * dd
                if z < 0 or z >= depth:
                    continue
                for ky in range(kh):
                    y = oy * sh - ph + ky * dh
                    if y < 0 or y >= height:
                        continue
                    for kx in range(kw):
                        xx = ox * sw - pw + kx * dw
                        if xx < 0 or xx >= width:
                            continue
                        v = x[b, c, z, y, xx]
                        if where < 0 or v > best or v != v:
                            best = v
                            where = (z * height + y) * width + xx
            values[b, c, oz, oy, ox] = best
            indices[b, c, oz, oy, ox] = where


@cuda.jit(cache=True)
def avg_pool(x, kd, kh, kw, sd, sh, sw, pd, ph, pw, count_include_pad, divisor, zero, out):
    """Window means of x (N, C, D, H, W); `divisor` > 0 overrides PyTorch's count.

    The count is PyTorch's: the window clipped to the padded input when
    count_include_pad, else to the input itself (ceil_mode's overhang never counts).
    Blocks stride over the N*C planes, threads (and blocks along y) over a plane's outputs.
    """
    channels, depth, height, width = x.shape[1], x.shape[2], x.shape[3], x.shape[4]
    od, oh, ow = out.shape[2], out.shape[3], out.shape[4]
    lane = cuda.blockIdx.y * cuda.blockDim.x + cuda.threadIdx.x  # blocks along y split long rows
    lanes = cuda.gridDim.y * cuda.blockDim.x
    for row in range(cuda.blockIdx.x, x.shape[0] * channels, cuda.gridDim.x):
        c = row % channels
        b = row // channels
        for p in range(lane, od * oh * ow, lanes):
            ox = p % ow
            q = p // ow
            oy = q % oh
            oz = q // oh
            z0, y0, x0 = oz * sd - pd, oy * sh - ph, ox * sw - pw
            z1, y1, x1 = min(z0 + kd, depth + pd), min(y0 + kh, height + ph), min(x0 + kw, width + pw)
            padded_count = (z1 - z0) * (y1 - y0) * (x1 - x0)
            z0, y0, x0 = max(z0, 0), max(y0, 0), max(x0, 0)
            z1, y1, x1 = min(z1, depth), min(y1, height), min(x1, width)
            acc = zero
            for z in range(z0, z1):
                for y in range(y0, y1):
                    for xx in range(x0, x1):
                        acc += x[b, c, z, y, xx]
            if divisor > 0:
                count = divisor
            elif count_include_pad:
                count = padded_count
            else:
                count = (z1 - z0) * (y1 - y0) * (x1 - x0)
            out[b, c, oz, oy, ox] = acc / count


@cuda.jit(device=True, cache=True)
def _first_window(pos, kernel, stride):
    """The first window o with o*stride + kernel > pos (pos: a padded coordinate)."""
    lowest = pos - kernel + 1
    return 0 if lowest <= 0 else (lowest + stride - 1) // stride


@cuda.jit(cache=True)
def avg_pool_backward(g, kd, kh, kw, sd, sh, sw, pd, ph, pw, count_include_pad, divisor, zero, out):
    """The adjoint of `avg_pool`: out[b, c, z, y, x] = sum over the windows covering
    it of g[window] / count(window) (a gather, deterministic). Blocks stride over the
    N*C planes, threads (and blocks along y) over a plane's elements."""
    channels, depth, height, width = out.shape[1], out.shape[2], out.shape[3], out.shape[4]
    od, oh, ow = g.shape[2], g.shape[3], g.shape[4]
    lane = cuda.blockIdx.y * cuda.blockDim.x + cuda.threadIdx.x  # blocks along y split long rows
    lanes = cuda.gridDim.y * cuda.blockDim.x
    for row in range(cuda.blockIdx.x, out.shape[0] * channels, cuda.gridDim.x):
        c = row % channels
        b = row // channels
        for p in range(lane, depth * height * width, lanes):
            xx = p % width
            q = p // width
            y = q % height
            z = q // height
            acc = zero
            # Windows o with o*s - p <= pos < o*s - p + k (operands of // kept non-negative).
            for oz in range(_first_window(z + pd, kd, sd), min(od, (z + pd) // sd + 1)):
                for oy in range(_first_window(y + ph, kh, sh), min(oh, (y + ph) // sh + 1)):
                    for ox in range(_first_window(xx + pw, kw, sw), min(ow, (xx + pw) // sw + 1)):
                        if divisor > 0:
                            count = divisor
                        else:
                            z0, y0, x0 = oz * sd - pd, oy * sh - ph, ox * sw - pw
                            z1 = min(z0 + kd, depth + pd)
                            y1 = min(y0 + kh, height + ph)
                            x1 = min(x0 + kw, width + pw)
                            if count_include_pad:
                                count = (z1 - z0) * (y1 - y0) * (x1 - x0)
                            else:
                                count = ((min(z1, depth) - max(z0, 0)) * (min(y1, height) - max(y0, 0))
                                         * (min(x1, width) - max(x0, 0)))
                        acc += g[b, c, oz, oy, ox] / count
            out[b, c, z, y, xx] = acc


@cuda.jit(cache=True)
def adaptive_max_pool(x, values, indices):
    """Adaptive max pooling of x (N, C, D, H, W): output o of a dim of size s to n
    outputs covers [floor(o*s/n), ceil((o+1)*s/n)); first maximum / last NaN wins.
    Blocks stride over the N*C planes, threads (and blocks along y) over a plane's outputs."""
    channels, depth, height, width = x.shape[1], x.shape[2], x.shape[3], x.shape[4]
    od, oh, ow = values.shape[2], values.shape[3], values.shape[4]
    lane = cuda.blockIdx.y * cuda.blockDim.x + cuda.threadIdx.x  # blocks along y split long rows
    lanes = cuda.gridDim.y * cuda.blockDim.x
    for row in range(cuda.blockIdx.x, x.shape[0] * channels, cuda.gridDim.x):
        c = row % channels
        b = row // channels
        for p in range(lane, od * oh * ow, lanes):
            ox = p % ow
            q = p // ow
            oy = q % oh
            oz = q // oh
            z0, z1 = (oz * depth) // od, ((oz + 1) * depth + od - 1) // od
            y0, y1 = (oy * height) // oh, ((oy + 1) * height + oh - 1) // oh
            x0, x1 = (ox * width) // ow, ((ox + 1) * width + ow - 1) // ow
            best = x[b, c, z0, y0, x0]
            where = (z0 * height + y0) * width + x0
            for z in range(z0, z1):
                for y in range(y0, y1):
                    for xx in range(x0, x1):
                        v = x[b, c, z, y, xx]
                        if v > best or v != v:
                            best = v
                            where = (z * height + y) * width + xx
            values[b, c, oz, oy, ox] = best
            indices[b, c, oz, oy, ox] = where


@cuda.jit(cache=True)
def scatter_add_planes(g, index, plane, out):
    """out[r*plane + index[r, m]] += g[r, m] (atomic: indices may repeat); indices
    outside [0, plane) are skipped. g, index: (R, M); out: flat (R*plane,), zeroed."""
    rows, m_size = index.shape[0], index.shape[1]
    start, step = cuda.grid(1), cuda.gridsize(1)
    for i in range(start, rows * m_size, step):
        r = i // m_size
        m = i % m_size
        j = index[r, m]
        if 0 <= j < plane:
            cuda.atomic.add(out, r * plane + j, g[r, m])


@cuda.jit(cache=True)
def gather_planes(x, index, zero, out):
    """out[r, m] = x[r, index[r, m]] for x (R, P); an index outside [0, P) reads `zero`."""
    rows, m_size = index.shape[0], index.shape[1]
    plane = x.shape[1]
    start, step = cuda.grid(1), cuda.gridsize(1)
    for i in range(start, rows * m_size, step):
        r = i // m_size
        m = i % m_size
        j = index[r, m]
        out[r, m] = x[r, j] if 0 <= j < plane else zero


@cuda.jit(cache=True)
def put_planes(x, index, out):
    """out[r, index[r, m]] = x[r, m] for out (R, P); indices outside [0, P) are skipped."""
    rows, m_size = index.shape[0], index.shape[1]
    plane = out.shape[1]
    start, step = cuda.grid(1), cuda.gridsize(1)
    for i in range(start, rows * m_size, step):
        r = i // m_size
        m = i % m_size
        j = index[r, m]
        if 0 <= j < plane:
            out[r, j] = x[r, m]


@cuda.jit(cache=True)
def count_outside(index, low, high, outside):
    """outside[0] += how many of the flat index[i] lie outside [low, high) (atomic adds
    only for those: the common all-valid case makes no atomic traffic)."""
    start, step = cuda.grid(1), cuda.gridsize(1)
    for i in range(start, index.shape[0], step):
        j = index[i]
        if j < low or j >= high:
            cuda.atomic.add(outside, 0, 1)
