"""CUDA recurrent layers: none yet (declared gaps, `_families.GAPS`).

ember-nn's RNN, LSTM and GRU run their composition of ops on CUDA tensors (a recurrent
GEMM and elementwise ops per step); `nn_ops.fused_rnn_available` tells it so.
"""

__all__ = []
