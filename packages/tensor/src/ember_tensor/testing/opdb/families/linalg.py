"""Linear algebra: matmul, bmm, linalg.inv, det, solve, cholesky and vector_norm.

Square operands are well conditioned (`well_conditioned`), so float32 results stay
within a tolerance a few ulps times the condition number allows."""
import numpy as np

import ember_tensor as et

from ..core import F32
from .info import FamilyOpInfo, O, S, floats, well_conditioned

__all__ = ["LINALG_DB"]


def _ref_vector_norm(x, ord=2, dim=None, keepdim=False):
    a = np.abs(x)
    if ord == np.inf:
        return np.max(a, axis=dim, keepdims=keepdim)
    if ord == -np.inf:
        return np.min(a, axis=dim, keepdims=keepdim)
    if ord == 0:
        return np.sum(a != 0, axis=dim, keepdims=keepdim).astype(x.dtype)
    return np.sum(a ** ord, axis=dim, keepdims=keepdim) ** (1 / ord)


def _ref_cholesky(a, upper=False):
    low = np.linalg.cholesky(a)
    return np.swapaxes(low, -1, -2) if upper else low


def _vector_norm(x, ord=2, dim=None, keepdim=False):
    return et.linalg.vector_norm(x, ord, dim=dim, keepdim=keepdim)


def _matmul_samples(op, dtype, rng):
    def v(*shape, layout="contiguous"):
        return O(floats(shape, dtype, rng), layout)
    yield S(v(3, 4), (v(4, 2),), name="matrices")
    yield S(v(2, 3, 4, layout="transposed"), (v(4, 5),), name="batched by a matrix, transposed")
    yield S(v(2, 1, 3, 4), (v(3, 4, 2, layout="stepped"),), name="broadcast batches, stepped")
    yield S(v(4), (v(4, 3),), name="vector by matrix")
    yield S(v(3, 4), (v(4),), name="matrix by vector")
    yield S(v(4), (v(4),), name="vectors: 0-d result")
    yield S(v(3, 0), (v(0, 2),), name="empty inner dim")
    yield S(v(4), (v(2, 4, 3),), name="vector by batched matrices")
    yield S(v(33, 17), (v(17, 35, layout="transposed"),), name="past a 16/32 tile in every dim")
    yield S(v(2, 3, 4, layout="stepped"), (v(4),), name="batched matrices by a vector")


def _bmm_samples(op, dtype, rng):
    def v(*shape, layout="contiguous"):
        return O(floats(shape, dtype, rng), layout)
    yield S(v(2, 3, 4), (v(2, 4, 5),), name="batches")
    yield S(v(3, 2, 4, layout="transposed"), (v(3, 4, 2, layout="stepped"),), name="transposed, stepped")
    yield S(v(0, 3, 4), (v(0, 4, 2),), name="empty batch")


def _square_samples(spd=False, rhs=False):
    def samples(op, dtype, rng):
        def a(*shape, layout="contiguous"):
            return O(well_conditioned(shape, dtype, rng, spd), layout)

        def b(*shape):
            return (O(floats(shape, dtype, rng)),) if rhs else ()
        yield S(a(3, 3), b(3, 2), name="matrix")
        yield S(a(2, 4, 4), b(2, 4, 1), name="batched")
        yield S(a(3, 3, layout="transposed"), b(3), name="transposed" + (", vector rhs" if rhs else ""))
        yield S(a(1, 1), b(1, 1), name="1x1")
        yield S(a(0, 0), b(0, 2), name="empty")
        yield S(a(2, 2, 3, 3), b(3, 1), name="two batch dims" + (", broadcast rhs" if rhs else ""))
        if spd:
            yield S(a(2, 3, 3, layout="transposed"), kwargs={"upper": True}, name="upper")
    return samples



def _det_samples(op, dtype, rng):
    yield from _square_samples()(op, dtype, rng)
    singular = np.array([[1, 2, 3], [2, 4, 6], [0, 1, 5]], floats((), dtype, rng).dtype)
    yield S(O(singular), name="singular: 0")
    yield S(O(np.array([[0, 1], [1, 0]], singular.dtype)), name="a swap: -1")


def _vector_norm_samples(op, dtype, rng):
    def v(*shape, layout="contiguous"):
        return O(floats(shape, dtype, rng), layout)
    yield S(v(3, 4), name="all, 2-norm")
    yield S(v(4, 3, layout="transposed"), kwargs={"ord": 1, "dim": 0}, name="transposed, 1-norm, dim 0")
    yield S(v(2, 3, 4, layout="stepped"), kwargs={"ord": np.inf, "dim": (0, 2), "keepdim": True},
            name="stepped, inf-norm, two dims, keepdim")
    yield S(v(3, 5), kwargs={"ord": 3, "dim": -1}, name="3-norm")
    yield S(O(np.array([[0, 1.5], [0, 0]]).astype(floats((), dtype, rng).dtype)), kwargs={"ord": 0},
            name="0-norm counts nonzeros")
    yield S(v(), name="0-d")
    yield S(v(0, 3), kwargs={"dim": 1}, name="empty")
    inf = np.array([[np.inf, 1.0, -2.0], [0.5, -np.inf, 0.0]]).astype(floats((), dtype, rng).dtype)
    for ord in (2, 1, np.inf, -np.inf, 0):
        yield S(O(inf), kwargs={"ord": ord, "dim": 1}, name=f"inf, {ord}-norm")


# Inverting, factoring and solving lose about cond(A) ulps: float32 needs more than a sum.
_SOLVER_TOL = {F32: (1e-4, 1e-5)}
# inv, solve and cholesky read back the factorisation's info flag on CUDA, to raise the
# CPU's error for a singular (or not positive-definite) matrix, as PyTorch's do.
_INFO = {"tol": _SOLVER_TOL, "reads_scalars": True}
LINALG_DB = [
    FamilyOpInfo("matmul", "linalg", et.matmul, np.matmul, sample_inputs_func=_matmul_samples),
    FamilyOpInfo("bmm", "linalg", et.bmm, np.matmul, sample_inputs_func=_bmm_samples),
    FamilyOpInfo("linalg.inv", "linalg", et.linalg.inv, np.linalg.inv, sample_inputs_func=_square_samples(), **_INFO),
    FamilyOpInfo("linalg.det", "linalg", et.linalg.det, np.linalg.det, sample_inputs_func=_det_samples,
                 tol=_SOLVER_TOL),
    FamilyOpInfo("linalg.solve", "linalg", et.linalg.solve, np.linalg.solve,
                 sample_inputs_func=_square_samples(rhs=True), **_INFO),
    FamilyOpInfo("linalg.cholesky", "linalg", et.linalg.cholesky, _ref_cholesky,
                 sample_inputs_func=_square_samples(spd=True), **_INFO),
    FamilyOpInfo("linalg.vector_norm", "linalg", _vector_norm, _ref_vector_norm,
                 sample_inputs_func=_vector_norm_samples),
]
