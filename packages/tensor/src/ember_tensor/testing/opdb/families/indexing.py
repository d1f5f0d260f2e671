"""Indexing: index_select, gather, scatter_add, index_add, take, masked_select, advanced
getitem and flip. Index operands are int64 (bool for masks); repeated indices are drawn
on purpose, so the accumulating ops (scatter_add, index_add) add into one place twice."""
import numpy as np

import ember_tensor as et

from ..core import COMPLEX, F32, F64, I64
from .info import FamilyOpInfo, O, S, floats, ints

__all__ = ["INDEXING_DB"]


# --- references ---------------------------------------------------------------------------


def _ref_index_select(x, index, dim):
    return np.take(x, index, axis=dim) if x.ndim else x.copy()  # a 0-d input takes one index, stays 0-d


def _ref_gather(x, index, dim):
    return np.take_along_axis(x, index, axis=dim) if x.ndim else x[()] + np.zeros(index.shape, x.dtype)


def _scatter_positions(index, dim):
    """The positions scatter writes: each element of `index` names the coordinate along dim."""
    grid = list(np.indices(index.shape, sparse=True))
    grid[dim % index.ndim] = index
    return tuple(grid)


def _ref_scatter_add(x, index, src, dim):
    if not x.ndim:  # a 0-d tensor takes the one index 0
        return x + src
    out = x.copy()
    np.add.at(out, _scatter_positions(index, dim), src[tuple(slice(0, n) for n in index.shape)])
    return out


def _ref_index_add(x, index, source, dim, alpha=1):
    out = x.copy()
    np.add.at(np.moveaxis(out, dim, 0), index, np.moveaxis(source, dim, 0) * alpha)
    return out


def _ref_take(x, index):
    return x.reshape(-1)[index]


def _ref_masked_select(x, mask):
    x, mask = np.broadcast_arrays(x, mask)
    return x[mask]


_KEYS = {  # how each getitem form indexes with the index operands (NumPy's rules are PyTorch's)
    "adjacent": lambda x, i, j: x[i, j],
    "split": lambda x, i, j: x[i, :, j],
    "ellipsis": lambda x, i, j: x[..., i],
    "mask": lambda x, i, j: x[i],
}


def _ref_getitem(x, i, j, form):
    return _KEYS[form](x, i, j)


def _ref_flip(x, dims):
    return np.flip(x, axis=dims) if x.ndim else x


# --- the ops ------------------------------------------------------------------------------


def _index_select(x, index, dim):
    return et.index_select(x, dim, index)


def _gather(x, index, dim):
    return et.gather(x, dim, index)


def _scatter_add(x, index, src, dim):
    return et.scatter_add(x, dim, index, src)


def _index_add(x, index, source, dim, alpha=1):
    return et.index_add(x, dim, index, source, alpha=alpha)


def _getitem(x, i, j, form):
    return _KEYS[form](x, i, j)


def _flip(x, dims):
    return et.flip(x, dims)


# --- samples ------------------------------------------------------------------------------


def _index_select_samples(op, dtype, rng):
    yield S(O(floats((3, 4), dtype, rng)), (O(np.array([2, 0, 2])),), {"dim": 0}, name="rows, repeated")
    yield S(O(floats((2, 3, 4), dtype, rng), "transposed"), (O(ints((5,), 3, rng), "stepped"),), {"dim": -1},
            name="transposed, stepped index")
    yield S(O(floats((), dtype, rng)), (O(np.array([0])),), {"dim": 0}, name="0-d input")
    yield S(O(floats((3, 4), dtype, rng)), (O(ints((0,), 3, rng)),), {"dim": 1}, name="empty index")


