"""Numba gate kernels of the recurrent layers: one pass over a time step's gates.

A step of an LSTM layer is one recurrent GEMM (``h @ W_hh^T``, BLAS) and then this
file's `lstm_gates_forward`: the four gate pre-activations (the step's slice of the
input projections, computed for the whole sequence in one GEMM, plus the recurrent
product) go through sigmoid/tanh, the cell update and the new hidden state in one
loop, writing h, c and the gate activations that the backward reads. The composition
of elementwise ops it replaces made ~15 passes and as many temporaries a step.

`lstm_gates_backward` is the same loop in reverse: from the gradient reaching h_t (the
output's plus the recurrent one) and the cell gradient carried from step t + 1, it
writes the step's four gate gradients and leaves the cell gradient of step t - 1 in
`dc`. `gru_gates_*` and `rnn_gates_*` are the GRU's (r, z, n) and the Elman RNN's
(tanh or relu) counterparts. Each LSTM and GRU kernel is, row by row, a run of short
loops over few arrays each, which LLVM vectorises (a loop over all of a step's streams
stays scalar: the GRU's forward took 77 us a step that way for batch 32, hidden 128,
22 us now; the LSTM's backward 20 against 16).

Rows are independent: a block of rows passed alone gets the bits that block gets in
the whole batch, which lets the backend run a layer's time loop on several threads,
each on its own rows (`rnn.py`).

Gate layout is PyTorch's: rows [i, f, g, o] of W_ih/W_hh for LSTM, [r, z, n] for GRU.
The kernels are serial (a step of a typical layer is a few thousand elements: a
parallel region's start-up would cost more than the loop) and compiled lazily for the
float32 and float64 C-contiguous arrays the backend passes (half types arrive as
float32). They link `exp32.exp32`'s compiled code from another file, which Numba's
on-disk cache (keyed on this file) would not see change: the file ends with
`cache_keys.key_by_sources`, which adds exp32.py's hash to every kernel's cache key.

Transcendentals: libm's exp and tanh are scalar calls here (~3-5 ns each, no SVML),
which made the gate kernel the largest cost of an LSTM step. float32 takes `_exp32`,
the CPU kernels' shared float32 exp (`exp32.exp32`), which LLVM vectorises; its sigmoid is
``1 / (1 + exp(-x))`` and its tanh ``1 - 2 / (1 + exp(2x))`` (absolute error ~1e-7,
saturating to +-1 without overflow). float64 keeps libm's exp and tanh.
"""
import math

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic, overload

from . import exp32 as _exp32_module
from .cache_keys import key_by_sources
from .exp32 import exp32 as _exp32

__all__ = ["lstm_gates_forward", "lstm_gates_backward", "gru_gates_forward", "gru_gates_backward",
           "rnn_gates_forward", "rnn_gates_backward", "lstm_forward_loop", "lstm_backward_loop",
           "gru_forward_loop", "gru_backward_loop", "rnn_forward_loop", "rnn_backward_loop"]

_OPTIONS = dict(cache=True, nogil=True, error_model="numpy", fastmath={"contract"})


def _sigmoid(x):
    """1 / (1 + exp(-x)) in x's own precision (the Python body is never called)."""
    return 1.0 / (1.0 + math.exp(-x))


@overload(_sigmoid, inline="always")
def _sigmoid_overload(x):
    if x == types.float32:
        return lambda x: np.float32(1.0) / (np.float32(1.0) + _exp32(-x))
    return lambda x: 1.0 / (1.0 + math.exp(-x))


def _tanh(x):
    """tanh in x's own precision (the Python body is never called)."""
    return math.tanh(x)


@overload(_tanh, inline="always")
def _tanh_overload(x):
    if x == types.float32:
        return lambda x: np.float32(1.0) - np.float32(2.0) / (np.float32(1.0) + _exp32(np.float32(2.0) * x))
    return lambda x: math.tanh(x)


@njit(**_OPTIONS)
def lstm_gates_forward(gates_x, gates_h, c_prev, act, c_out, h_out):
    """One LSTM step from its gate pre-activations ``gates_x + gates_h`` (N, 4H).

    Writes the activations (i, f, g, o) to `act` (N, 4H), ``c = f c_prev + i g`` to
    `c_out` and ``h = o tanh(c)`` to `h_out` (N, H).
    """
    n, hidden = c_prev.shape
    for b in range(n):
        # Short loops over one or two streams each: LLVM vectorises them (one loop
        # touching all nine streams is left scalar, its alias checks being too many).
        row = act[b]
        _add(gates_x[b], gates_h[b], row)
        _sigmoid_inplace(row[:2 * hidden])
        _tanh_inplace(row[2 * hidden:3 * hidden])
        _sigmoid_inplace(row[3 * hidden:])
        _cell(row[:hidden], row[hidden:2 * hidden], row[2 * hidden:3 * hidden], c_prev[b], c_out[b])
        _hidden(row[3 * hidden:], c_out[b], h_out[b])


