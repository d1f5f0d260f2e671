"""Sparse COO tensors: to_sparse / to_dense, coalesce, sparse.mm, sparse.addmm and sparse.sum.

Results are compared as dense tensors or as a coalesced tensor's (indices, values), so
the generic tests need no sparse comparison; dense operands are drawn with about half
their elements zero, so a sparse one has something to leave out."""
import numpy as np

import ember_tensor as et

from ..core import F32, F64, I64
from .info import FamilyOpInfo, O, S, floats, ints

__all__ = ["SPARSE_DB"]


def _with_zeros(shape, dtype, rng):
    v = floats(shape, dtype, rng)
    return np.where(rng.random(shape) < 0.5, np.zeros((), v.dtype), v).astype(v.dtype)


# --- references ---------------------------------------------------------------------------


def _dense_of(indices, values, size):
    """The dense tensor a COO (indices, values) of `size` stands for: duplicates add up."""
    out = np.zeros(tuple(size) + values.shape[1:])
    np.add.at(out, tuple(indices), values)
    return out


def _ref_round_trip(x, sparse_dim=None):
    # A coalesced tensor lists its nonzeros in row-major order, as np.nonzero does; a hybrid
    # one (sparse_dim < ndim) each slice over its sparse dims that holds a nonzero.
    sparse_dim = x.ndim if sparse_dim is None else sparse_dim
    present = (x != 0).any(axis=tuple(range(sparse_dim, x.ndim)))
    if not sparse_dim:
        nnz = int(present)
        return np.zeros((0, nnz), np.int64), x[None][:nnz], x
    where = np.nonzero(present)
    return np.array(where, np.int64).reshape(sparse_dim, -1), x[where], x


def _ref_to_dense(indices, values, size=None):
    if size is None:  # inferred: one past the largest index of each sparse dim, then the dense dims
        size = tuple(indices.max(axis=1) + 1) + values.shape[1:]
    if not indices.shape[0]:  # no sparse dims: every entry is the whole tensor, and they add up
        return values.sum(axis=0)
    return _dense_of(indices, values, size[:indices.shape[0]])


def _ref_coalesce(indices, values, size):
    if not indices.shape[1]:
        return indices, values
    keys, inverse = np.unique(indices.T, axis=0, return_inverse=True)
    sums = np.zeros((len(keys),) + values.shape[1:])  # a hybrid tensor's values have dense dims
    np.add.at(sums, inverse.reshape(-1), values)
    return keys.T.astype(np.int64), sums


def _ref_sparse_sum(*operands, dim=None, size=None):
    x = operands[0] if size is None else _dense_of(operands[0], operands[1], size)
    return np.sum(x, axis=dim)


def _ref_sparse_mm(*operands, size=None, by_its_transpose=False):
    a = operands[0] if size is None else _dense_of(operands[0], operands[1], size)
    return a @ a.T if by_its_transpose else a @ operands[-1]


def _ref_sparse_addmm(bias, *operands, size=None, beta=1, alpha=1):
    return beta * bias + alpha * _ref_sparse_mm(*operands, size=size)


# --- the ops ------------------------------------------------------------------------------


def _round_trip(x, sparse_dim=None):
    s = x.to_sparse() if sparse_dim is None else x.to_sparse(sparse_dim)
    return s.indices(), s.values(), s.to_dense()


def _to_dense(indices, values, size=None):
    s = et.sparse_coo_tensor(indices, values) if size is None else et.sparse_coo_tensor(indices, values, size)
    return s.to_dense()


def _coalesce(indices, values, size):
    c = et.sparse_coo_tensor(indices, values, size).coalesce()
    return c.indices(), c.values()


def _sparse_operand(operands, size):
    """A dense operand made sparse, or (indices, values) of `size` as an uncoalesced
    tensor (duplicates left in)."""
    if size is None:
        return operands[0].to_sparse()
    return et.sparse_coo_tensor(operands[0], operands[1], size)


def _sparse_mm(*operands, size=None, by_its_transpose=False):
    s = _sparse_operand(operands, size)
    if by_its_transpose:  # a sparse product of two sparse operands
        product = et.sparse.mm(s, s.t())
        return product.to_dense() if product.is_sparse else product
    return et.sparse.mm(s, operands[-1])


