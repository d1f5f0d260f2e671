"""Complex-number ops: building complex tensors (`complex`, `polar`), conjugation, phase
(`angle`), `sgn`, and the predicates (`is_complex`, `isreal`).

Conjugation is eager: `conj` returns a new tensor holding the conjugated values (PyTorch
returns a lazy view with a conjugate bit instead), so `is_conj` is always False and
`resolve_conj` has nothing to do. The values are PyTorch's either way; what differs is
that writing into ``z.conj()`` does not change ``z``. Real tensors are their own
conjugates: `conj` returns the input itself, as in PyTorch.
"""
import math

from ... import _dtype as D
from ..._dispatch import op
from .. import _iter
from .arithmetic import _REAL, _SAME, _not_implemented, binary, copy_to_out, mul, unary
from .pointwise import sign, sign_

__all__ = ["complex", "polar", "conj", "conj_physical", "conj_physical_", "angle", "sgn", "sgn_", "isreal",
           "is_complex", "adjoint"]

_FLOATING_PARTS = (D.float16, D.float32, D.float64)


def _check_parts(a, b):
    """complex/polar take two float16/32/64 tensors of one dtype (PyTorch's errors)."""
    if a._dtype not in _FLOATING_PARTS or b._dtype not in _FLOATING_PARTS:
        raise RuntimeError(
            "Expected both inputs to be Half, Float or Double tensors but got "
            f"{_iter.type_name(a._dtype)} and {_iter.type_name(b._dtype)}")
    if a._dtype is not b._dtype:
        raise RuntimeError(
            f"Expected object of scalar type {_iter.type_name(a._dtype)} but got scalar type "
            f"{_iter.type_name(b._dtype)} for second argument")


@op()
def complex(real, imag, *, out=None):  # noqa: A001 - PyTorch's name
    """The complex tensor ``real + imag * 1j`` (broadcasting) from two float tensors.

    >>> import ember_tensor as torch
    >>> torch.complex(torch.tensor([1., 2.]), torch.tensor([3., 4.]))
    tensor([1.+3.j, 2.+4.j])
    """
    _check_parts(real, imag)
    result = binary("add", real.to(real._dtype.to_complex()), mul(imag, 1j))
    return copy_to_out(result, out)


@op()
def polar(abs, angle, *, out=None):  # noqa: A002 - PyTorch's names
    """The complex tensor with magnitude `abs` and phase `angle`: ``abs * (cos + i sin)(angle)``.

    >>> import ember_tensor as torch
    >>> torch.polar(torch.tensor([2.]), torch.tensor([0.]))
    tensor([2.+0.j])
    """
    _check_parts(abs, angle)
    return copy_to_out(complex(abs * angle.cos(), abs * angle.sin()), out)


@op()
def conj(input):
    """The complex conjugate (a new tensor: ember's conjugation is eager); a real tensor
    is returned as it is.

    >>> import ember_tensor as torch
    >>> torch.tensor([1 + 2j]).conj()
    tensor([1.-2.j])
    """
    if input._dtype.category != D._COMPLEX:
        return input
    return unary("conj", input)


@op()
def conj_physical(input, *, out=None):
    """The complex conjugate, computed into new memory (the input itself for real dtypes
    without ``out=``)."""
    if input._dtype.category != D._COMPLEX:
        return input if out is None else copy_to_out(input, out)
    return unary("conj", input, out)


@op("conj_physical_", inplace=True)
def conj_physical_(self):
    """In-place `conj_physical` (nothing to do for real dtypes)."""
    if self._dtype.category != D._COMPLEX:
        return self
    return unary("conj", self, inplace=True)


@op()
def angle(input, *, out=None):
    """The phase of each element, in radians: atan2(imag, real) for complex tensors (a
    real result), and pi for negative real numbers, 0 otherwise (NaN stays NaN).

    >>> import ember_tensor as torch
    >>> torch.angle(torch.tensor([-1., 2.]))
    tensor([3.1416, 0.0000])
    """
    if input._dtype.category == D._COMPLEX:
        return unary("angle", input, out, _REAL)
    if input._dtype is D.bool:
        raise _not_implemented("angle_cpu", input._dtype, input)
    floating = input if input._dtype.category == D._FLOAT else input.to(D.get_default_dtype())
    # pi where negative, NaN kept: NaN * 0 stays NaN.
    result = (floating < 0).to(floating._dtype) * math.pi + floating * 0
    return copy_to_out(result, out)


@op()
def sgn(input, *, out=None):
    """The sign of each element: ``z / |z|`` (0 at 0) for complex tensors, `sign` for real ones.

    >>> import ember_tensor as torch
    >>> torch.sgn(torch.tensor([3 + 4j, 0j]))
    tensor([0.6000+0.8000j, 0.0000+0.0000j])
    """
    if input._dtype.category == D._COMPLEX:
        return unary("sgn", input, out, _SAME)
    return sign(input, out=out)


@op("sgn_", inplace=True)
def sgn_(self):
    """In-place `sgn`."""
    if self._dtype.category == D._COMPLEX:
        return unary("sgn", self, inplace=True)
    return sign_(self)


def isreal(input):
    """Bool tensor: True where the imaginary part is 0 (everywhere for real tensors).

    >>> import ember_tensor as torch
    >>> torch.isreal(torch.tensor([1 + 0j, 1j]))
    tensor([ True, False])
    """
    if input._dtype.category != D._COMPLEX:
        return input.new_ones(input.shape, dtype=D.bool)
    return input.imag == 0


def is_complex(input):
    """Whether `input` has a complex dtype.

    >>> import ember_tensor as torch
    >>> torch.is_complex(torch.tensor([1j])), torch.is_complex(torch.tensor([1.]))
    (True, False)
    """
    return input._dtype.category == D._COMPLEX


def adjoint(input):
    """The conjugate transpose of the last two dims (a view for real tensors; ember's
    eager `conj` makes it a copy for complex ones)."""
    if input.dim() < 2:
        raise RuntimeError("tensor.adjoint() is only supported on matrices or batches of matrices. "
                           f"Got {input.dim()}-D tensor.")
    return conj(input.transpose(-2, -1))
