"""Matrix products. On the CPU they go to BLAS through NumPy (DESIGN.md §2), on CUDA to
cuBLAS. Products built from others (vdot, addbmm, kron, cross, matrix_power) are
composites, differentiated through the ops they call."""
import math

import numpy as np

from ... import _backends
from ..._dispatch import op
from ..._tensor import Tensor
from .. import _iter
from ..elementwise import conj

_wrap = Tensor._wrap


def _dtype_mismatch(a, b):
    """PyTorch's error for the operands of a product with different dtypes."""
    return RuntimeError(
        f"expected m1 and m2 to have the same dtype, but got: {_long_name(a._dtype)} != {_long_name(b._dtype)}")


def _long_name(d):
    return {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
            "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
            "uint8": "unsigned char", "bool": "bool"}[d.name]


@op()
def matmul(input, other, *, out=None):
    """Matrix product with broadcasting over batch dims (1-d operands are vectors)."""
    return _matmul(input, other, out)


def _matmul(input, other, out):
    # matmul's body, which mm and bmm run after their own checks: they call it, not the
    # `matmul` op, so that a small product is dispatched (and recorded) once.
    # A sparse tensor is a subclass: a plain Tensor needs no `is_sparse` property call.
    if (input.__class__ is not Tensor and input.is_sparse) or (other.__class__ is not Tensor and other.is_sparse):
        # A sparse COO operand brings its own product (`sparse.matmul_with_sparse`): the
        # sparse package stands above the dense ops and registers it on its tensor class.
        result = (input if input.is_sparse else other)._sparse_product(input, other)
        if out is None:
            return result
        from ..elementwise import copy_to_out
        return copy_to_out(result, out)
    a_shape, b_shape = input._data.shape, other._data.shape
    if not a_shape or not b_shape:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are "
            f"{len(a_shape)}D and {len(b_shape)}D")
    if input._dtype is not other._dtype:
        raise _dtype_mismatch(input, other)
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
    if len(a_shape) > 2 or len(b_shape) > 2:
        # PyTorch's broadcasting error for batch dims that do not broadcast.
        _iter.broadcast_shapes(tuple(a_shape[:-2]), tuple(b_shape[:-2]) if len(b_shape) > 1 else ())
    # The product of the arrays with NumPy's (= PyTorch's) batching rules, here rather than
    # in a function of its own: a small product pays for every frame.
    device = input._device if input._device is other._device else _iter.common_device((input, other))
    backend = _backends.get(device)
    # Each backend multiplies float16/bfloat16 its own way (float32 math on the CPU,
    # cuBLAS accumulating in float32 on CUDA); the result comes back in input's dtype.
    x, y = input._data, other._data
    if len(a_shape) > 2 and len(b_shape) == 2:
        # (..., n, k) @ (k, m) is one GEMM of (batch * n, k) @ (k, m): BLAS runs it far
        # better than one small call per matrix (a Linear layer on a sequence, say). A
        # strided x (a transposed sequence, as attention's projections read it) is copied
        # first: the copy reads each element once, the GEMM m times.
        if not backend.storage.is_contiguous(x):
            x = backend.storage.contiguous(x)
        # (rows counted, not -1: an empty inner dim leaves nothing to infer them from)
        data = backend.matmul.matmul(x.reshape(math.prod(a_shape[:-1]), k_a), y).reshape(
            tuple(a_shape[:-1]) + (b_shape[-1],))
    else:
        data = backend.matmul.matmul(x, y)
    if data.__class__ is not np.ndarray and isinstance(data, np.generic):
        data = np.asarray(data)  # NumPy returns a scalar for vector @ vector: keep an array
    dtype = input._dtype
    if data.dtype is not dtype.np and data.dtype != dtype.np:
        data = backend.storage.astype(data, dtype.np)
    result = _wrap(data, dtype, device)
    if out is not None:
        from ..elementwise import copy_to_out
        return copy_to_out(result, out)
    return result