def _gather_samples(op, dtype, rng):
    yield S(O(floats((3, 4), dtype, rng)), (O(ints((3, 2), 4, rng)),), {"dim": 1}, name="columns")
    yield S(O(floats((4, 3), dtype, rng), "transposed"), (O(ints((2, 3), 4, rng)),), {"dim": 0},
            name="transposed, smaller index")
    yield S(O(floats((), dtype, rng)), (O(np.array(0)),), {"dim": 0}, name="0-d")
    yield S(O(floats((3, 4), dtype, rng)), (O(ints((0, 4), 3, rng)),), {"dim": 0}, name="empty index")
    yield S(O(floats((2, 3, 4), dtype, rng), "stepped"), (O(ints((2, 3, 2), 4, rng)),), {"dim": -1},
            name="3-d, stepped, negative dim")


def _scatter_add_samples(op, dtype, rng):
    yield S(O(floats((3, 4), dtype, rng)), (O(ints((2, 4), 3, rng)), O(floats((3, 5), dtype, rng))), {"dim": 0},
            name="rows, src bigger than index")
    yield S(O(floats((4, 3), dtype, rng), "transposed"), (O(ints((4, 2), 3, rng)), O(floats((4, 2), dtype, rng))),
            {"dim": 1}, name="transposed")
    yield S(O(floats((3, 4), dtype, rng)), (O(ints((0, 4), 3, rng)), O(floats((0, 4), dtype, rng))), {"dim": 0},
            name="empty index")
    yield S(O(floats((2, 3, 4), dtype, rng)), (O(ints((2, 3, 6), 4, rng), "stepped"), O(floats((2, 3, 6), dtype, rng))),
            {"dim": -1}, name="3-d, stepped index, negative dim")
    yield S(O(floats((), dtype, rng)), (O(np.array(0)), O(floats((), dtype, rng))), {"dim": 0}, name="0-d")


def _index_add_samples(op, dtype, rng):
    yield S(O(floats((4, 3), dtype, rng)), (O(np.array([0, 2, 0])), O(floats((3, 3), dtype, rng))),
            {"dim": 0, "alpha": 2}, name="rows, repeated, alpha")
    yield S(O(floats((3, 4), dtype, rng), "transposed"), (O(ints((2,), 4, rng)), O(floats((3, 2), dtype, rng),
                                                                                    "stepped")),
            {"dim": 1}, name="transposed, stepped source")
    yield S(O(floats((3, 4), dtype, rng)), (O(ints((0,), 3, rng)), O(floats((0, 4), dtype, rng))), {"dim": 0},
            name="empty index")
    yield S(O(floats((2, 3, 4), dtype, rng)), (O(np.array([3, 3, 0]), "stepped"), O(floats((2, 3, 3), dtype, rng))),
            {"dim": -1, "alpha": -0.5}, name="3-d, negative dim, repeated and stepped index, negative alpha")


def _take_samples(op, dtype, rng):
    yield S(O(floats((3, 4), dtype, rng)), (O(ints((2, 3), 12, rng)),), name="2-d index")
    yield S(O(floats((3, 4), dtype, rng), "transposed"), (O(ints((5,), 12, rng)),), name="transposed")
    yield S(O(floats((), dtype, rng)), (O(np.array(0)),), name="0-d")
    yield S(O(floats((3, 4), dtype, rng)), (O(ints((0,), 12, rng)),), name="empty index")
    yield S(O(floats((3, 4), dtype, rng)), (O(np.array([-1, -12, 5])),), name="negative indices")


def _masked_select_samples(op, dtype, rng):
    yield S(O(floats((3, 4), dtype, rng)), (O(rng.random((3, 4)) < 0.5),), name="same shape")
    yield S(O(floats((4, 3), dtype, rng), "transposed"), (O(rng.random((1, 3)) < 0.5),), name="transposed, broadcast")
    yield S(O(floats((), dtype, rng)), (O(np.array(True)),), name="0-d")
    yield S(O(floats((0, 3), dtype, rng)), (O(np.ones(3, bool)),), name="empty")
    yield S(O(floats((3,), dtype, rng), "stepped"), (O(rng.random((2, 3)) < 0.5),), name="input broadcast to the mask")
    yield S(O(floats((2, 300), dtype, rng)), (O(rng.random((2, 300)) < 0.5),), name="beyond a CUDA block")


