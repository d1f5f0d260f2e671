"""CPU recurrent layers (LSTM, GRU, Elman RNN): one layer and direction over a whole
sequence, forward and backward.

Arrays in, arrays out, all of one float dtype (float32 or float64; half types arrive
as float32): `x` (T, N, I), weights as PyTorch stores them (W_ih (G*H, I), W_hh (G*H, H),
biases (G*H,) or None), initial states (N, H). The forward makes the input projections
of all T steps in one GEMM, then per step one recurrent GEMM (into a reused buffer)
and one fused gate kernel (`kernels.rnn`) writing straight into the output. The
backward walks the steps once in reverse with the fused gate-backward kernel and one
GEMM for the recurrent gradient, then computes dW_hh, dW_ih, the biases' and the
input's gradients each in one GEMM (or sum) over all steps at once. The GEMMs split over
ember's threads when large enough (`gemm.py`).
"""
import numpy as np

from ..lazy import lazy
from .gemm import gemm

__all__ = ["lstm_forward", "lstm_backward", "gru_forward", "gru_backward", "rnn_forward", "rnn_backward"]

K = lazy("cpu.kernels.rnn")  # Numba loads on first use


def _c(a):
    return None if a is None else np.ascontiguousarray(a)


def _steps(length, reverse):
    """The time indices in the order the layer visits them."""
    return range(length - 1, -1, -1) if reverse else range(length)


def _input_gates(x, w_ih, bias):
    """x_t W_ih^T + bias for every step t: (T, N, G*H), one GEMM."""
    length, batch, features = x.shape
    gates = gemm(x.reshape(length * batch, features), w_ih.T)
    if bias is not None:
        gates += bias
    return gates.reshape(length, batch, w_ih.shape[0])


def _previous_hidden(output, h0, reverse):
    """The hidden state each step started from, (T, N, H): h0 then the outputs before."""
    h_prev = np.empty_like(output)
    if reverse:
        h_prev[:-1] = output[1:]
        h_prev[-1] = h0
    else:
        h_prev[1:] = output[:-1]
        h_prev[0] = h0
    return h_prev


def _weight_and_input_grads(d_gates_x, x, w_ih):
    """dX and dW_ih from the gradients of all steps' input gates, one GEMM each."""
    length, batch, features = x.shape
    flat = d_gates_x.reshape(length * batch, -1)
    dx = gemm(flat, w_ih).reshape(x.shape)
    return dx, gemm(flat.T, x.reshape(length * batch, features)), flat.sum(0)


def lstm_forward(x, w_ih, w_hh, b_ih, b_hh, h0, c0, reverse):
    """One LSTM layer and direction over x (T, N, I).

    Returns (output (T, N, H), h_n, c_n, gate activations (T, N, 4H), cells (T, N, H));
    the last two are what `lstm_backward` reads.
    """
    x, w_ih, w_hh, h, c = _c(x), _c(w_ih), _c(w_hh), _c(h0), _c(c0)
    bias = b_ih if b_hh is None else (b_hh if b_ih is None else b_ih + b_hh)
    gates_x = _input_gates(x, w_ih, bias)
    length, batch = x.shape[:2]
    hidden = w_hh.shape[1]
    output = np.empty((length, batch, hidden), x.dtype)
    cells = np.empty_like(output)
    act = np.empty_like(gates_x)
    gates_h = np.empty((batch, 4 * hidden), x.dtype)
    w_hh_t = w_hh.T
    for t in _steps(length, reverse):
        gemm(h, w_hh_t, out=gates_h)
        K.lstm_gates_forward(gates_x[t], gates_h, c, act[t], cells[t], output[t])
        h, c = output[t], cells[t]
    return output, h.copy(), c.copy(), act, cells


def lstm_backward(grad_output, grad_hy, grad_cy, x, w_ih, w_hh, h0, c0, output, cells, act, reverse):
    """The gradients of `lstm_forward` from those of its output (T, N, H), h_n and c_n.

    Returns (dx, dh0, dc0, dW_ih, dW_hh, d_bias); d_bias is the gradient of b_ih and of
    b_hh alike (they enter as a sum).
    """
    grad_output, x, w_ih, w_hh, c0 = _c(grad_output), _c(x), _c(w_ih), _c(w_hh), _c(c0)
    length = x.shape[0]
    d_gates = np.empty_like(act)
    dh = np.array(grad_hy, dtype=x.dtype, order="C")   # the recurrent part of h's gradient
    dc = np.array(grad_cy, dtype=x.dtype, order="C")
    steps = list(_steps(length, reverse))
    for k in range(length - 1, -1, -1):
        t = steps[k]
        c_prev = c0 if k == 0 else cells[steps[k - 1]]
        K.lstm_gates_backward(act[t], cells[t], c_prev, grad_output[t], dh, dc, d_gates[t])
        gemm(d_gates[t], w_hh, out=dh)
    h_prev = _previous_hidden(output, h0, reverse)
    flat = d_gates.reshape(-1, d_gates.shape[2])
    dw_hh = gemm(flat.T, h_prev.reshape(-1, h_prev.shape[2]))
    dx, dw_ih, d_bias = _weight_and_input_grads(d_gates, x, w_ih)
    return dx, dh, dc, dw_ih, dw_hh, d_bias