def _sparse_addmm(bias, *operands, size=None, beta=1, alpha=1):
    return et.sparse.addmm(bias, _sparse_operand(operands, size), operands[-1], beta=beta, alpha=alpha)


def _sparse_sum(*operands, dim=None, size=None):
    x = _sparse_operand(operands, size)
    s = et.sparse.sum(x) if dim is None else et.sparse.sum(x, dim)
    return s.to_dense() if s.is_sparse else s


# --- samples ------------------------------------------------------------------------------


def _round_trip_samples(op, dtype, rng):
    yield S(O(_with_zeros((3, 4), dtype, rng)), name="matrix")
    yield S(O(_with_zeros((4, 3), dtype, rng), "transposed"), name="transposed")
    yield S(O(_with_zeros((2, 3, 4), dtype, rng), "stepped"), name="3-d, stepped")
    yield S(O(np.array(2.5, _with_zeros((), dtype, rng).dtype)), name="0-d")
    yield S(O(_with_zeros((0, 3), dtype, rng)), name="empty")
    yield S(O(np.zeros((2, 3), _with_zeros((), dtype, rng).dtype)), name="all zeros")
    yield S(O(_with_zeros((3, 4), dtype, rng), "transposed"), kwargs={"sparse_dim": 1}, name="hybrid, transposed")
    yield S(O(_with_zeros((2, 3, 2), dtype, rng)), kwargs={"sparse_dim": 2}, name="hybrid 3-d")
    yield S(O(_with_zeros((4,), dtype, rng)), kwargs={"sparse_dim": 0}, name="no sparse dims")
    yield S(O(np.zeros((2, 2), _with_zeros((), dtype, rng).dtype)), kwargs={"sparse_dim": 0},
            name="no sparse dims, all zeros")
    yield S(O(np.zeros((), _with_zeros((), dtype, rng).dtype)), name="0-d zero")


# Six entries at three places of a (3, 4) matrix, unsorted.
_DUPLICATES = np.array([[1, 0, 1, 2, 0, 1], [2, 1, 2, 0, 1, 2]])


def _coalesce_samples(op, dtype, rng):
    yield S(O(_DUPLICATES), (O(floats((6,), dtype, rng)),), {"size": (3, 4)}, name="duplicates, unsorted")
    yield S(O(ints((2, 7), 3, rng), "transposed"), (O(floats((7,), dtype, rng), "stepped"),), {"size": (3, 3)},
            name="transposed indices, stepped values")
    yield S(O(np.zeros((2, 0), np.int64)), (O(floats((0,), dtype, rng)),), {"size": (2, 2)}, name="empty")
    yield S(O(np.array([[1, 0, 1, 1], [0, 2, 0, 0], [3, 1, 3, 0]])), (O(floats((4,), dtype, rng)),),
            {"size": (2, 3, 4)}, name="three sparse dims")
    yield S(O(_DUPLICATES), (O(floats((6, 2), dtype, rng), "transposed"),), {"size": (3, 4, 2)},
            name="hybrid: values with a dense dim")
    # Past one CUDA block of keys: the sort merges across blocks.
    yield S(O(ints((3, 40), 3, rng)), (O(floats((40,), dtype, rng)),), {"size": (3, 3, 3)}, name="40 entries")


def _to_dense_samples(op, dtype, rng):
    yield S(O(_DUPLICATES), (O(floats((6,), dtype, rng), "stepped"),), {"size": (3, 4)}, name="duplicates")
    yield S(O(_DUPLICATES, "transposed"), (O(floats((6, 2), dtype, rng)),), {"size": (3, 4, 2)},
            name="hybrid, transposed indices")
    yield S(O(np.array([[2, 0, 1]])), (O(floats((3, 2), dtype, rng)),), name="size inferred, hybrid")
    yield S(O(ints((2, 40), 5, rng)), (O(floats((40,), dtype, rng)),), name="size inferred from 40 entries")
    yield S(O(np.zeros((0, 2), np.int64)), (O(floats((2, 2, 3), dtype, rng)),), {"size": (2, 3)},
            name="no sparse dims: duplicates add up")
    yield S(O(np.zeros((0, 2), np.int64)), (O(floats((2,), dtype, rng)),), {"size": ()}, name="0-d")
    yield S(O(np.zeros((2, 0), np.int64)), (O(floats((0,), dtype, rng)),), {"size": (0, 3)}, name="empty")


