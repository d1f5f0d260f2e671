"""Marks for the ops whose *backward* PyTorch refuses under
`use_deterministic_algorithms(True)` on CUDA (its atomic-add backward kernels: adaptive
and 3-d average pooling, adaptive/fractional max pooling, interpolate, reflection and
replication padding, grid_sample, CTC, embedding_bag's max).

ember computes most of them as compositions whose gradients are deterministic, but the
contract is PyTorch's: the backward raises its RuntimeError (or warns, with warn_only),
naming the kernel PyTorch names, when it runs on CUDA with the switch on. ember-nn wraps
such an op's result in `nondeterministic_backward`; the derivative rule
(ember_autograd's `_rules.nn`) calls `alert_nondeterministic_backward` as the gradient
passes, so the alert fires when (and only if) the backward runs, as PyTorch's does.
"""
from ..._runtime.determinism import alert_if_atomic
from ..._dispatch import op
from ..views import make_view

__all__ = ["nondeterministic_backward", "alert_nondeterministic_backward"]


@op(view=True)
def nondeterministic_backward(input, caller):
    """`input` itself (a view of it) whose gradient alerts as PyTorch's backward kernel
    `caller` does: see `alert_nondeterministic_backward`."""
    return make_view(input, input._data.shape, input.stride(), input.storage_offset())


def alert_nondeterministic_backward(grad, caller):
    """Alert (`alert_not_deterministic(caller)`) when `grad` is on CUDA, where PyTorch's
    backward kernel `caller` adds with atomics; nothing on the CPU, whose kernels PyTorch
    counts as deterministic."""
    alert_if_atomic(grad, caller)