@op()
def mm(input, mat2, *, out=None):
    """Product of two matrices."""
    if input._data.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if mat2._data.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    return _matmul(input, mat2, out)


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
    return _matmul(input, mat2, out)


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
    """Outer product of two vectors.

    A broadcast product, as PyTorch's (input[:, None] * vec2): operands of different
    dtypes promote, where a matmul would refuse them.
    """
    for name, vector in (("self", input), ("vec2", vec2)):
        if vector.dim() != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {vector.dim()}-D")
    result = input.reshape(-1, 1) * vec2.reshape(1, -1)
    if out is not None:
        from ..elementwise import copy_to_out
        return copy_to_out(result, out)
    return result


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


@op()
def vdot(input, other, *, out=None):
    """Dot product of two 1-d tensors (the first conjugated: the same for real dtypes)."""
    if input._data.ndim != 1 or other._data.ndim != 1:
        raise RuntimeError(
            f"1D tensors expected, but got {input._data.ndim}D and {other._data.ndim}D tensors")
    if input._dtype is not other._dtype:
        raise RuntimeError(
            f"vdot : expected both vectors to have same dtype, but found {_iter.type_name(input._dtype)} "
            f"and {_iter.type_name(other._dtype)}")
    if input.is_complex():
        input = conj(input)
    return dot(input, other, out=out)


@op()
def addbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * sum_i(batch1[i] @ batch2[i])."""
    prod = bmm(batch1, batch2).sum(0)
    if alpha != 1:
        prod = prod * alpha
    base = input * 0 if beta == 0 else (input if beta == 1 else input * beta)
    result = base + prod
    if out is not None:
        from ..elementwise import copy_to_out
        return copy_to_out(result, out)
    return result


@op()
def kron(input, other, *, out=None):
    """Kronecker product: blocks input[i, j] * other, for tensors of any rank."""
    ndim = max(input.dim(), other.dim())
    a = input.reshape((1,) * (ndim - input.dim()) + tuple(input.shape))
    b = other.reshape((1,) * (ndim - other.dim()) + tuple(other.shape))
    # (a0, 1, a1, 1, ...) * (1, b0, 1, b1, ...) -> (a0, b0, a1, b1, ...) -> (a0*b0, a1*b1, ...)
    a_shape, b_shape = [], []
    for n, m in zip(a.shape, b.shape):
        a_shape += [n, 1]
        b_shape += [1, m]
    result = (a.reshape(a_shape) * b.reshape(b_shape)).reshape([n * m for n, m in zip(a.shape, b.shape)])
    if out is not None:
        from ..elementwise import copy_to_out
        return copy_to_out(result, out)
    return result


def _cross_dim(a, b, dim, name):
    shape = _iter.broadcast_shapes(tuple(a.shape), tuple(b.shape))
    if dim is None:
        dim = next((d for d, n in enumerate(shape) if n == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    from ..._tensor import wrap_dim
    d = wrap_dim(dim, len(shape))
    sizes = [t.shape[d - len(shape) + t.dim()] if d - len(shape) + t.dim() >= 0 else 1 for t in (a, b)]
    if sizes != [3, 3]:
        raise RuntimeError(f"{name}: inputs dimension {dim} must have length 3. Got {sizes[0]} and {sizes[1]}")
    return shape, d


@op()
def cross(input, other, dim=None, *, out=None):
    """Cross product of 3-vectors along `dim` (default: the first dim of size 3)."""
    shape, d = _cross_dim(input, other, dim, "linalg.cross")
    if input._dtype is not other._dtype:  # PyTorch's cross does not promote
        raise RuntimeError(f"expected scalar type {_iter.type_name(input._dtype)} but found "
                           f"{_iter.type_name(other._dtype)}")
    a, b = input.expand(shape), other.expand(shape)
    # c_i = a_{i+1} b_{i+2} - a_{i+2} b_{i+1}, indices mod 3: rolls line them up.
    result = a.roll(-1, d) * b.roll(-2, d) - a.roll(-2, d) * b.roll(-1, d)
    if out is not None:
        from ..elementwise import copy_to_out
        return copy_to_out(result, out)
    return result


@op()
def matrix_power(input, n, *, out=None):
    """The `n`-th power of each square matrix (n < 0: of its inverse), by repeated squaring."""
    from . import lapack
    if input.dim() < 2:
        raise RuntimeError("linalg.matrix_power: The input tensor A must have at least 2 dimensions.")
    m, k = input.shape[-2:]
    if m != k:
        raise RuntimeError(f"linalg.matrix_power: A must be batches of square matrices, but they are {m} by {k} "
                           "matrices")
    if n == 0:
        from ..creation import eye
        # Written over a copy of the input, as PyTorch does: the identity then carries the
        # input's requires_grad (with a zero gradient), not a detached constant.
        result = input.clone().copy_(eye(m, dtype=input.dtype, device=input.device).expand(input.shape))
    else:
        if n < 0:
            lapack.check_float(input, "linalg.inv")
            from .decompositions import inv
            input, n = inv(input), -n
        result, power = None, input
        while n:
            if n & 1:
                result = power.clone() if result is None else matmul(result, power)
            n >>= 1
            if n:
                power = matmul(power, power)
    if out is not None:
        from ..elementwise import copy_to_out
        return copy_to_out(result, out)
    return result


@op()
def inner(input, other, *, out=None):
    """Sums of products over the last dims: shape ``input.shape[:-1] + other.shape[:-1]``."""
    if input.dim() == 0 or other.dim() == 0:
        result = input * other
    else:
        if input.shape[-1] != other.shape[-1]:
            raise RuntimeError(f"inner() the last dimension must match on both input tensors but got shapes "
                               f"{list(input.shape)} and {list(other.shape)}")
        from ..einsum import tensordot
        result = tensordot(input, other, ([input.dim() - 1], [other.dim() - 1]))
    if out is not None:
        from ..elementwise import copy_to_out
        return copy_to_out(result, out)
    return result


@op()
def addr(input, vec1, vec2, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * outer(vec1, vec2)."""
    prod = outer(vec1, vec2)
    if alpha != 1:
        prod = prod * alpha
    base = input * 0 if beta == 0 else (input if beta == 1 else input * beta)
    result = base + prod
    if out is not None:
        from ..elementwise import copy_to_out
        return copy_to_out(result, out)
    return result