def _getitem_samples(op, dtype, rng):
    x = floats((3, 4, 5), dtype, rng)
    yield S(O(x), (O(ints((2, 2), 3, rng)), O(ints((2,), 4, rng))), {"form": "adjacent"}, name="adjacent, broadcast")
    yield S(O(floats((3, 4, 5), dtype, rng), "transposed"), (O(ints((2,), 3, rng)), O(ints((2,), 4, rng))),
            {"form": "split"}, name="split by a slice, transposed")
    yield S(O(x), (O(np.array(4)), None), {"form": "ellipsis"}, name="ellipsis, 0-d index")
    yield S(O(x, "stepped"), (O(rng.random((3, 4)) < 0.5), None), {"form": "mask"}, name="bool mask, stepped")
    yield S(O(x), (O(ints((0,), 3, rng)), O(ints((0,), 4, rng))), {"form": "adjacent"}, name="empty index")
    yield S(O(x), (O(np.array([-1, 0, -3])), O(np.array([-4]))), {"form": "split"}, name="negative indices")


def _flip_samples(op, dtype, rng):
    yield S(O(floats((3, 4), dtype, rng)), kwargs={"dims": (0,)}, name="rows")
    yield S(O(floats((2, 3, 4), dtype, rng), "transposed"), kwargs={"dims": (0, 2)}, name="transposed, two dims")
    yield S(O(floats((2, 5), dtype, rng), "stepped"), kwargs={"dims": (-1,)}, name="stepped")
    yield S(O(floats((), dtype, rng)), kwargs={"dims": ()}, name="0-d")
    yield S(O(floats((0, 3), dtype, rng)), kwargs={"dims": (1,)}, name="empty")
    yield S(O(floats((2, 3, 2), dtype, rng), "stepped"), kwargs={"dims": (-1, 0, 1)}, name="every dim")


# Complex samples too: a complex128 item is 16 bytes, moved as two 8-byte words.
_WITH_COMPLEX = (F32, F64) + COMPLEX
_WITH_INT = (F32, F64, I64) + COMPLEX
# Every op that takes indices reads back one flag on CUDA: are they all in range? (The
# CPU's IndexError, raised on CUDA too, where PyTorch's kernel asserts on the device.)
INDEXING_DB = [
    FamilyOpInfo("index_select", "indexing", _index_select, _ref_index_select, _WITH_COMPLEX,
                 sample_inputs_func=_index_select_samples, reads_scalars=True),
    FamilyOpInfo("gather", "indexing", _gather, _ref_gather, _WITH_COMPLEX, sample_inputs_func=_gather_samples,
                 reads_scalars=True),
    FamilyOpInfo("scatter_add", "indexing", _scatter_add, _ref_scatter_add, _WITH_COMPLEX,
                 sample_inputs_func=_scatter_add_samples, reads_scalars=True),
    FamilyOpInfo("index_add", "indexing", _index_add, _ref_index_add, _WITH_COMPLEX,
                 sample_inputs_func=_index_add_samples, reads_scalars=True),
    FamilyOpInfo("take", "indexing", et.take, _ref_take, _WITH_INT, sample_inputs_func=_take_samples,
                 reads_scalars=True),
    # The output's size is a count of the mask's True elements: read back, as PyTorch does.
    FamilyOpInfo("masked_select", "indexing", et.masked_select, _ref_masked_select, _WITH_COMPLEX,
                 sample_inputs_func=_masked_select_samples, reads_scalars=True),
    FamilyOpInfo("getitem", "indexing", _getitem, _ref_getitem, _WITH_COMPLEX, sample_inputs_func=_getitem_samples,
                 reads_scalars=True),
    FamilyOpInfo("flip", "indexing", _flip, _ref_flip, _WITH_INT, sample_inputs_func=_flip_samples),
]