def gru_forward(x, w_ih, w_hh, b_ih, b_hh, h0, reverse):
    """One GRU layer and direction over x (T, N, I).

    Returns (output (T, N, H), h_n, activations (T, N, 4H): r, z, n and the recurrent
    n-gate product ``h W_hn^T + b_hn``, which `gru_backward` reads).
    """
    x, w_ih, w_hh, h = _c(x), _c(w_ih), _c(w_hh), _c(h0)
    gates_x = _input_gates(x, w_ih, b_ih)
    length, batch = x.shape[:2]
    hidden = w_hh.shape[1]
    output = np.empty((length, batch, hidden), x.dtype)
    act = np.empty((length, batch, 4 * hidden), x.dtype)
    gates_h = np.empty((batch, 3 * hidden), x.dtype)
    w_hh_t = w_hh.T
    for t in _steps(length, reverse):
        gemm(h, w_hh_t, out=gates_h)
        if b_hh is not None:
            gates_h += b_hh
        K.gru_gates_forward(gates_x[t], gates_h, h, act[t], output[t])
        h = output[t]
    return output, h.copy(), act


def gru_backward(grad_output, grad_hy, x, w_ih, w_hh, h0, output, act, reverse):
    """The gradients of `gru_forward` from those of its output and h_n.

    Returns (dx, dh0, dW_ih, dW_hh, d_b_ih, d_b_hh).
    """
    grad_output, x, w_ih, w_hh = _c(grad_output), _c(x), _c(w_ih), _c(w_hh)
    length, batch = x.shape[:2]
    hidden = w_hh.shape[1]
    h_prev = _previous_hidden(output, h0, reverse)
    d_gates_x = np.empty((length, batch, 3 * hidden), x.dtype)
    d_gates_h = np.empty_like(d_gates_x)
    dh_rec = np.array(grad_hy, dtype=x.dtype, order="C")
    dh_direct = np.empty_like(dh_rec)
    steps = list(_steps(length, reverse))
    for k in range(length - 1, -1, -1):
        t = steps[k]
        K.gru_gates_backward(act[t], h_prev[t], grad_output[t], dh_rec, d_gates_x[t], d_gates_h[t], dh_direct)
        gemm(d_gates_h[t], w_hh, out=dh_rec)
        dh_rec += dh_direct
    flat_h = d_gates_h.reshape(-1, 3 * hidden)
    dw_hh = gemm(flat_h.T, h_prev.reshape(-1, hidden))
    dx, dw_ih, d_b_ih = _weight_and_input_grads(d_gates_x, x, w_ih)
    return dx, dh_rec, dw_ih, dw_hh, d_b_ih, flat_h.sum(0)


def rnn_forward(x, w_ih, w_hh, b_ih, b_hh, h0, relu, reverse):
    """One Elman RNN layer and direction (tanh, or relu) over x (T, N, I): (output, h_n)."""
    x, w_ih, w_hh, h = _c(x), _c(w_ih), _c(w_hh), _c(h0)
    bias = b_ih if b_hh is None else (b_hh if b_ih is None else b_ih + b_hh)
    gates_x = _input_gates(x, w_ih, bias)
    length, batch = x.shape[:2]
    output = np.empty_like(gates_x)
    gates_h = np.empty((batch, w_hh.shape[0]), x.dtype)
    w_hh_t = w_hh.T
    for t in _steps(length, reverse):
        gemm(h, w_hh_t, out=gates_h)
        K.rnn_gates_forward(gates_x[t], gates_h, relu, output[t])
        h = output[t]
    return output, h.copy()


def rnn_backward(grad_output, grad_hy, x, w_ih, w_hh, h0, output, relu, reverse):
    """The gradients of `rnn_forward`: (dx, dh0, dW_ih, dW_hh, d_bias)."""
    grad_output, x, w_ih, w_hh = _c(grad_output), _c(x), _c(w_ih), _c(w_hh)
    d_gates = np.empty_like(output)
    dh = np.array(grad_hy, dtype=x.dtype, order="C")
    for t in reversed(_steps(x.shape[0], reverse)):
        K.rnn_gates_backward(output[t], relu, grad_output[t], dh, d_gates[t])
        gemm(d_gates[t], w_hh, out=dh)
    h_prev = _previous_hidden(output, h0, reverse)
    flat = d_gates.reshape(-1, d_gates.shape[2])
    dw_hh = gemm(flat.T, h_prev.reshape(-1, h_prev.shape[2]))
    dx, dw_ih, d_bias = _weight_and_input_grads(d_gates, x, w_ih)
    return dx, dh, dw_ih, dw_hh, d_bias
