"""Recurrent layers: RNN, LSTM, GRU and their cells, with PyTorch's parameter names and init.

Each layer and direction runs as one call of a fused op (`_recurrence`): the input
projections of the whole sequence in one matrix product, then per step one recurrent
product and one gate kernel, recorded as one autograd node. What the fused ops do not
cover runs as a composition of ops (`_recurrence.run_composed`): a PackedSequence runs
padded, with each sequence's state frozen once it has ended, so its outputs and final
states equal those of the sequence run alone; LSTM projections; devices without the
kernels.
"""
import math

import ember_tensor as et

from .. import functional as F
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence, pack_padded_sequence, pad_packed_sequence
from . import _recurrence
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


class RNNBase(Module):
    """The shared machinery of RNN, LSTM and GRU (PyTorch's ``nn.RNNBase``)."""

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        if not isinstance(dropout, (int, float)) or not 0 <= dropout <= 1 or isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an "
                             "element being zeroed")
        if not isinstance(hidden_size, int) or hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero" if isinstance(hidden_size, int)
                             else f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if not isinstance(num_layers, int) or num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if proj_size and mode != "LSTM":
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        directions = 2 if bidirectional else 1
        gate_size = _GATES[mode] * hidden_size
        real_hidden = proj_size or hidden_size
        self._flat_weights_names = []
        for layer in range(num_layers):
            for direction in range(directions):
                layer_input = input_size if layer == 0 else real_hidden * directions
                suffix = "_reverse" if direction == 1 else ""
                shapes = [("weight_ih", (gate_size, layer_input)), ("weight_hh", (gate_size, real_hidden))]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size:
                    shapes.append(("weight_hr", (proj_size, hidden_size)))
                for name, shape in shapes:
                    full = f"{name}_l{layer}{suffix}"
                    setattr(self, full, Parameter(et.empty(shape, device=device, dtype=dtype)))
                    self._flat_weights_names.append(full)
        self.reset_parameters()

    def reset_parameters(self):
        """Every weight and bias ~ U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)), as PyTorch."""
        bound = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -bound, bound)

    def flatten_parameters(self):
        """A no-op: PyTorch packs weights for cuDNN here; ember needs no packing."""

    def _weights(self, layer, direction):
        suffix = "_reverse" if direction == 1 else ""
        get = lambda name: getattr(self, f"{name}_l{layer}{suffix}", None)  # noqa: E731
        return get("weight_ih"), get("weight_hh"), get("bias_ih"), get("bias_hh"), get("weight_hr")

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    def forward(self, input, hx=None):
        packed = isinstance(input, PackedSequence)
        if packed:
            # Padded in the caller's batch order (as h_n is returned); the output is packed again.
            x, lengths = pad_packed_sequence(input, batch_first=False)
            batched = True
        else:
            batched = input.dim() == 3
            if input.dim() not in (2, 3):
                raise ValueError(f"{type(self).__name__}: Expected input to be 2D or 3D, got {input.dim()}D instead")
            x = input if batched else input.unsqueeze(1)
            if batched and self.batch_first:
                x = x.transpose(0, 1)
            lengths = None
        seq_len, batch = x.shape[0], x.shape[1]
        directions = 2 if self.bidirectional else 1
        real_hidden = self.proj_size or self.hidden_size
        h0, c0 = self._initial_states(hx, batch, batched, x, directions, real_hidden)
        mask = None
        if lengths is not None:
            steps = et.arange(seq_len, device=lengths.device).unsqueeze(1)
            mask = (steps < lengths.unsqueeze(0)).to(device=x.device, dtype=x.dtype).unsqueeze(2)   # (L, N, 1)
        layer_input = x
        h_n, c_n = [], []
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(directions):
                index = layer * directions + direction
                out, h, c = self._run_direction(layer_input, layer, direction, h0[index],
                                                None if c0 is None else c0[index], mask)
                outputs.append(out)
                h_n.append(h)
                c_n.append(c)
            layer_input = outputs[0] if directions == 1 else et.cat(outputs, dim=2)
            if self.dropout and self.training and layer < self.num_layers - 1:
                layer_input = F.dropout(layer_input, self.dropout, training=True)
        output = layer_input
        h_n = et.stack(h_n)
        c_n = et.stack(c_n) if self.mode == "LSTM" else None
        if packed:
            output = pack_padded_sequence(output, lengths, enforce_sorted=False)
            if input.sorted_indices is not None:
                output = PackedSequence(output.data, output.batch_sizes, input.sorted_indices,
                                        input.unsorted_indices)
        elif not batched:
            output, h_n = output.squeeze(1), h_n.squeeze(1)
            c_n = c_n.squeeze(1) if c_n is not None else None
        elif self.batch_first:
            output = output.transpose(0, 1)
        return output, ((h_n, c_n) if self.mode == "LSTM" else h_n)

    def _initial_states(self, hx, batch, batched, x, directions, real_hidden):
        shape_h = (self.num_layers * directions, batch, real_hidden)
        shape_c = (self.num_layers * directions, batch, self.hidden_size)
        if hx is None:
            zeros = lambda shape: et.zeros(shape, dtype=x.dtype, device=x.device)  # noqa: E731
            return zeros(shape_h), (zeros(shape_c) if self.mode == "LSTM" else None)
        if self.mode == "LSTM":
            h0, c0 = hx
            if not batched:
                h0, c0 = h0.unsqueeze(1), c0.unsqueeze(1)
            self._check_hidden(h0, shape_h, "Expected hidden[0] size")
            self._check_hidden(c0, shape_c, "Expected hidden[1] size")
            return h0, c0
        h0 = hx if batched else hx.unsqueeze(1)
        self._check_hidden(h0, shape_h, "Expected hidden size")
        return h0, None

    @staticmethod
    def _check_hidden(h, shape, what):
        if tuple(h.shape) != shape:
            raise RuntimeError(f"{what} {shape}, got {tuple(h.shape)}")

    def _run_direction(self, x, layer, direction, h, c, mask):
        weights = self._weights(layer, direction)
        reverse = direction == 1
        if _recurrence.can_fuse(x, h, c, weights, mask):
            return _recurrence.run_fused(self.mode, x, h, c, weights, reverse)
        return _recurrence.run_composed(self.mode, x, h, c, weights, reverse, mask)


