"""One layer and direction of a recurrent layer over a sequence: fused, or composed of ops.

The fused path calls ember-tensor's layer ops (`nn_ops.lstm_layer`, `gru_layer`,
`rnn_layer`: the input projections of all steps in one GEMM, then per step a recurrent
GEMM and one gate kernel) inside one autograd Function per layer call, so the graph holds
one node where the composition records ~15 a time step; its backward is the matching
fused op, which walks the sequence once. The cells call it with a sequence of one step.

The composition (a `_step` per time step from ops that autograd records one by one) is
kept for what the fused ops do not cover: packed sequences (their per-sequence masks),
LSTM projections (`proj_size`), devices without the kernels (CUDA, for now), mixed
dtypes, traces (torch.jit.trace and ONNX export record ops), and higher-order gradients: when the backward itself is recorded
(``create_graph=True``) the fused Function's backward re-runs the composition on the
saved inputs and differentiates that, so double backward works as before.
"""
import ember_autograd
import ember_tensor as et
from ember_autograd import Function
from ember_tensor import dispatch, nn_ops

__all__ = ["linear", "step", "run_composed", "run_fused", "can_fuse"]

_FUSED_DTYPES = (et.float32, et.float64)


def linear(x, weight, bias):
    """x @ weight^T (+ bias)."""
    out = et.matmul(x, weight.t())
    return out if bias is None else out + bias


def step(mode, gates_x, h, c, w_hh, b_hh, w_hr):
    """One time step from precomputed input gates; returns (h, c) (c is None but for LSTM)."""
    gates_h = linear(h, w_hh, b_hh)
    if mode == "LSTM":
        i, f, g, o = (gates_x + gates_h).chunk(4, dim=-1)
        c = f.sigmoid() * c + i.sigmoid() * g.tanh()
        h = o.sigmoid() * c.tanh()
        if w_hr is not None:
            h = et.matmul(h, w_hr.t())
        return h, c
    if mode == "GRU":
        x_r, x_z, x_n = gates_x.chunk(3, dim=-1)
        h_r, h_z, h_n = gates_h.chunk(3, dim=-1)
        r = (x_r + h_r).sigmoid()
        z = (x_z + h_z).sigmoid()
        n = (x_n + r * h_n).tanh()
        return (1 - z) * n + z * h, None
    pre = gates_x + gates_h
    return (pre.tanh() if mode == "RNN_TANH" else pre.relu()), None


def run_composed(mode, x, h, c, weights, reverse, mask=None):
    """The layer as a composition of ops: (output (T, N, H), h_n, c_n).

    `weights` is (w_ih, w_hh, b_ih, b_hh, w_hr); `mask` (T, N, 1), for a packed batch,
    freezes each sequence's state once it has ended and zeroes its outputs there.
    """
    w_ih, w_hh, b_ih, b_hh, w_hr = weights
    gates_x = linear(x, w_ih, b_ih)     # every step's input gates in one product
    steps = range(x.shape[0] - 1, -1, -1) if reverse else range(x.shape[0])
    outputs = [None] * x.shape[0]
    for t in steps:
        new_h, new_c = step(mode, gates_x[t], h, c, w_hh, b_hh, w_hr)
        if mask is not None:      # an ended sequence keeps its state and outputs zeros
            keep = mask[t]
            new_h = keep * new_h + (1 - keep) * h
            if new_c is not None:
                new_c = keep * new_c + (1 - keep) * c
            outputs[t] = new_h * keep
        else:
            outputs[t] = new_h
        h, c = new_h, new_c
    return et.stack(outputs), h, c


def can_fuse(x, h, c, weights, mask):
    """Whether the fused layer ops compute this call (see the module docstring)."""
    w_ih, w_hh, b_ih, b_hh, w_hr = weights
    if mask is not None or w_hr is not None or x.shape[0] == 0:
        return False
    if dispatch.is_tracing():  # a trace (ONNX export) records the composition's ops
        return False
    if x.dtype not in _FUSED_DTYPES or not nn_ops.fused_rnn_available(x.device):
        return False
    return all(t is None or (t.dtype == x.dtype and t.device == x.device) for t in (h, c, w_ih, w_hh, b_ih, b_hh))


def run_fused(mode, x, h, c, weights, reverse):
    """The layer through the fused ops, one autograd node: (output, h_n, c_n)."""
    w_ih, w_hh, b_ih, b_hh, _ = weights
    if mode == "LSTM":
        return _LSTMLayer.apply(x, h, c, w_ih, w_hh, b_ih, b_hh, reverse)
    if mode == "GRU":
        output, h_n = _GRULayer.apply(x, h, w_ih, w_hh, b_ih, b_hh, reverse)
    else:
        output, h_n = _RNNLayer.apply(x, h, w_ih, w_hh, b_ih, b_hh, "relu" if mode == "RNN_RELU" else "tanh",
                                      reverse)
    return output, h_n, None