@njit(**_OPTIONS)
def _add(a, b, out):
    for k in range(out.shape[0]):
        out[k] = a[k] + b[k]


@njit(**_OPTIONS)
def _sigmoid_inplace(a):
    for k in range(a.shape[0]):
        a[k] = _sigmoid(a[k])


@njit(**_OPTIONS)
def _tanh_inplace(a):
    for k in range(a.shape[0]):
        a[k] = _tanh(a[k])


@njit(**_OPTIONS)
def _cell(i, f, g, c_prev, c_out):
    for k in range(c_out.shape[0]):
        c_out[k] = f[k] * c_prev[k] + i[k] * g[k]


@njit(**_OPTIONS)
def _hidden(o, c, h_out):
    for k in range(h_out.shape[0]):
        h_out[k] = o[k] * _tanh(c[k])


@njit(**_OPTIONS)
def lstm_gates_backward(act, c, c_prev, grad_h_out, grad_h_rec, dc, d_gates):
    """The gradient of one LSTM step, to its gate pre-activations.

    The gradient reaching h_t is ``grad_h_out + grad_h_rec`` (the layer output's and the
    next step's, both (N, H)); `dc` holds the cell gradient from step t + 1 on entry and
    the one of c_prev on exit. Writes d(i, f, g, o) pre-activations to `d_gates` (N, 4H).
    """
    n, hidden = c.shape
    tanh_c = np.empty(hidden, c.dtype)
    dh = np.empty(hidden, c.dtype)
    for b in range(n):
        # Short loops over few streams (as the forward's): one loop over all eleven
        # streams stayed scalar (15 us a step for batch 32, hidden 128).
        row, d_row = act[b], d_gates[b]
        i, f, g, o = row[:hidden], row[hidden:2 * hidden], row[2 * hidden:3 * hidden], row[3 * hidden:]
        _tanh_into(c[b], tanh_c)
        _add(grad_h_out[b], grad_h_rec[b], dh)
        _cell_grad(dh, o, tanh_c, dc[b])              # dc: the cell's whole gradient, for now
        _gate_grad_i(dc[b], g, i, d_row[:hidden])
        _gate_grad_f(dc[b], c_prev[b], f, d_row[hidden:2 * hidden])
        _gate_grad_g(dc[b], i, g, d_row[2 * hidden:3 * hidden])
        _lstm_output_gate_grad(dh, tanh_c, o, d_row[3 * hidden:])
        _scale(dc[b], f)                               # dc: c_prev's gradient


@njit(**_OPTIONS)
def _cell_grad(dh, o, tanh_c, dc):
    one = dc.dtype.type(1.0)
    for k in range(dc.shape[0]):
        dc[k] = dc[k] + dh[k] * o[k] * (one - tanh_c[k] * tanh_c[k])


@njit(**_OPTIONS)
def _gate_grad_i(dcell, g, i, d_i):
    one = dcell.dtype.type(1.0)
    for k in range(dcell.shape[0]):
        d_i[k] = dcell[k] * g[k] * i[k] * (one - i[k])


@njit(**_OPTIONS)
def _gate_grad_f(dcell, c_prev, f, d_f):
    one = dcell.dtype.type(1.0)
    for k in range(dcell.shape[0]):
        d_f[k] = dcell[k] * c_prev[k] * f[k] * (one - f[k])


@njit(**_OPTIONS)
def _gate_grad_g(dcell, i, g, d_g):
    one = dcell.dtype.type(1.0)
    for k in range(dcell.shape[0]):
        d_g[k] = dcell[k] * i[k] * (one - g[k] * g[k])


@njit(**_OPTIONS)
def _lstm_output_gate_grad(dh, tanh_c, o, d_o):
    one = dh.dtype.type(1.0)
    for k in range(dh.shape[0]):
        d_o[k] = dh[k] * tanh_c[k] * o[k] * (one - o[k])


@njit(**_OPTIONS)
def _scale(a, b):
    for k in range(a.shape[0]):
        a[k] = a[k] * b[k]


@njit(**_OPTIONS)
def _tanh_into(a, out):
    for k in range(a.shape[0]):
        out[k] = _tanh(a[k])


