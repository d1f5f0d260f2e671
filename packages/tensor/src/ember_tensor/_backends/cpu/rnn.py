"""CPU recurrent layers (LSTM, GRU, Elman RNN): one layer and direction over a whole
sequence, forward and backward.

Arrays in, arrays out, all of one float dtype (float32 or float64; half types arrive
as float32): `x` (T, N, I), weights as PyTorch stores them (W_ih (G*H, I), W_hh (G*H, H),
biases (G*H,) or None), initial states (N, H). The forward makes the input projections
of all T steps in one GEMM, then per step one recurrent GEMM (into a reused buffer)
and one fused gate kernel (`kernels.rnn`) writing straight into the output. The
backward walks the steps once in reverse with the fused gate-backward kernel and one
GEMM for the recurrent gradient, then computes dW_hh, dW_ih, the biases' and the
input's gradients each in one GEMM (GEMV for the biases) over all steps at once; with
several threads those run whole on threads at once (`_products`), or each split by rows
(`gemm.py`) when they cannot be shared out evenly.

The time loops split by the batch: a batch row's states depend on that row alone, so
with a thread budget above 1 each thread runs the whole loop, every step, on its own
block of rows (`_row_blocks`): one hand-over a layer call, where splitting each step's
GEMM would pay one a step (32 rows a step are far below `gemm.SPLIT_WORK`). The loops
themselves run in Numba (`kernels.rnn.*_loop`), each step's GEMM a direct call of NumPy's
OpenBLAS (`threads.blas_gemm_address`), so a thread takes the GIL once a call, not twice
a step: two Python loops on two threads waited on each other's GIL (measured, one half
1.8 ms, the other 7.7). Without OpenBLAS they run in Python (same bits).

Layouts: the forward's recurrent GEMM reads W_hh^T made contiguous once a call: OpenBLAS
then reads B row-major and does not gather a transposed one every step (h (32, 128) @
W_hh^T (128, 512) float32, measured 42 against 65 us a step); the backward's
``d_gates @ W_hh`` reads W_hh as stored, the fastest of the layouts tried (44 us).
"""
import numpy as np

from ..lazy import lazy
from . import threads
from .gemm import SPLIT_WORK as _GEMM_SPLIT_WORK
from .gemm import gemm, row_block

__all__ = ["lstm_forward", "lstm_backward", "gru_forward", "gru_backward", "rnn_forward", "rnn_backward"]

K = lazy("cpu.kernels.rnn")  # Numba loads on first use

# Multiply-adds of a layer call's recurrent GEMMs (T * N * G*H * H) from which its time
# loop splits over ember's threads. The split costs one hand-over a call (~10-20 us) and
# makes each thread's per-step GEMM pack all of W_hh again (16 rows of an (N, 128) @
# (128, 512) product take 28 us against 42 for 32); 4M multiply-adds are ~50 us at one
# thread.
SPLIT_WORK = 1 << 22
# Fewest batch rows a thread gets: below 16 the per-step GEMM is a sliver OpenBLAS runs
# far below its peak (and by other kernels, with other bits).
_MIN_BLOCK = 16
# OpenBLAS (0.3.31, SkylakeX kernels) computes products of at most 1e6 multiply-adds
# with its small-matrix kernels, larger ones with its packed kernels, which sum a long
# inner dimension in chunks; a row of the one is then not bit for bit that row of the
# other (seen: float64, 16 rows of (N, 448) @ (448, 112) and of (N, 432) @ (432, 144)).
# With an inner dimension of at most 384 they agreed on every shape tried (float32 and
# float64, hidden sizes 16-384, batches 32-256).
_BLAS_SMALL_WORK = 1_000_000
_ONE_CHUNK_INNER = 384
# The backward's sums over all steps (dX, dW_ih, dW_hh, biases) run as whole products on
# threads at once from this many multiply-adds in all (as `gemm` splits one product), if
# no thread gets more than `_MOST_UNEVEN` of the work (else each product splits in turn).
SPLIT_PRODUCTS = 1 << 23
_MOST_UNEVEN = 0.6


def _c(a):
    return None if a is None else np.ascontiguousarray(a)


def _steps(length, reverse):
    """The time indices in the order the layer visits them."""
    return range(length - 1, -1, -1) if reverse else range(length)