# Pade(13) coefficients of exp (Higham 2005, "The scaling and squaring method for the matrix
# exponential revisited"), with the 1-norm bound up to which they are accurate in float64.
_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
           129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
           40840800.0, 960960.0, 16380.0, 182.0, 1.0)
_PADE13_THETA = 5.371920351148152


@op("linalg_matrix_exp")
def matrix_exp(input):
    """exp of each square matrix, by scaling and squaring with a Pade(13) approximant.

    Built from matmul and solve, so autograd differentiates it through those.
    """
    import math
    from . import lapack
    from .decompositions import solve
    from .norms import matrix_norm
    lapack.check_square(input, "linalg.matrix_exp")
    n = input.shape[-1]
    if input.numel() == 0:
        return input.clone()
    norm = float(matrix_norm(input.detach(), 1).amax().item())
    squarings = max(0, math.ceil(math.log2(norm / _PADE13_THETA))) if norm > 0 else 0
    A = input / (2.0 ** squarings) if squarings else input
    from ..creation import eye
    identity = eye(n, dtype=input.dtype, device=input.device)
    b = _PADE13
    A2 = matmul(A, A)
    A4 = matmul(A2, A2)
    A6 = matmul(A4, A2)
    U = matmul(A, matmul(A6, b[13] * A6 + b[11] * A4 + b[9] * A2) + b[7] * A6 + b[5] * A4 + b[3] * A2
               + b[1] * identity)
    V = matmul(A6, b[12] * A6 + b[10] * A4 + b[8] * A2) + b[6] * A6 + b[4] * A4 + b[2] * A2 + b[0] * identity
    result = solve(V - U, V + U)
    for _ in range(squarings):
        result = matmul(result, result)
    return result
