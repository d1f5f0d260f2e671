"""Fused recurrent layers: one layer and direction of an LSTM, GRU or Elman RNN over a
whole sequence, and its backward, as single ops.

A layer's composition of ops costs a recurrent GEMM plus ~15 elementwise ops and as
many graph nodes a time step; these ops make the input projections of all steps in one
GEMM, then per step one recurrent GEMM and one fused gate kernel (`_backends.<device>.rnn`).
They are PyTorch's ``_VF.lstm`` pieces at the level of one layer: ember-nn's recurrent
modules call them inside one autograd Function per layer call, which saves what the
forward returns for the backward op.

Shapes: input (T, N, I); weight_ih (G*H, I), weight_hh (G*H, H), biases (G*H,) or None,
with G = 4 (LSTM: i, f, g, o), 3 (GRU: r, z, n) or 1 (RNN); states (N, H). All of one
float dtype and device; half types are computed in float32. `reverse` runs the sequence
from its last step (the backward direction of a bidirectional layer).
"""
from ... import _backends
from ..._backends._families import GAPS
from ..._dispatch import op
from ._common import array_of, check_float, tensor_of

__all__ = ["fused_rnn_available", "lstm_layer", "lstm_layer_backward", "gru_layer", "gru_layer_backward",
           "rnn_layer", "rnn_layer_backward"]


def fused_rnn_available(device):
    """Whether `device`'s backend has the fused recurrent kernels of these ops (the CPU
    has; CUDA has not yet, and ember-nn composes its layers from other ops there).

    >>> import ember_tensor as et
    >>> fused_rnn_available(et.device("cpu"))
    True
    """
    return device.type not in GAPS[("rnn", "lstm_forward")]


def _arrays(*tensors):
    return [None if t is None else array_of(t) for t in tensors]


def _wrap(arrays, like):
    return tuple(None if a is None else tensor_of(a, like._dtype, like._device) for a in arrays)


def _backend(input, name):
    check_float(input, name)
    if not fused_rnn_available(input._device):
        raise NotImplementedError(f"{name}: {GAPS[('rnn', 'lstm_forward')][input._device.type]}")
    return _backends.get(input._device).rnn


@op()
def lstm_layer(input, weight_ih, weight_hh, bias_ih, bias_hh, hx, cx, reverse=False):
    """One LSTM layer and direction over `input` (T, N, I) from states hx, cx (N, H).

    Returns (output (T, N, H), h_n, c_n, gates (T, N, 4H), cells (T, N, H)); the gate
    activations and cell states are what `lstm_layer_backward` reads.
    """
    backend = _backend(input, "lstm_layer")
    arrays = backend.lstm_forward(*_arrays(input, weight_ih, weight_hh, bias_ih, bias_hh, hx, cx), reverse)
    return _wrap(arrays, input)


@op()
def lstm_layer_backward(grad_output, grad_hy, grad_cy, input, weight_ih, weight_hh, hx, cx, output, cells,
                        gates, reverse=False, input_grad=True):
    """Gradients of `lstm_layer`: (input, hx, cx, weight_ih, weight_hh, bias), from those
    of its output, h_n and c_n; the bias gradient is b_ih's and b_hh's alike. The input's
    is None when not `input_grad` (its GEMM is skipped)."""
    backend = _backend(input, "lstm_layer_backward")
    arrays = backend.lstm_backward(*_arrays(grad_output, grad_hy, grad_cy, input, weight_ih, weight_hh, hx, cx,
                                            output, cells, gates), reverse, input_grad)
    return _wrap(arrays, input)


@op()
def gru_layer(input, weight_ih, weight_hh, bias_ih, bias_hh, hx, reverse=False):
    """One GRU layer and direction over `input` (T, N, I) from state hx (N, H).

    Returns (output (T, N, H), h_n, gates (T, N, 4H)); `gates` holds r, z, n and the
    recurrent n-gate product, which `gru_layer_backward` reads.
    """
    backend = _backend(input, "gru_layer")
    arrays = backend.gru_forward(*_arrays(input, weight_ih, weight_hh, bias_ih, bias_hh, hx), reverse)
    return _wrap(arrays, input)


@op()
def gru_layer_backward(grad_output, grad_hy, input, weight_ih, weight_hh, hx, output, gates, reverse=False,
                       input_grad=True):
    """Gradients of `gru_layer`: (input, hx, weight_ih, weight_hh, bias_ih, bias_hh); the
    input's None when not `input_grad`."""
    backend = _backend(input, "gru_layer_backward")
    arrays = backend.gru_backward(*_arrays(grad_output, grad_hy, input, weight_ih, weight_hh, hx, output, gates),
                                  reverse, input_grad)
    return _wrap(arrays, input)


@op()
def rnn_layer(input, weight_ih, weight_hh, bias_ih, bias_hh, hx, nonlinearity="tanh", reverse=False):
    """One Elman RNN layer and direction (nonlinearity 'tanh' or 'relu') over `input`
    (T, N, I) from state hx (N, H): returns (output (T, N, H), h_n)."""
    backend = _backend(input, "rnn_layer")
    arrays = backend.rnn_forward(*_arrays(input, weight_ih, weight_hh, bias_ih, bias_hh, hx),
                                 nonlinearity == "relu", reverse)
    return _wrap(arrays, input)


@op()
def rnn_layer_backward(grad_output, grad_hy, input, weight_ih, weight_hh, hx, output, nonlinearity="tanh",
                       reverse=False, input_grad=True):
    """Gradients of `rnn_layer`: (input, hx, weight_ih, weight_hh, bias); the input's None
    when not `input_grad`."""
    backend = _backend(input, "rnn_layer_backward")
    arrays = backend.rnn_backward(*_arrays(grad_output, grad_hy, input, weight_ih, weight_hh, hx, output),
                                  nonlinearity == "relu", reverse, input_grad)
    return _wrap(arrays, input)
