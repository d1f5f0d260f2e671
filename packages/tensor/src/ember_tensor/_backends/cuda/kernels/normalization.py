"""Numba CUDA kernels of batch norm, layer norm and group norm, forward and backward.

Launched by `ember_tensor._backends.cuda.normalization` on flat C-contiguous float32/float64 arrays
(see `_backends.cuda.kernels.rows` for the launch shapes, the float64 block merges and why their
scratch is dynamic shared memory). Statistics accumulate in float64, as the CPU kernels do.
"""
from numba import cuda, float64

from .rows import block_sum, exact_product, inverse_sqrt

__all__ = ["channel_stats", "channel_coefficients", "running_update", "channel_affine",
           "channel_grad_sums", "batch_norm_input_grad", "norm_rows", "norm_rows_backward",
           "column_grad_partials", "column_sums"]


# --- batch norm: per-channel statistics of (N, C, inner) ---------------------------------

@cuda.jit(cache=True)
def channel_stats(x, batch, channels, inner, mean, var):
    """Per-channel mean and biased variance (two passes in float64), one block per channel."""
    part = cuda.shared.array(0, float64)  # dynamic: blockDim.x float64s (see cuda/rows.py)
    tid = cuda.threadIdx.x
    count = batch * inner
    for c in range(cuda.blockIdx.x, channels, cuda.gridDim.x):
        total = 0.0
        for j in range(tid, count, cuda.blockDim.x):
            n = j // inner
            total += x[(n * channels + c) * inner + (j - n * inner)]
        mu = block_sum(part, total) / count
        total = 0.0
        for j in range(tid, count, cuda.blockDim.x):
            n = j // inner
            d = x[(n * channels + c) * inner + (j - n * inner)] - mu
            total += d * d
        sq = block_sum(part, total)
        if tid == 0:
            mean[c] = mu
            var[c] = sq / count


@cuda.jit(cache=True)
def channel_coefficients(mean, var, weight, bias, has_weight, has_bias, eps, invstd, scale, shift):
    """invstd = 1/sqrt(var + eps); y = x * scale + shift folds the affine transform in."""
    for c in range(cuda.grid(1), mean.size, cuda.gridsize(1)):
        r = inverse_sqrt(var[c] + eps)
        a = r * weight[c] if has_weight else r
        invstd[c] = r
        scale[c] = a
        shift[c] = (bias[c] if has_bias else 0.0) - mean[c] * a


@cuda.jit(cache=True)
def running_update(buffer, batch_value, momentum, factor):
    """buffer = (1 - momentum) * buffer + momentum * batch_value * factor, in place."""
    for c in range(cuda.grid(1), buffer.size, cuda.gridsize(1)):
        buffer[c] = (1.0 - momentum) * buffer[c] + momentum * (batch_value[c] * factor)


