"""hardtanh (and through it relu6): x clamped to [min_val, max_val], as its own operator.

Its values are clamp's (the existing maximum/minimum kernels, so no new specialisation):
an input equal to a limit comes back itself, keeping the sign of -0.0 as PyTorch does, and
NaN stays NaN. It is an operator and not a composite because its gradient is not clamp's:
PyTorch's hardtanh_backward passes no gradient at the limits themselves (clamp passes it)
and passes it at NaN (clamp does not). The rule lives in `ember_autograd._rules.nn`.
"""
from ... import _dtype as D
from ..._dispatch import op
from ..elementwise import clamp

__all__ = ["hardtanh", "hardtanh_"]


def _limits(input, min_val, max_val):
    """The limits in `input`'s dtype, as PyTorch casts its Scalars (an integer tensor
    truncates a float limit: hardtanh(int tensor, -1.5, 1.5) clamps to [-1, 1])."""
    if input._dtype == D.bool:
        raise RuntimeError("Bool inputs not supported for hardtanh")
    if input._dtype.is_complex:
        raise NotImplementedError("clamp is not supported for complex types")
    if input._dtype.category == D._FLOAT:
        return float(min_val), float(max_val)
    if input._dtype == D.uint8 and (min_val < 0 or max_val < 0):
        raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
    return int(min_val), int(max_val)


@op()
def hardtanh(input, min_val=-1.0, max_val=1.0):
    """`input` clamped to [min_val, max_val], with PyTorch's gradient: none at the limits.

    >>> import ember_tensor as torch
    >>> from ember_tensor import nn_ops
    >>> nn_ops.hardtanh(torch.tensor([-0.0, -2.0, 0.5, 3.0])).tolist()
    [-0.0, -1.0, 0.5, 1.0]
    """
    lo, hi = _limits(input, min_val, max_val)
    return clamp(input, lo, hi)


@op("hardtanh_", inplace=True)
def hardtanh_(self, min_val=-1.0, max_val=1.0):
    """In-place `hardtanh`."""
    lo, hi = _limits(self, min_val, max_val)
    return self.copy_(clamp(self, lo, hi))