class RNN(RNNBase):
    """Elman RNN: ``h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)`` (or relu)."""

    def __init__(self, *args, nonlinearity="tanh", **kwargs):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        self.nonlinearity = nonlinearity
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", *args, **kwargs)

    def extra_repr(self):
        s = super().extra_repr()
        return s + (", nonlinearity='relu'" if self.nonlinearity != "tanh" else "")


class LSTM(RNNBase):
    """Long short-term memory (gates i, f, g, o), optionally with a projection (``proj_size``)."""

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)


class GRU(RNNBase):
    """Gated recurrent unit (gates r, z, n)."""

    def __init__(self, *args, **kwargs):
        super().__init__("GRU", *args, **kwargs)


class RNNCellBase(Module):
    """One step of a recurrent layer: weight_ih, weight_hh, bias_ih, bias_hh."""

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(et.empty((num_chunks * hidden_size, input_size), device=device, dtype=dtype))
        self.weight_hh = Parameter(et.empty((num_chunks * hidden_size, hidden_size), device=device, dtype=dtype))
        if bias:
            self.bias_ih = Parameter(et.empty(num_chunks * hidden_size, device=device, dtype=dtype))
            self.bias_hh = Parameter(et.empty(num_chunks * hidden_size, device=device, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self):
        bound = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -bound, bound)

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def _step(self, mode, input, h, c):
        if input.dim() not in (1, 2):
            raise ValueError(f"{type(self).__name__}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        batched = input.dim() == 2
        x = input if batched else input.unsqueeze(0)
        zeros = et.zeros(x.shape[0], self.hidden_size, dtype=x.dtype, device=x.device)
        h = zeros if h is None else (h if batched else h.unsqueeze(0))
        c = (zeros if c is None else (c if batched else c.unsqueeze(0))) if mode == "LSTM" else None
        weights = (self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh, None)
        if _recurrence.can_fuse(x, h, c, weights, None):
            # A cell is a layer over a sequence of one step: the fused layer op, one node.
            _, h, c = _recurrence.run_fused(mode, x.unsqueeze(0), h, c, weights, False)
        else:
            gates_x = _recurrence.linear(x, self.weight_ih, self.bias_ih)
            h, c = _recurrence.step(mode, gates_x, h, c, self.weight_hh, self.bias_hh, None)
        if not batched:
            h = h.squeeze(0)
            c = c.squeeze(0) if c is not None else None
        return h, c


class RNNCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        mode = "RNN_TANH" if self.nonlinearity == "tanh" else "RNN_RELU"
        return self._step(mode, input, hx, None)[0]


class LSTMCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input, hx=None):
        h, c = (None, None) if hx is None else hx
        return self._step("LSTM", input, h, c)


class GRUCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input, hx=None):
        return self._step("GRU", input, hx, None)[0]