def _composed_backward(needs, mode, inputs, grads, reverse):
    """The gradients of the inputs (x, h0, c0, w_ih, w_hh, b_ih, b_hh; `needs` says which
    are wanted) as a graph: the composition re-run on them and differentiated with
    ``create_graph=True``."""
    x, h0, c0, w_ih, w_hh, b_ih, b_hh = inputs
    wanted = [i for i, t in enumerate(inputs) if t is not None and needs[i]]
    with ember_autograd.enable_grad():
        outputs = run_composed(mode, x, h0, c0, (w_ih, w_hh, b_ih, b_hh, None), reverse)
    pairs = [(o, g) for o, g in zip(outputs, grads) if o is not None and g is not None]
    found = ember_autograd.grad([o for o, _ in pairs], [inputs[i] for i in wanted], [g for _, g in pairs],
                                create_graph=True, allow_unused=True)
    result = [None] * len(inputs)
    for i, g in zip(wanted, found):
        result[i] = g
    return result


def _bias_grads(d_bias, b_ih, b_hh, needs):
    return (d_bias if b_ih is not None and needs[0] else None,
            d_bias if b_hh is not None and needs[1] else None)


class _LSTMLayer(Function):
    """One LSTM layer and direction: forward and backward are one fused op each."""

    @staticmethod
    def forward(ctx, x, h0, c0, w_ih, w_hh, b_ih, b_hh, reverse):
        output, h_n, c_n, gates, cells = nn_ops.lstm_layer(x, w_ih, w_hh, b_ih, b_hh, h0, c0, reverse)
        ctx.reverse = reverse
        ctx.save_for_backward(x, h0, c0, w_ih, w_hh, b_ih, b_hh, output, gates, cells)
        return output, h_n, c_n

    @staticmethod
    def backward(ctx, grad_output, grad_h, grad_c):
        x, h0, c0, w_ih, w_hh, b_ih, b_hh, output, gates, cells = ctx.saved_tensors
        if ember_autograd.is_grad_enabled():    # create_graph: a differentiable gradient
            grads = _composed_backward(ctx.needs_input_grad, "LSTM", (x, h0, c0, w_ih, w_hh, b_ih, b_hh),
                                       (grad_output, grad_h, grad_c), ctx.reverse)
            return (*grads, None)
        dx, dh0, dc0, dw_ih, dw_hh, d_bias = nn_ops.lstm_layer_backward(
            grad_output, grad_h, grad_c, x, w_ih, w_hh, h0, c0, output, cells, gates, ctx.reverse,
            input_grad=ctx.needs_input_grad[0])
        return (dx, dh0, dc0, dw_ih, dw_hh, *_bias_grads(d_bias, b_ih, b_hh, ctx.needs_input_grad[5:7]), None)


class _GRULayer(Function):
    """One GRU layer and direction: forward and backward are one fused op each."""

    @staticmethod
    def forward(ctx, x, h0, w_ih, w_hh, b_ih, b_hh, reverse):
        output, h_n, gates = nn_ops.gru_layer(x, w_ih, w_hh, b_ih, b_hh, h0, reverse)
        ctx.reverse = reverse
        ctx.save_for_backward(x, h0, w_ih, w_hh, b_ih, b_hh, output, gates)
        return output, h_n

    @staticmethod
    def backward(ctx, grad_output, grad_h):
        x, h0, w_ih, w_hh, b_ih, b_hh, output, gates = ctx.saved_tensors
        if ember_autograd.is_grad_enabled():
            needs = ctx.needs_input_grad
            grads = _composed_backward(needs[:2] + (False,) + needs[2:6], "GRU",
                                       (x, h0, None, w_ih, w_hh, b_ih, b_hh), (grad_output, grad_h), ctx.reverse)
            return (grads[0], grads[1], *grads[3:], None)
        dx, dh0, dw_ih, dw_hh, db_ih, db_hh = nn_ops.gru_layer_backward(
            grad_output, grad_h, x, w_ih, w_hh, h0, output, gates, ctx.reverse, input_grad=ctx.needs_input_grad[0])
        return dx, dh0, dw_ih, dw_hh, db_ih if b_ih is not None else None, db_hh if b_hh is not None else None, None


class _RNNLayer(Function):
    """One Elman RNN layer and direction (tanh or relu): one fused op each way."""

    @staticmethod
    def forward(ctx, x, h0, w_ih, w_hh, b_ih, b_hh, nonlinearity, reverse):
        output, h_n = nn_ops.rnn_layer(x, w_ih, w_hh, b_ih, b_hh, h0, nonlinearity, reverse)
        ctx.reverse, ctx.nonlinearity = reverse, nonlinearity
        ctx.save_for_backward(x, h0, w_ih, w_hh, b_ih, b_hh, output)
        return output, h_n

    @staticmethod
    def backward(ctx, grad_output, grad_h):
        x, h0, w_ih, w_hh, b_ih, b_hh, output = ctx.saved_tensors
        if ember_autograd.is_grad_enabled():
            needs = ctx.needs_input_grad
            mode = "RNN_RELU" if ctx.nonlinearity == "relu" else "RNN_TANH"
            grads = _composed_backward(needs[:2] + (False,) + needs[2:6], mode,
                                       (x, h0, None, w_ih, w_hh, b_ih, b_hh), (grad_output, grad_h), ctx.reverse)
            return (grads[0], grads[1], *grads[3:], None, None)
        dx, dh0, dw_ih, dw_hh, d_bias = nn_ops.rnn_layer_backward(
            grad_output, grad_h, x, w_ih, w_hh, h0, output, ctx.nonlinearity, ctx.reverse,
            input_grad=ctx.needs_input_grad[0])
        return (dx, dh0, dw_ih, dw_hh, *_bias_grads(d_bias, b_ih, b_hh, ctx.needs_input_grad[4:6]), None, None)