@njit(**_OPTIONS)
def gru_gates_forward(gates_x, gates_h, b_hh, h_prev, act, h_out):
    """One GRU step: ``r = s(x_r + h_r)``, ``z = s(x_z + h_z)``, ``n = tanh(x_n + r h_n)``,
    ``h = (1 - z) n + z h_prev``, where the recurrent parts are ``gates_h + b_hh`` (PyTorch's
    n gate multiplies r by ``h W_hn^T + b_hn``; `b_hh` is zeros for a layer without biases).
    Writes (r, z, n, h_n) to `act` (N, 4H) and h to `h_out`.
    """
    n, hidden = h_prev.shape
    for b in range(n):
        # Short loops over few streams, as in `lstm_gates_forward`: one loop over all of
        # them stayed scalar and made this kernel 4-5x the LSTM's.
        row = act[b]
        _add_biased(gates_x[b, :2 * hidden], gates_h[b, :2 * hidden], b_hh[:2 * hidden], row[:2 * hidden])
        _sigmoid_inplace(row[:2 * hidden])
        _add(gates_h[b, 2 * hidden:], b_hh[2 * hidden:], row[3 * hidden:])
        _candidate(gates_x[b, 2 * hidden:], row[:hidden], row[3 * hidden:], row[2 * hidden:3 * hidden])
        _tanh_inplace(row[2 * hidden:3 * hidden])
        _interpolate(row[hidden:2 * hidden], row[2 * hidden:3 * hidden], h_prev[b], h_out[b])


@njit(**_OPTIONS)
def _add_biased(a, b, bias, out):
    for k in range(out.shape[0]):
        out[k] = a[k] + (b[k] + bias[k])


@njit(**_OPTIONS)
def _candidate(x_n, r, h_n, out):
    for k in range(out.shape[0]):
        out[k] = x_n[k] + r[k] * h_n[k]


@njit(**_OPTIONS)
def _interpolate(z, cand, h_prev, h_out):
    one = h_out.dtype.type(1.0)
    for k in range(h_out.shape[0]):
        h_out[k] = (one - z[k]) * cand[k] + z[k] * h_prev[k]


@njit(**_OPTIONS)
def gru_gates_backward(act, h_prev, grad_h_out, grad_h_rec, d_gates_x, d_gates_h, dh_prev):
    """The gradient of one GRU step: to the input gate pre-activations `d_gates_x`
    (N, 3H), to the recurrent ones `d_gates_h` (N, 3H: what ``h W_hh^T + b_hh`` gets),
    and the direct part of h_prev's gradient (through ``z h_prev``) to `dh_prev`."""
    n, hidden = h_prev.shape
    dh = np.empty(hidden, h_prev.dtype)
    for b in range(n):
        # Short loops over few streams, as in `lstm_gates_backward`.
        row, dx_row, dh_row = act[b], d_gates_x[b], d_gates_h[b]
        r, z, cand, hn = row[:hidden], row[hidden:2 * hidden], row[2 * hidden:3 * hidden], row[3 * hidden:]
        _add(grad_h_out[b], grad_h_rec[b], dh)
        _gru_candidate_grad(dh, z, cand, dx_row[2 * hidden:])
        _gru_update_grad(dh, h_prev[b], cand, z, dx_row[hidden:2 * hidden])
        _gru_reset_grad(dx_row[2 * hidden:], hn, r, dx_row[:hidden])
        _copy(dx_row[:2 * hidden], dh_row[:2 * hidden])
        _scale_into(dx_row[2 * hidden:], r, dh_row[2 * hidden:])
        _scale_into(dh, z, dh_prev[b])


@njit(**_OPTIONS)
def _gru_candidate_grad(dh, z, cand, d_cand):
    one = dh.dtype.type(1.0)
    for k in range(dh.shape[0]):
        d_cand[k] = dh[k] * (one - z[k]) * (one - cand[k] * cand[k])


@njit(**_OPTIONS)
def _gru_update_grad(dh, h_prev, cand, z, dz):
    one = dh.dtype.type(1.0)
    for k in range(dh.shape[0]):
        dz[k] = dh[k] * (h_prev[k] - cand[k]) * z[k] * (one - z[k])


@njit(**_OPTIONS)
def _gru_reset_grad(d_cand, hn, r, dr):
    one = r.dtype.type(1.0)
    for k in range(r.shape[0]):
        dr[k] = d_cand[k] * hn[k] * r[k] * (one - r[k])


@njit(**_OPTIONS)
def _copy(a, out):
    for k in range(out.shape[0]):
        out[k] = a[k]


