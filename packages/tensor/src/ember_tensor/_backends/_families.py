"""The families of backend functions: the modules every backend has, with one name each.

An op in `_ops/<family>.py` calls ``backends.get(device).<family>.<function>(arrays...)``;
`tests/test_backend_symmetry.py` holds every backend to the same families and function
names, and `GAPS` declares where a backend lacks a function (the op raises a clear
error there, never a silent trip through the host).
"""

__all__ = ["FAMILIES", "GAPS"]

FAMILIES = (
    "storage",      # allocation, views, copies, dtype conversion, host transfer
    "elementwise",  # unary, binary, ternary loops
    "reduction",    # sum/mean/prod/..., arg max/min, var_mean, median
    "matmul",       # matrix products (BLAS, cuBLAS), the linear layer's x @ W^T + b
    "sorting",      # sort, argsort, top-k, k-th value, nanmedian, mode along a dim
    "conv",         # convolution forward and its two backward products (im2col + GEMM)
    "pooling",      # max/avg/adaptive pooling, their backward passes, max_unpool
    "indexing",     # advanced indexing reads/writes, index arrays, nonzero, flip, repeat index
    "scatter",      # gather and scatter (with its reductions) along a dim
    "softmax",      # softmax and log_softmax along a dim
    "loss",         # the negative log-likelihood loss and its backward
    "rnn",          # recurrent layers (LSTM, GRU, Elman RNN) over a sequence, forward and backward
    "normalization",  # batch, layer and group norm and their backward
    "optim",        # fused optimizer steps (SGD, Adam/AdamW, Adagrad)
    "sampling",     # embedding and embedding_bag (and backward), one_hot, constant padding, unfold/fold
    "linalg",       # LU/Cholesky solvers and determinants; qr, svd, eigh, eig, pinv, rank, lstsq, LU, LDL
    "scans",        # running sums/products, running max/min, logcumsumexp along a dim
    "counting",     # unique, searchsorted, histc, bincount (and the numbers they read back)
    "random",       # samplers drawing from a generator's stream, parameter checks
    "sparse",       # sparse COO kernels: coalescing, sparse x dense products, sampled dot products
    "custom",       # ember.kernel / raw_kernel / reduce_kernel: user functions compiled and launched
    "fft",          # discrete Fourier transforms: complex-to-complex, real-to-complex, complex-to-real
)

# The linalg functions that no device kernel computes on CUDA yet.
_HOST_LAPACK = ("no cuSOLVER binding yet (nor device Jacobi SVD / eigh kernels): the op computes it "
                "through the host, on the CPU backend, and moves the results to the tensor's device")

# The recurrent layers have no CUDA kernels yet: ember-nn asks `nn_ops.fused_rnn_available`
# and runs its composition of ops (one graph node per op) there.
_NO_CUDA_RNN = ("no fused CUDA recurrence yet: ember-nn's RNN/LSTM/GRU run their composition of "
                "ops on CUDA (nn_ops.fused_rnn_available says False)")

# {(family, function): {device type that lacks it: why}}. The op that would call a missing
# function raises its own clear error first (PyTorch's, where it has one).
GAPS = {
    ("optim", "adagrad"): {
        "cuda": "PyTorch has no fused Adagrad on CUDA: _fused_adagrad_ raises NotImplementedError, as PyTorch does"},
    ("storage", "cuda_array_interface"): {
        "cpu": "a CPU tensor has no __cuda_array_interface__ (Tensor raises AttributeError, as PyTorch does)"},
    ("storage", "pinned_empty"): {
        "cpu": "pinned host memory is allocated by the CUDA driver: pin_memory() asks the CUDA backend"},
    ("storage", "is_pinned"): {
        "cpu": "pinned host memory is allocated by the CUDA driver: is_pinned() asks the CUDA backend"},
    **{("linalg", name): {"cuda": _HOST_LAPACK}
       for name in ("qr", "svd", "eigh", "pinv", "matrix_rank", "lstsq", "eig", "eigvals", "lu_factor",
                    "lu_pivots_to_permutation", "geqrf", "ldl_factor", "ldl_solve")},
    **{("rnn", name): {"cuda": _NO_CUDA_RNN}
       for name in ("lstm_forward", "lstm_backward", "gru_forward", "gru_backward", "rnn_forward",
                    "rnn_backward")},
}