@cuda.jit(cache=True)
def channel_affine(x, channels, inner, scale, shift, y):
    """y = x * scale[c] + shift[c] over (N, C, inner)."""
    for i in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        c = (i // inner) % channels
        y[i] = x[i] * scale[c] + shift[c]


@cuda.jit(cache=True)
def channel_grad_sums(g, x, batch, channels, inner, mean, rstd, stat_batch_stride, group_size,
                      sum_g, sum_gxhat):
    """Per channel c of (N, C, inner): sum of g and of g * xhat over (n, s), one block per
    channel; xhat = (x - mean[i]) * rstd[i] with i = n * stat_batch_stride + c // group_size
    (batch norm: 0 and 1; group norm: groups and channels per group)."""
    part = cuda.shared.array(0, float64)  # dynamic: blockDim.x float64s (see cuda/rows.py)
    tid = cuda.threadIdx.x
    count = batch * inner
    for c in range(cuda.blockIdx.x, channels, cuda.gridDim.x):
        total_g = 0.0
        total_gx = 0.0
        for j in range(tid, count, cuda.blockDim.x):
            n = j // inner
            at = (n * channels + c) * inner + (j - n * inner)
            k = n * stat_batch_stride + c // group_size
            gv = g[at]
            total_g += gv
            total_gx += gv * ((x[at] - mean[k]) * rstd[k])
        total_g = block_sum(part, total_g)
        total_gx = block_sum(part, total_gx)
        if tid == 0:
            sum_g[c] = total_g
            sum_gxhat[c] = total_gx


@cuda.jit(cache=True)
def batch_norm_input_grad(g, x, channels, inner, mean, invstd, weight, has_weight, sum_g, sum_gxhat,
                          count, training, gi):
    """Batch norm's input gradient from the per-channel sums (eval: g * w * invstd)."""
    for i in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        c = (i // inner) % channels
        r = invstd[c]
        a = weight[c] * r if has_weight else r
        if training:
            xhat = (x[i] - mean[c]) * r
            gi[i] = a * (g[i] - sum_g[c] / count - xhat * (sum_gxhat[c] / count))
        else:
            gi[i] = g[i] * a


# --- layer and group norm: statistics over contiguous rows ---------------------------------
# Row r holds `size` elements; element k of row r has affine channel
#   (r % groups) * (size // inner) + k // inner
# (layer norm: groups = inner = 1, the channel is k; group norm: a row is one group of
# one sample, inner the spatial size).

@cuda.jit(cache=True)
def norm_rows(x, n_rows, size, groups, inner, eps, weight, bias, has_weight, has_bias, y, mean, rstd):
    """Normalise each row (two-pass float64 statistics) and apply the affine transform."""
    part = cuda.shared.array(0, float64)  # dynamic: blockDim.x float64s (see cuda/rows.py)
    tid = cuda.threadIdx.x
    step = cuda.blockDim.x
    per_group = size // inner
    for row in range(cuda.blockIdx.x, n_rows, cuda.gridDim.x):
        base = row * size
        total = 0.0
        for k in range(tid, size, step):
            total += x[base + k]
        mu = block_sum(part, total) / size
        total = 0.0
        for k in range(tid, size, step):
            d = x[base + k] - mu
            total += exact_product(d, d)
        r = inverse_sqrt(block_sum(part, total) / size + eps)
        first = (row % groups) * per_group
        for k in range(tid, size, step):
            # Products NVVM cannot contract: a fused layer norm prologue (fused_layer_norm.py)
            # rounds them the same way.
            v = exact_product(x[base + k] - mu, r)
            c = first + k // inner
            if has_weight:
                v = exact_product(v, weight[c])
            if has_bias:
                v = v + bias[c]
            y[base + k] = v
        if tid == 0:
            mean[row] = mu
            rstd[row] = r


@cuda.jit(cache=True)
def norm_rows_backward(g, x, n_rows, size, groups, inner, mean, rstd, weight, has_weight, gi):
    """gi = rstd * (gxhat - mean(gxhat) - xhat * mean(gxhat * xhat)) per row, gxhat = g * w."""
    part = cuda.shared.array(0, float64)  # dynamic: blockDim.x float64s (see cuda/rows.py)
    tid = cuda.threadIdx.x
    step = cuda.blockDim.x
    per_group = size // inner
    for row in range(cuda.blockIdx.x, n_rows, cuda.gridDim.x):
        base = row * size
        mu = mean[row]
        r = rstd[row]
        first = (row % groups) * per_group
        total = 0.0
        total_x = 0.0
        for k in range(tid, size, step):
            gv = g[base + k]
            if has_weight:
                gv = gv * weight[first + k // inner]
            total += gv
            total_x += gv * ((x[base + k] - mu) * r)
        mean_g = block_sum(part, total) / size
        mean_gx = block_sum(part, total_x) / size
        for k in range(tid, size, step):
            gv = g[base + k]
            if has_weight:
                gv = gv * weight[first + k // inner]
            gi[base + k] = r * (gv - mean_g - (x[base + k] - mu) * r * mean_gx)


# --- layer norm's weight and bias gradients: sums down the columns of (rows, size) ---------
# A block per column (channel_grad_sums) would read addresses `size` apart in each warp;
# here neighbouring threads take neighbouring columns of one chunk of rows (coalesced),
# and a second pass adds up the chunks.

@cuda.jit(cache=True)
def column_grad_partials(g, x, n_rows, size, mean, rstd, chunk, partial_g, partial_gxhat):
    """partial[q, k]: sums of g and g * xhat over rows [q * chunk, (q + 1) * chunk), column k."""
    for i in range(cuda.grid(1), partial_g.size, cuda.gridsize(1)):
        q = i // size
        k = i - q * size
        total_g = 0.0
        total_gx = 0.0
        for row in range(q * chunk, min((q + 1) * chunk, n_rows)):
            gv = g[row * size + k]
            total_g += gv
            total_gx += gv * ((x[row * size + k] - mean[row]) * rstd[row])
        partial_g[i] = total_g
        partial_gxhat[i] = total_gx


@cuda.jit(cache=True)
def column_sums(partial_g, partial_gxhat, n_chunks, size, sum_g, sum_gxhat):
    """Add up the chunks' partial sums of each column."""
    for k in range(cuda.grid(1), size, cuda.gridsize(1)):
        total_g = 0.0
        total_gx = 0.0
        for q in range(n_chunks):
            total_g += partial_g[q * size + k]
            total_gx += partial_gxhat[q * size + k]
        sum_g[k] = total_g
        sum_gxhat[k] = total_gx