def _row_blocks(length, batch, hidden, gates):
    """The blocks of batch rows, (lo, hi), whose time loops run on threads at once: one
    block (the whole batch) unless the budget allows more threads, the recurrent work is
    worth it (`SPLIT_WORK`) and the split keeps the bits of a one-thread run.

    Bits: the gate kernels work row by row, and a block of the per-step GEMMs (N_b, H) @
    (H, G*H) and (N_b, G*H) @ (G*H, H) was bit for bit that block of the whole product
    when it starts on a multiple of 8, has at least 16 rows, H is a multiple of 16 (widths
    136 and 200, multiples of 8 only, differed) and either the block and the whole batch
    take the same OpenBLAS kernels or G*H is at most 384 (`_BLAS_SMALL_WORK`,
    `_ONE_CHUNK_INNER`). Measured on tables of shapes, not derived from OpenBLAS's source:
    tests/test_rnn_threads.py checks the layers' bits on such a table."""
    step_work = gates * hidden * hidden   # multiply-adds a batch row, a step
    parts = 1
    if hidden % 16 == 0 and threads.parallel(length * batch * step_work, SPLIT_WORK):
        parts = min(threads.part_count(), batch // _MIN_BLOCK)
    packed = batch * step_work > _BLAS_SMALL_WORK   # the whole batch's per-step GEMMs take the packed kernels
    while parts > 1:
        blocks = [row_block(batch, parts, i) for i in range(parts)]
        if gates * hidden <= _ONE_CHUNK_INNER or \
                all(((hi - lo) * step_work > _BLAS_SMALL_WORK) == packed for lo, hi in blocks):
            return blocks
        parts -= 1
    return [(0, batch)]


def _over_rows(python_loop, blas_loop, blocks, dtype, step_work):
    """A layer's time loop over each block of rows, on as many threads as there are blocks.

    `blas_loop(address, ilp64, lo, hi)` is the loop in Numba, calling the BLAS's GEMM
    itself and never taking the GIL (`kernels.rnn`: two threads each running a Python
    loop waited for each other's GIL); it runs wherever NumPy's OpenBLAS is found, unless
    the loop runs whole and `gemm` would split each step's product (`step_work`
    multiply-adds) over the threads. `python_loop(lo, hi, product)` is the same loop in
    Python, `product(a, b, out=)` its per-step GEMM."""
    blas = threads.blas_gemm_address("s" if dtype == np.float32 else "d")
    if blas is not None and (len(blocks) > 1 or not threads.parallel(step_work, _GEMM_SPLIT_WORK)):
        def run(lo, hi):
            blas_loop(*blas, lo, hi)
    else:
        def run(lo, hi):
            python_loop(lo, hi, gemm if len(blocks) == 1 else np.dot)
    if len(blocks) == 1:
        run(*blocks[0])
    else:
        threads.run_parts(lambda i: run(*blocks[i]), len(blocks))


def _input_gates(x, w_ih, bias):
    """x_t W_ih^T + bias for every step t: (T, N, G*H), one GEMM."""
    length, batch, features = x.shape
    gates = gemm(x.reshape(length * batch, features), w_ih.T)
    if bias is not None:
        gates += bias
    return gates.reshape(length, batch, w_ih.shape[0])


def _previous_hidden(output, h0, reverse):
    """The hidden state each step started from, (T, N, H): h0 then the outputs before."""
    h_prev = np.empty(output.shape, output.dtype)   # C-contiguous, whatever output's layout
    if reverse:
        h_prev[:-1] = output[1:]
        h_prev[-1] = h0
    else:
        h_prev[1:] = output[:-1]
        h_prev[0] = h0
    return h_prev


def _sequence_grads(d_gates_x, x, w_ih, d_gates_h, h_prev, input_grad=True):
    """The gradients that sum over all steps, from those of every step's input gates
    (T, N, G*H) and recurrent gates (the same array for LSTM and RNN, not for GRU):
    [dX, dW_ih, d_b_ih, dW_hh, d_b_hh], each one GEMM (GEMV for the biases); dX None
    unless `input_grad` (a first layer's data needs none: its GEMM was a tenth of a
    1-layer LSTM step's backward)."""
    length, batch, features = x.shape
    flat_x = d_gates_x.reshape(length * batch, -1)
    flat_h = d_gates_h.reshape(length * batch, -1)
    ones = np.ones(length * batch, x.dtype)
    # The biases' column sums as GEMVs (ones @ d_gates): NumPy's column sum of a float32
    # 1024 x 512 took 2-2.5x as long (178 against 72 us, loaded machine).
    pairs = [(flat_x.T, x.reshape(length * batch, features)), (ones, flat_x),
             (flat_h.T, h_prev.reshape(length * batch, -1))]
    if d_gates_h is not d_gates_x:
        pairs.append((ones, flat_h))
    if input_grad:
        pairs.append((flat_x, w_ih))
    dw_ih, d_b_ih, dw_hh, *rest = _products(pairs)
    dx = rest.pop().reshape(x.shape) if input_grad else None
    return dx, dw_ih, d_b_ih, dw_hh, (rest or [d_b_ih])[0]


def _products(pairs):
    """[a @ b for a, b in pairs], each with a one-thread run's bits.

    With several threads and products large enough that can be shared out evenly, each
    thread computes some of them whole: one hand-over for all, and every product keeps
    its whole size (a product split by `gemm` costs a hand-over and packs its right
    operand once a part). Otherwise they run in turn, each split by `gemm` if large."""
    work = [a.shape[0] * b.size if a.ndim == 2 else b.size for a, b in pairs]   # multiply-adds
    total = sum(work)
    parts = threads.part_count() if threads.parallel(total, SPLIT_PRODUCTS) else 1
    shares = _share_out(work, parts)
    if len(shares) > 1 and max(sum(work[i] for i in share) for share in shares) <= _MOST_UNEVEN * total:
        results = [None] * len(pairs)

        def run(part):
            for i in shares[part]:
                results[i] = pairs[i][0].dot(pairs[i][1])
        threads.run_parts(run, len(shares))
        return results
    return [gemm(a, b) if a.ndim == 2 else a.dot(b) for a, b in pairs]


def _share_out(work, parts):
    """Indices of `work` dealt into at most `parts` shares, largest first, each to the
    share with the least work so far."""
    shares = [[] for _ in range(min(parts, len(work)))]
    loads = [0] * len(shares)
    for i in sorted(range(len(work)), key=work.__getitem__, reverse=True):
        least = loads.index(min(loads))
        shares[least].append(i)
        loads[least] += work[i]
    return [share for share in shares if share]


def _last(states, h0, length, reverse):
    """The state after the last step visited (a copy), or h0's when there are no steps."""
    if length == 0:
        return h0.copy()
    return states[0 if reverse else length - 1].copy()


def lstm_forward(x, w_ih, w_hh, b_ih, b_hh, h0, c0, reverse):
    """One LSTM layer and direction over x (T, N, I).

    Returns (output (T, N, H), h_n, c_n, gate activations (T, N, 4H), cells (T, N, H));
    the last two are what `lstm_backward` reads.
    """
    x, w_ih, h0, c0 = _c(x), _c(w_ih), _c(h0), _c(c0)
    bias = b_ih if b_hh is None else (b_hh if b_ih is None else b_ih + b_hh)
    gates_x = _input_gates(x, w_ih, bias)
    length, batch = x.shape[:2]
    hidden = w_hh.shape[1]
    output = np.empty((length, batch, hidden), x.dtype)
    cells = np.empty_like(output)
    act = np.empty_like(gates_x)
    w_hh_t = np.ascontiguousarray(w_hh.T)

    def loop(lo, hi, product):
        h, c = h0[lo:hi], c0[lo:hi]
        gates_h = np.empty((hi - lo, 4 * hidden), x.dtype)
        for t in _steps(length, reverse):
            product(h, w_hh_t, out=gates_h)
            h_t, c_t = output[t, lo:hi], cells[t, lo:hi]
            K.lstm_gates_forward(gates_x[t, lo:hi], gates_h, c, act[t, lo:hi], c_t, h_t)
            h, c = h_t, c_t

    def blas_loop(address, ilp64, lo, hi):
        K.lstm_forward_loop(address, ilp64, lo, hi, reverse, gates_x, w_hh_t, h0, c0, act, cells, output)
    _over_rows(loop, blas_loop, _row_blocks(length, batch, hidden, 4), x.dtype, batch * 4 * hidden * hidden)
    return output, _last(output, h0, length, reverse), _last(cells, c0, length, reverse), act, cells


def lstm_backward(grad_output, grad_hy, grad_cy, x, w_ih, w_hh, h0, c0, output, cells, act, reverse,
                  input_grad=True):
    """The gradients of `lstm_forward` from those of its output (T, N, H), h_n and c_n.

    Returns (dx, dh0, dc0, dW_ih, dW_hh, d_bias); d_bias is the gradient of b_ih and of
    b_hh alike (they enter as a sum); dx is None unless `input_grad`.
    """
    grad_output, x, w_ih, w_hh, c0 = _c(grad_output), _c(x), _c(w_ih), _c(w_hh), _c(c0)
    output, cells, act = _c(output), _c(cells), _c(act)
    length, batch = x.shape[:2]
    hidden = w_hh.shape[1]
    d_gates = np.empty_like(act)
    dh = np.array(grad_hy, dtype=x.dtype, order="C")   # the recurrent part of h's gradient
    dc = np.array(grad_cy, dtype=x.dtype, order="C")
    steps = list(_steps(length, reverse))

    def loop(lo, hi, product):
        dh_rows, dc_rows = dh[lo:hi], dc[lo:hi]
        for k in range(length - 1, -1, -1):
            t = steps[k]
            c_prev = c0[lo:hi] if k == 0 else cells[steps[k - 1], lo:hi]
            K.lstm_gates_backward(act[t, lo:hi], cells[t, lo:hi], c_prev, grad_output[t, lo:hi], dh_rows, dc_rows,
                                  d_gates[t, lo:hi])
            product(d_gates[t, lo:hi], w_hh, out=dh_rows)

    def blas_loop(address, ilp64, lo, hi):
        K.lstm_backward_loop(address, ilp64, lo, hi, reverse, act, cells, c0, grad_output, w_hh, dh, dc, d_gates)
    _over_rows(loop, blas_loop, _row_blocks(length, batch, hidden, 4), x.dtype, batch * 4 * hidden * hidden)
    dx, dw_ih, d_bias, dw_hh, _ = _sequence_grads(d_gates, x, w_ih, d_gates, _previous_hidden(output, h0, reverse),
                                                    input_grad)
    return dx, dh, dc, dw_ih, dw_hh, d_bias


def gru_forward(x, w_ih, w_hh, b_ih, b_hh, h0, reverse):
    """One GRU layer and direction over x (T, N, I).

    Returns (output (T, N, H), h_n, activations (T, N, 4H): r, z, n and the recurrent
    n-gate product ``h W_hn^T + b_hn``, which `gru_backward` reads).
    """
    x, w_ih, h0 = _c(x), _c(w_ih), _c(h0)
    gates_x = _input_gates(x, w_ih, b_ih)
    length, batch = x.shape[:2]
    hidden = w_hh.shape[1]
    output = np.empty((length, batch, hidden), x.dtype)
    act = np.empty((length, batch, 4 * hidden), x.dtype)
    w_hh_t = np.ascontiguousarray(w_hh.T)
    b_hh = np.zeros(3 * hidden, x.dtype) if b_hh is None else _c(b_hh)  # added in the gate kernel

    def loop(lo, hi, product):
        h = h0[lo:hi]
        gates_h = np.empty((hi - lo, 3 * hidden), x.dtype)
        for t in _steps(length, reverse):
            product(h, w_hh_t, out=gates_h)
            h_t = output[t, lo:hi]
            K.gru_gates_forward(gates_x[t, lo:hi], gates_h, b_hh, h, act[t, lo:hi], h_t)
            h = h_t

    def blas_loop(address, ilp64, lo, hi):
        K.gru_forward_loop(address, ilp64, lo, hi, reverse, gates_x, w_hh_t, b_hh, h0, act, output)
    _over_rows(loop, blas_loop, _row_blocks(length, batch, hidden, 3), x.dtype, batch * 3 * hidden * hidden)
    return output, _last(output, h0, length, reverse), act


def gru_backward(grad_output, grad_hy, x, w_ih, w_hh, h0, output, act, reverse, input_grad=True):
    """The gradients of `gru_forward` from those of its output and h_n.

    Returns (dx, dh0, dW_ih, dW_hh, d_b_ih, d_b_hh); dx is None unless `input_grad`.
    """
    grad_output, x, w_ih, w_hh, act = _c(grad_output), _c(x), _c(w_ih), _c(w_hh), _c(act)
    length, batch = x.shape[:2]
    hidden = w_hh.shape[1]
    h_prev = _previous_hidden(output, h0, reverse)
    d_gates_x = np.empty((length, batch, 3 * hidden), x.dtype)
    d_gates_h = np.empty_like(d_gates_x)
    dh_rec = np.array(grad_hy, dtype=x.dtype, order="C")
    dh_direct = np.empty_like(dh_rec)

    def loop(lo, hi, product):
        rec, direct = dh_rec[lo:hi], dh_direct[lo:hi]
        for t in reversed(_steps(length, reverse)):
            K.gru_gates_backward(act[t, lo:hi], h_prev[t, lo:hi], grad_output[t, lo:hi], rec, d_gates_x[t, lo:hi],
                                 d_gates_h[t, lo:hi], direct)
            product(d_gates_h[t, lo:hi], w_hh, out=rec)
            rec += direct

    def blas_loop(address, ilp64, lo, hi):
        K.gru_backward_loop(address, ilp64, lo, hi, reverse, act, h_prev, grad_output, w_hh, dh_rec, dh_direct,
                            d_gates_x, d_gates_h)
    _over_rows(loop, blas_loop, _row_blocks(length, batch, hidden, 3), x.dtype, batch * 3 * hidden * hidden)
    dx, dw_ih, d_b_ih, dw_hh, d_b_hh = _sequence_grads(d_gates_x, x, w_ih, d_gates_h, h_prev, input_grad)
    return dx, dh_rec, dw_ih, dw_hh, d_b_ih, d_b_hh


def rnn_forward(x, w_ih, w_hh, b_ih, b_hh, h0, relu, reverse):
    """One Elman RNN layer and direction (tanh, or relu) over x (T, N, I): (output, h_n)."""
    x, w_ih, h0 = _c(x), _c(w_ih), _c(h0)
    bias = b_ih if b_hh is None else (b_hh if b_ih is None else b_ih + b_hh)
    gates_x = _input_gates(x, w_ih, bias)
    length, batch = x.shape[:2]
    hidden = w_hh.shape[1]
    output = np.empty_like(gates_x)
    w_hh_t = np.ascontiguousarray(w_hh.T)

    def loop(lo, hi, product):
        h = h0[lo:hi]
        gates_h = np.empty((hi - lo, hidden), x.dtype)
        for t in _steps(length, reverse):
            product(h, w_hh_t, out=gates_h)
            h = output[t, lo:hi]
            K.rnn_gates_forward(gates_x[t, lo:hi], gates_h, relu, h)

    def blas_loop(address, ilp64, lo, hi):
        K.rnn_forward_loop(address, ilp64, lo, hi, reverse, relu, gates_x, w_hh_t, h0, output)
    _over_rows(loop, blas_loop, _row_blocks(length, batch, hidden, 1), x.dtype, batch * hidden * hidden)
    return output, _last(output, h0, length, reverse)


def rnn_backward(grad_output, grad_hy, x, w_ih, w_hh, h0, output, relu, reverse, input_grad=True):
    """The gradients of `rnn_forward`: (dx, dh0, dW_ih, dW_hh, d_bias); dx None unless `input_grad`."""
    grad_output, x, w_ih, w_hh, output = _c(grad_output), _c(x), _c(w_ih), _c(w_hh), _c(output)
    length, batch = x.shape[:2]
    hidden = w_hh.shape[1]
    d_gates = np.empty_like(output)
    dh = np.array(grad_hy, dtype=x.dtype, order="C")

    def loop(lo, hi, product):
        dh_rows = dh[lo:hi]
        for t in reversed(_steps(length, reverse)):
            K.rnn_gates_backward(output[t, lo:hi], relu, grad_output[t, lo:hi], dh_rows, d_gates[t, lo:hi])
            product(d_gates[t, lo:hi], w_hh, out=dh_rows)

    def blas_loop(address, ilp64, lo, hi):
        K.rnn_backward_loop(address, ilp64, lo, hi, reverse, relu, output, grad_output, w_hh, dh, d_gates)
    _over_rows(loop, blas_loop, _row_blocks(length, batch, hidden, 1), x.dtype, batch * hidden * hidden)
    dx, dw_ih, d_bias, dw_hh, _ = _sequence_grads(d_gates, x, w_ih, d_gates, _previous_hidden(output, h0, reverse),
                                                    input_grad)
    return dx, dh, dw_ih, dw_hh, d_bias
