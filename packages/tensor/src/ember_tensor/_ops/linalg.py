"""Matrix products. On the CPU they go to BLAS through NumPy (DESIGN.md §2)."""
from .. import _backends
from .. import _dtype as D
from .._dispatch import op
from .._tensor import Tensor
from . import _iter


def _check_matmul_dtypes(a, b, name):
    if a._dtype is not b._dtype:
        raise RuntimeError(
            f"expected m1 and m2 to have the same dtype, but got: {_long_name(a._dtype)} != {_long_name(b._dtype)}")


def _long_name(d):
    return {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
            "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
            "uint8": "unsigned char", "bool": "bool"}[d.name]


def _product(a, b):
    """The matmul of backend arrays with NumPy's (= PyTorch's) batching rules."""
    device = _iter.common_device((a, b))
    backend = _backends.get(device)
    kdtype = _iter.compute_dtype(a._dtype)
    x = a._data if a._dtype is kdtype else backend.astype(a._data, kdtype.np)
    y = b._data if b._dtype is kdtype else backend.astype(b._data, kdtype.np)
    data = backend.matmul(x, y)
    if kdtype is not a._dtype:
        data = backend.astype(data, a._dtype.np)
    return Tensor._wrap(data, a._dtype, device)


@op()
def matmul(input, other, *, out=None):
    """Matrix product with broadcasting over batch dims (1-d operands are vectors)."""
    if input._data.ndim == 0 or other._data.ndim == 0:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are "
            f"{input._data.ndim}D and {other._data.ndim}D")
    _check_matmul_dtypes(input, other, "matmul")
    a_shape, b_shape = input._data.shape, other._data.shape
    k_a = a_shape[-1]
    k_b = b_shape[-2] if len(b_shape) > 1 else b_shape[0]
    if k_a != k_b:
        if len(a_shape) == 1 and len(b_shape) == 1:
            raise RuntimeError(
                f"inconsistent tensor size, expected tensor [{a_shape[0]}] and src [{b_shape[0]}] to have the same "
                "number of elements, but got %d and %d elements respectively" % (a_shape[0], b_shape[0]))
        m = a_shape[-2] if len(a_shape) > 1 else 1
        n = b_shape[-1] if len(b_shape) > 1 else 1
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({m}x{k_a} and {k_b}x{n})")
    result = _product(input, other)
    if out is not None:
        from .elementwise import copy_to_out
        return copy_to_out(result, out)
    return result


@op()
def mm(input, mat2, *, out=None):
    """Product of two matrices."""
    if input._data.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if mat2._data.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    return matmul(input, mat2, out=out)


@op()
def bmm(input, mat2, *, out=None):
    """Batched product of 3-d tensors (b, n, m) @ (b, m, p)."""
    if input._data.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2._data.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if input._data.shape[0] != mat2._data.shape[0]:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: "
            f"[{input._data.shape[0]}, {input._data.shape[2]}] but got: "
            f"[{mat2._data.shape[0]}, {mat2._data.shape[1]}].")
    return matmul(input, mat2, out=out)


@op()
def mv(input, vec, *, out=None):
    """Matrix-vector product."""
    if input._data.ndim != 2 or vec._data.ndim != 1:
        raise RuntimeError(
            f"vector + matrix @ vector expected, got 1, {input._data.ndim}, {vec._data.ndim}")
    return matmul(input, vec, out=out)


@op()
def dot(input, other, *, out=None):
    """Dot product of two 1-d tensors."""
    if input._data.ndim != 1 or other._data.ndim != 1:
        raise RuntimeError(
            f"1D tensors expected, but got {input._data.ndim}D and {other._data.ndim}D tensors")
    if input._dtype is not other._dtype:
        raise RuntimeError(
            f"dot : expected both vectors to have same dtype, but found {_iter.type_name(input._dtype)} "
            f"and {_iter.type_name(other._dtype)}")
    return matmul(input, other, out=out)


inner_product = dot


@op()
def outer(input, vec2, *, out=None):
    """Outer product of two vectors."""
    return matmul(input.reshape(-1, 1), vec2.reshape(1, -1), out=out)


ger = outer


@op()
def addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * (mat1 @ mat2)."""
    prod = mm(mat1, mat2)
    if alpha != 1:
        prod = prod * alpha
    base = input if beta == 1 else input * beta
    if beta == 0:
        base = input * 0
    return (base + prod) if out is None else base.add(prod, out=out)


@op()
def addmv(input, mat, vec, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * (mat @ vec)."""
    prod = mv(mat, vec)
    return (input * beta if beta != 1 else input) + (prod * alpha if alpha != 1 else prod)


@op()
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * (batch1 @ batch2)."""
    prod = bmm(batch1, batch2)
    return (input * beta if beta != 1 else input) + (prod * alpha if alpha != 1 else prod)


@op()
def diag(input, diagonal=0):
    """1-d input: a matrix with it on the `diagonal`-th diagonal; 2-d: that diagonal (a copy)."""
    ndim = input._data.ndim
    if ndim == 1:
        n = input._data.shape[0] + abs(diagonal)
        result = input.new_zeros((n, n))
        result.diagonal(diagonal).copy_(input)
        return result
    if ndim == 2:
        return input.diagonal(diagonal).clone()
    raise RuntimeError("diag(): Supports 1D or 2D tensors. Got %dD" % ndim)


@op()
def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """Matrices (over the last dim) with `input` on their `offset`-th diagonal."""
    n = input._data.shape[-1] + abs(offset)
    result = input.new_zeros(tuple(input._data.shape[:-1]) + (n, n))
    result.diagonal(offset, -2, -1).copy_(input)
    if (dim1, dim2) != (-2, -1):
        result = result.movedim((-2, -1), (dim1, dim2))
    return result


@op()
def trace(input):
    """Sum of the main diagonal of a matrix."""
    if input._data.ndim != 2:
        raise RuntimeError("trace: expected a matrix, but got tensor with dim %d" % input._data.ndim)
    return input.diagonal().sum()