@njit(**_OPTIONS)
def _scale_into(a, b, out):
    for k in range(out.shape[0]):
        out[k] = a[k] * b[k]


@njit(**_OPTIONS)
def rnn_gates_forward(gates_x, gates_h, relu, h_out):
    """One Elman step: ``h = tanh(gates_x + gates_h)`` (relu: max(., 0)), (N, H)."""
    n, hidden = h_out.shape
    zero = h_out.dtype.type(0.0)
    for b in range(n):
        for j in range(hidden):
            pre = gates_x[b, j] + gates_h[b, j]
            if relu:
                h_out[b, j] = pre if pre > zero else zero
            else:
                h_out[b, j] = _tanh(pre)


@njit(**_OPTIONS)
def rnn_gates_backward(h, relu, grad_h_out, grad_h_rec, d_gates):
    """The gradient of one Elman step to its pre-activation, from its output h."""
    n, hidden = h.shape
    one = h.dtype.type(1.0)
    zero = h.dtype.type(0.0)
    for b in range(n):
        for j in range(hidden):
            dh = grad_h_out[b, j] + grad_h_rec[b, j]
            if relu:
                d_gates[b, j] = dh if h[b, j] > zero else zero
            else:
                d_gates[b, j] = dh * (one - h[b, j] * h[b, j])


# --- Time loops without the GIL -------------------------------------------------------
#
# A layer's time loop run from Python takes the GIL twice a step (after the GEMM, after
# the gate kernel). With two threads each running the loop on its own batch rows, a
# thread that wants the GIL while the other holds it sleeps until woken (30-60 us on a
# virtual machine, or a whole 5 ms switch interval under load: measured, one thread
# finished its half in 1.8 ms while the other took 7.7). These loops make the step's
# GEMM a direct call of the BLAS's cblas_?gemm (its address, found by
# `threads.blas_gemm_address`, passed in), so a thread runs every step of its rows without the GIL. The call is the
# one NumPy makes for a C-contiguous product (row-major, no transposes, alpha 1, beta
# 0): the same bits as `np.dot`.

_ROW_MAJOR, _NO_TRANS = 101, 111


def _cblas_gemm_intrinsic(int_bits):
    """An intrinsic ``gemm(address, a, b, c)``: c = a @ b for C-contiguous 2-d arrays of one
    float dtype, by the cblas_?gemm at `address` with `int_bits`-wide integers (64: NumPy's
    ILP64 OpenBLAS). Leading dimensions are the column counts (C-contiguous rows follow
    each other), never a stride: NumPy may give a length-1 axis any stride."""
    @intrinsic
    def gemm(typingctx, address, a, b, c):
        if any(not isinstance(t, types.Array) or t.ndim != 2 or t.layout != "C" for t in (a, b, c)):
            return None

        def codegen(context, builder, signature, args):
            width, enum = ir.IntType(int_bits), ir.IntType(32)
            real = context.get_value_type(signature.args[1].dtype)
            a_arr, b_arr, c_arr = [context.make_array(t)(context, builder, v)
                                   for t, v in zip(signature.args[1:], args[1:])]

            def size(array, axis):
                value = cgutils.unpack_tuple(builder, array.shape, 2)[axis]
                return builder.trunc(value, width) if int_bits < 64 else value
            m, k, n = size(a_arr, 0), size(a_arr, 1), size(b_arr, 1)
            pointer = real.as_pointer()
            fn_type = ir.FunctionType(ir.VoidType(), [enum, enum, enum, width, width, width, real, pointer, width,
                                                      pointer, width, real, pointer, width])
            fn = builder.inttoptr(args[0], fn_type.as_pointer())
            builder.call(fn, [enum(_ROW_MAJOR), enum(_NO_TRANS), enum(_NO_TRANS), m, n, k, ir.Constant(real, 1.0),
                              a_arr.data, k, b_arr.data, n, ir.Constant(real, 0.0), c_arr.data, n])
            return context.get_dummy_value()
        return types.void(address, a, b, c), codegen
    return gemm


_gemm64 = _cblas_gemm_intrinsic(64)
_gemm32 = _cblas_gemm_intrinsic(32)


@njit(**_OPTIONS)
def _gemm(address, ilp64, a, b, c):
    if ilp64:
        _gemm64(address, a, b, c)
    else:
        _gemm32(address, a, b, c)


