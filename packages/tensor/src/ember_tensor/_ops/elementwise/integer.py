"""Integer-only elementwise ops: gcd and lcm.

Their scalar functions live in `_backends/scalar.py` (Euclid's algorithm, staged to the
CPU and CUDA like every elementwise kernel). PyTorch's rules: both operands are tensors,
integer dtypes only (bool and floats raise its dispatch error), the result has the
promoted integer dtype, and results wrap in that dtype's width as in C.
"""
from ... import _dtype as D
from ..._dispatch import op
from ..._tensor import Tensor
from .arithmetic import _reject_dtypes, binary

__all__ = ["gcd", "gcd_", "lcm", "lcm_"]

_NOT_INTEGER = (D.float16, D.bfloat16, D.float32, D.float64, D.bool)


def _check(name, input, other):
    if not isinstance(other, Tensor):
        raise TypeError(f"{name}(): argument 'other' (position 2) must be Tensor, not {type(other).__name__}")
    _reject_dtypes(f"{name}_cpu", D.result_type_of((input, other)), _NOT_INTEGER, input, other)


@op()
def gcd(input, other, *, out=None):
    """The greatest common divisor of each pair of integers (non-negative; gcd(0, 0) = 0).

    >>> import ember_tensor as torch
    >>> torch.gcd(torch.tensor([4, -6, 0]), torch.tensor([6, 9, 5])).tolist()
    [2, 3, 5]
    """
    _check("gcd", input, other)
    return binary("gcd", input, other, out)


@op("gcd_", inplace=True)
def gcd_(self, other):
    """In-place `gcd`."""
    _check("gcd", self, other)
    return binary("gcd", self, other, inplace=True)


@op()
def lcm(input, other, *, out=None):
    """The least common multiple of each pair of integers (non-negative; 0 if either is 0).

    >>> import ember_tensor as torch
    >>> torch.lcm(torch.tensor([4, -6, 0]), torch.tensor([6, 9, 5])).tolist()
    [12, 18, 0]
    """
    _check("lcm", input, other)
    return binary("lcm", input, other, out)


@op("lcm_", inplace=True)
def lcm_(self, other):
    """In-place `lcm`."""
    _check("lcm", self, other)
    return binary("lcm", self, other, inplace=True)