def _addmm_samples(op, dtype, rng):
    yield S(O(floats((3, 2), dtype, rng)), (O(_with_zeros((3, 4), dtype, rng)), O(floats((4, 2), dtype, rng),
                                                                                   "transposed")),
            {"beta": 0.5, "alpha": 2.0}, name="beta and alpha, transposed dense")
    yield S(O(floats((3, 2), dtype, rng), "stepped"), (O(_DUPLICATES), O(floats((6,), dtype, rng)),
                                                       O(floats((4, 2), dtype, rng))),
            {"size": (3, 4)}, name="uncoalesced, stepped bias")
    yield S(O(floats((0, 2), dtype, rng)), (O(_with_zeros((0, 4), dtype, rng)), O(floats((4, 2), dtype, rng))),
            name="empty")


def _mm_samples(op, dtype, rng):
    yield S(O(_with_zeros((3, 4), dtype, rng)), (O(floats((4, 2), dtype, rng)),), name="matrices")
    yield S(O(_with_zeros((4, 3), dtype, rng), "transposed"), (O(floats((3, 5), dtype, rng), "stepped"),),
            name="transposed sparse, stepped dense")
    yield S(O(_with_zeros((0, 4), dtype, rng)), (O(floats((4, 2), dtype, rng)),), name="empty")
    yield S(O(np.zeros((3, 4), _with_zeros((), dtype, rng).dtype)), (O(floats((4, 2), dtype, rng)),),
            name="no nonzeros")
    yield S(O(_DUPLICATES), (O(floats((6,), dtype, rng)), O(floats((4, 2), dtype, rng))), {"size": (3, 4)},
            name="uncoalesced: duplicates add up")
    yield S(O(_DUPLICATES), (O(floats((6,), dtype, rng)), O(floats((4, 2), dtype, rng))),
            {"size": (3, 4), "by_its_transpose": True}, name="by its own transpose, uncoalesced")
    yield S(O(np.zeros((2, 0), np.int64)), (O(floats((0,), dtype, rng)), O(floats((4, 2), dtype, rng), "stepped")),
            {"size": (3, 4)}, name="no entries, stepped dense")


def _sum_samples(op, dtype, rng):
    yield S(O(_with_zeros((3, 4), dtype, rng)), name="all")
    yield S(O(_with_zeros((3, 4), dtype, rng), "transposed"), kwargs={"dim": 1}, name="transposed, dim 1")
    yield S(O(_with_zeros((2, 3, 4), dtype, rng), "stepped"), kwargs={"dim": (0, 2)}, name="3-d, stepped, two dims")
    yield S(O(_with_zeros((2, 3), dtype, rng)), kwargs={"dim": (0, 1)}, name="every dim")
    yield S(O(_with_zeros((0, 3), dtype, rng)), kwargs={"dim": 0}, name="empty")
    yield S(O(_with_zeros((2, 3, 4), dtype, rng)), kwargs={"dim": -2}, name="negative dim")
    yield S(O(_DUPLICATES), (O(floats((6,), dtype, rng)),), {"dim": 1, "size": (3, 4)},
            name="uncoalesced: duplicates add up")


SPARSE_DB = [
    FamilyOpInfo("to_sparse", "sparse", _round_trip, _ref_round_trip, (F32, F64, I64),
                 sample_inputs_func=_round_trip_samples, reads_scalars=True),
    FamilyOpInfo("to_dense", "sparse", _to_dense, _ref_to_dense, sample_inputs_func=_to_dense_samples,
                 reads_scalars=True),
    FamilyOpInfo("coalesce", "sparse", _coalesce, _ref_coalesce, sample_inputs_func=_coalesce_samples,
                 reads_scalars=True),
    FamilyOpInfo("sparse.mm", "sparse", _sparse_mm, _ref_sparse_mm, sample_inputs_func=_mm_samples, reads_scalars=True),
    FamilyOpInfo("sparse.addmm", "sparse", _sparse_addmm, _ref_sparse_addmm, sample_inputs_func=_addmm_samples,
                 reads_scalars=True),
    FamilyOpInfo("sparse.sum", "sparse", _sparse_sum, _ref_sparse_sum, sample_inputs_func=_sum_samples,
                 reads_scalars=True),
]