@njit(**_OPTIONS)
def lstm_forward_loop(address, ilp64, lo, hi, reverse, gates_x, w_hh_t, h0, c0, act, cells, output):
    """Every step of an LSTM layer's forward on batch rows lo:hi (the backend's loop)."""
    length = gates_x.shape[0]
    gates_h = np.empty((hi - lo, w_hh_t.shape[1]), gates_x.dtype)
    h, c = h0[lo:hi], c0[lo:hi]
    for k in range(length):
        t = length - 1 - k if reverse else k
        _gemm(address, ilp64, h, w_hh_t, gates_h)
        h_t, c_t = output[t][lo:hi], cells[t][lo:hi]
        lstm_gates_forward(gates_x[t][lo:hi], gates_h, c, act[t][lo:hi], c_t, h_t)
        h, c = h_t, c_t


@njit(**_OPTIONS)
def lstm_backward_loop(address, ilp64, lo, hi, reverse, act, cells, c0, grad_output, w_hh, dh, dc, d_gates):
    """Every step of an LSTM layer's reverse walk on batch rows lo:hi."""
    length = act.shape[0]
    dh_rows, dc_rows = dh[lo:hi], dc[lo:hi]
    for k in range(length - 1, -1, -1):
        t = length - 1 - k if reverse else k
        before = length - k if reverse else k - 1   # the step visited before t
        c_prev = c0[lo:hi] if k == 0 else cells[before][lo:hi]
        lstm_gates_backward(act[t][lo:hi], cells[t][lo:hi], c_prev, grad_output[t][lo:hi], dh_rows, dc_rows,
                            d_gates[t][lo:hi])
        _gemm(address, ilp64, d_gates[t][lo:hi], w_hh, dh_rows)


@njit(**_OPTIONS)
def gru_forward_loop(address, ilp64, lo, hi, reverse, gates_x, w_hh_t, b_hh, h0, act, output):
    """Every step of a GRU layer's forward on batch rows lo:hi."""
    length = gates_x.shape[0]
    gates_h = np.empty((hi - lo, w_hh_t.shape[1]), gates_x.dtype)
    h = h0[lo:hi]
    for k in range(length):
        t = length - 1 - k if reverse else k
        _gemm(address, ilp64, h, w_hh_t, gates_h)
        h_t = output[t][lo:hi]
        gru_gates_forward(gates_x[t][lo:hi], gates_h, b_hh, h, act[t][lo:hi], h_t)
        h = h_t


@njit(**_OPTIONS)
def gru_backward_loop(address, ilp64, lo, hi, reverse, act, h_prev, grad_output, w_hh, dh_rec, dh_direct,
                      d_gates_x, d_gates_h):
    """Every step of a GRU layer's reverse walk on batch rows lo:hi."""
    length = act.shape[0]
    rec, direct = dh_rec[lo:hi], dh_direct[lo:hi]
    for k in range(length - 1, -1, -1):
        t = length - 1 - k if reverse else k
        gru_gates_backward(act[t][lo:hi], h_prev[t][lo:hi], grad_output[t][lo:hi], rec, d_gates_x[t][lo:hi],
                           d_gates_h[t][lo:hi], direct)
        _gemm(address, ilp64, d_gates_h[t][lo:hi], w_hh, rec)
        for b in range(rec.shape[0]):
            row, add = rec[b], direct[b]
            for j in range(row.shape[0]):
                row[j] += add[j]


@njit(**_OPTIONS)
def rnn_forward_loop(address, ilp64, lo, hi, reverse, relu, gates_x, w_hh_t, h0, output):
    """Every step of an Elman layer's forward on batch rows lo:hi."""
    length = gates_x.shape[0]
    gates_h = np.empty((hi - lo, w_hh_t.shape[1]), gates_x.dtype)
    h = h0[lo:hi]
    for k in range(length):
        t = length - 1 - k if reverse else k
        _gemm(address, ilp64, h, w_hh_t, gates_h)
        h = output[t][lo:hi]
        rnn_gates_forward(gates_x[t][lo:hi], gates_h, relu, h)


@njit(**_OPTIONS)
def rnn_backward_loop(address, ilp64, lo, hi, reverse, relu, output, grad_output, w_hh, dh, d_gates):
    """Every step of an Elman layer's reverse walk on batch rows lo:hi."""
    length = output.shape[0]
    dh_rows = dh[lo:hi]
    for k in range(length - 1, -1, -1):
        t = length - 1 - k if reverse else k
        rnn_gates_backward(output[t][lo:hi], relu, grad_output[t][lo:hi], dh_rows, d_gates[t][lo:hi])
        _gemm(address, ilp64, d_gates[t][lo:hi], w_hh, dh_rows)


# Last, once every kernel is defined: they link exp32.py's code (see the docstring).
key_by_sources(globals().values(), [_exp32_module.__file__])
