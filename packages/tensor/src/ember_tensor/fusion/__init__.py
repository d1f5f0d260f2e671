"""Fused elementwise kernels: the surface ember-compile generates its kernels through.

A *program* is a straight-line chain of ember's built-in scalar functions (the ones its
elementwise ops apply to each element, `_backends.scalar`): ember-compile turns a group
of elementwise nodes of a captured graph into one, and this package makes it one kernel
with ember's one kernel generator — the same loop templates as the built-in ops, the
same executor (contiguous fast path, merged-dims strided loop, parallel above a size
threshold), on the CPU and on CUDA. Each intermediate value is rounded to the compute
dtype as the eager op would store it, so a fused chain gives eager ember's results bit
for bit.

On the CPU the kernel module is written into ember's kernel cache directory, named by a
hash of its source and keyed (like the built-in kernels) by `scalar.py` and the versions,
so Numba caches the compiled loops on disk and a second process pays no compile. On CUDA
the scalar function is compiled in memory once per process, like ``ember.kernel``'s.

A `FusedReduction` is such a program whose values are reduced (sum, mean, amax, amin over
all elements or over dims) as they are computed, in one generated reduction loop: the
program's values are never written to memory (CPU and CUDA). A `FusedSoftmax` is a
program whose values feed softmax or log_softmax along one dim: eager's row kernel reads
them as they are computed (CPU: a block of rows at a time in a small buffer; CUDA: in
the kernel's reads). A `FusedLayerNorm` is a program whose values feed layer norm over
its trailing dims, read the same way by eager's layer norm row kernel.

One private module per family: `_elementwise` (programs: `FusedElementwise`),
`_reduction`, `_softmax`, `_layer_norm`, and `_rows` (what the row prologues share).

Declared for the layers above (they import this module, never ``ember_tensor._backends``).

>>> import ember_tensor as et
>>> from ember_tensor import fusion
>>> prog = fusion.FusedElementwise([("mul", (("in", 0), ("in", 1))), ("relu", (("step", 0),))], 2)
>>> prog(et.tensor([1., -2.]), et.tensor([3., 3.]))
tensor([3., 0.])
"""
# (the arities, UNARY/BINARY/TERNARY, are read by ember-compile's fusion pass)
from ._elementwise import BINARY, COMPARISONS, OPS, TERNARY, UNARY, FusedElementwise  # noqa: F401
from ._layer_norm import FusedLayerNorm
from ._reduction import REDUCTIONS, FusedReduction
from ._softmax import FusedSoftmax

__all__ = ["FusedElementwise", "FusedReduction", "FusedSoftmax", "FusedLayerNorm", "OPS", "COMPARISONS",
           "REDUCTIONS"]
