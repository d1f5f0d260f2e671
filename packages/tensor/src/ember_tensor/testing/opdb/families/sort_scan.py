"""Sorting and scans: sort, argsort (stable), topk, nanmedian, cumsum, cumprod, cummax, cummin,
logcumsumexp, searchsorted and unique.

Values are drawn without ties where an op's indices would be free to differ on them
(an unstable sort, topk); stable sort and argsort, cummax and unique meet ties on
purpose, since their order among equals is part of the contract, and NaN and ±inf
where PyTorch defines the order (NaN is the greatest value)."""
import numpy as np

import ember_tensor as et

from ..core import COMPLEX, F32, F64, I64, NP
from .info import FamilyOpInfo, O, S, floats

__all__ = ["SORT_SCAN_DB"]


def _distinct(shape, dtype, rng):
    """Values without ties: a shuffled range, scaled into [-2, 2)."""
    n = int(np.prod(shape))
    v = rng.permutation(n).reshape(shape)
    return (v if dtype is I64 else (v / max(n, 1) * 4 - 2)).astype(NP[dtype])


def _with_ties(shape, dtype, rng):
    return rng.integers(-2, 3, shape).astype(NP[dtype])


def _extremal(rows, dtype):
    """`rows` of NaN, ±inf and ties (floating dtypes only: None for an integer one)."""
    return None if dtype is I64 else np.array(rows, NP[dtype])


_NAN, _INF = np.nan, np.inf
# Longer than a CUDA block (256 threads), so the kernels' multi-block paths run too (on
# the simulator a sort of one such row costs a second: argsort's covers sort's kernel).
_LONG = 260


# --- references ---------------------------------------------------------------------------


def _stable_order(x, dim, descending):
    # PyTorch's order: NaN is the greatest value (last ascending, first descending), and
    # a stable sort keeps equal elements in their original order either way.
    if not x.ndim:
        return np.zeros((), np.int64)
    if not descending:
        return np.argsort(x, axis=dim, kind="stable")
    nan = np.isnan(x)
    return np.lexsort((np.where(nan, 0, -x), ~nan), axis=dim)


def _ref_sort(x, dim=-1, descending=False, stable=False):
    order = _stable_order(x, dim, descending)
    return (np.take_along_axis(x, order, dim) if x.ndim else x), order


def _ref_argsort(x, dim=-1, descending=False, stable=True):
    return _stable_order(x, dim, descending)


def _ref_topk(x, k, dim=-1, largest=True):
    if not x.ndim:
        return x, np.zeros((), np.int64)
    order = np.take(_stable_order(x, dim, largest), np.arange(k), axis=dim)
    return np.take_along_axis(x, order, dim), order


def _scan(f, x, dim):
    return f(x, axis=dim) if x.ndim else x


def _ref_cumsum(x, dim):
    return _scan(np.cumsum, x, dim)


def _ref_cumprod(x, dim):
    return _scan(np.cumprod, x, dim)


def _complex_log_add_exp(acc, z):
    """PyTorch's step of complex logcumsumexp for finite parts: the smaller real part joins
    the larger as log(1 + exp(min - max)) + max (the imaginary part is not wrapped into
    (-pi, pi], so a principal-value log(cumsum(exp(x))) would differ by 2 pi)."""
    lo, hi = (z, acc) if z.real < acc.real else (acc, z)
    return np.log(1 + np.exp(lo - hi)) + hi


def _ref_logcumsumexp(x, dim):
    if np.iscomplexobj(x):  # (np.logaddexp has no complex loop)
        def scan(z, axis):
            out = np.moveaxis(z.astype(np.complex128), axis, -1).copy()
            for i in range(1, out.shape[-1]):
                out[..., i] = np.vectorize(_complex_log_add_exp, otypes=[np.complex128])(out[..., i - 1], out[..., i])
            return np.moveaxis(out, -1, axis).astype(z.dtype)
        return _scan(scan, x, dim)
    return _scan(np.logaddexp.accumulate, x, dim)


def _ref_cummax(x, dim):
    """The running maximum and its index (as `_running_extreme`)."""
    return _running_extreme(np.maximum, x, dim)


def _ref_cummin(x, dim):
    """The running minimum and its index (as `_running_extreme`)."""
    return _running_extreme(np.minimum, x, dim)


def _running_extreme(extreme, x, dim):
    """The running `extreme` (np.maximum or np.minimum) along `dim`, and its index: an
    equal value moves the index on, a NaN sticks."""
    values = _scan(extreme.accumulate, x, dim)
    if not x.ndim:
        return values, np.zeros((), np.int64)
    # The index of the running extreme: the last position where the value equals it (a
    # NaN equals a NaN extreme here).
    positions = np.arange(x.shape[dim]).reshape([-1 if a == dim % x.ndim else 1 for a in range(x.ndim)])
    hits = np.where((x == values) | (np.isnan(x) & np.isnan(values)), positions, -1)
    return values, np.maximum.accumulate(hits, axis=dim).astype(np.int64)


def _ref_nanmedian(x):
    """PyTorch's nanmedian of all elements: the lower middle value of those not NaN (all
    NaN: NaN); of an empty tensor NaN, or the smallest integer of an integer dtype."""
    values = np.sort(x[~np.isnan(x)] if x.dtype.kind == "f" else x.reshape(-1))
    if values.size:
        return values[(values.size - 1) // 2]
    return np.array(np.nan if x.dtype.kind == "f" else np.iinfo(x.dtype).min, x.dtype)


def _ref_searchsorted(sorted_sequence, values, right=False):
    side = "right" if right else "left"
    if sorted_sequence.ndim == 1:
        return np.searchsorted(sorted_sequence, values, side=side).astype(np.int64)
    rows = [np.searchsorted(s, v, side=side) for s, v in zip(sorted_sequence.reshape(-1, sorted_sequence.shape[-1]),
                                                            values.reshape(-1, values.shape[-1]))]
    return np.array(rows, np.int64).reshape(values.shape)


def _ref_unique(x, return_inverse=False, return_counts=False):
    values, inverse, counts = np.unique(x, return_inverse=True, return_counts=True)
    out = (values,)
    if return_inverse:
        out += (inverse.reshape(x.shape).astype(np.int64),)
    if return_counts:
        out += (counts.astype(np.int64),)
    return out if len(out) > 1 else values


# --- the ops ------------------------------------------------------------------------------


def _sort(x, dim=-1, descending=False, stable=False):
    return tuple(et.sort(x, dim=dim, descending=descending, stable=stable))


def _topk(x, k, dim=-1, largest=True):
    return tuple(et.topk(x, k, dim=dim, largest=largest, sorted=True))


def _cummax(x, dim):
    return tuple(et.cummax(x, dim))


def _cummin(x, dim):
    """cummin's (values, indices) as a tuple."""
    return tuple(et.cummin(x, dim))


def _unique(x, return_inverse=False, return_counts=False):
    return et.unique(x, sorted=True, return_inverse=return_inverse, return_counts=return_counts)


# --- samples ------------------------------------------------------------------------------


def _sort_samples(op, dtype, rng):
    yield S(O(_distinct((3, 5), dtype, rng)), name="rows")
    yield S(O(_distinct((4, 3), dtype, rng), "transposed"), kwargs={"dim": 0, "descending": True},
            name="transposed, descending")
    yield S(O(_with_ties((2, 7), dtype, rng), "stepped"), kwargs={"stable": True}, name="stepped, ties, stable")
    yield S(O(_distinct((), dtype, rng)), kwargs={"dim": 0}, name="0-d")
    yield S(O(_distinct((0, 3), dtype, rng)), name="empty")
    yield S(O(_with_ties((3, 4, 2), dtype, rng)), kwargs={"dim": 0, "descending": True, "stable": True},
            name="3-d, dim 0, ties, stable, descending")
    extremal = _extremal([[1, _NAN, 3, -_INF, 2, _INF, _NAN, 0, 3]] * 2, dtype)
    if extremal is not None:
        yield S(O(extremal), kwargs={"stable": True}, name="NaN, inf, ties, stable")
        yield S(O(extremal), kwargs={"stable": True, "descending": True}, name="NaN, inf, ties, stable, descending")


def _argsort_samples(op, dtype, rng):
    yield S(O(_with_ties((3, 8), dtype, rng)), name="ties")
    yield S(O(_with_ties((6, 3), dtype, rng), "transposed"), kwargs={"dim": 0, "descending": True},
            name="transposed, ties, descending")
    yield S(O(_with_ties((), dtype, rng)), kwargs={"dim": 0}, name="0-d")
    yield S(O(_with_ties((2, 0), dtype, rng)), name="empty")
    yield S(O(_with_ties((_LONG,), dtype, rng)), kwargs={"descending": True}, name="a long row, descending")
    zeros = _extremal([[0.0, -0.0, 1, -0.0, 0.0, -1, _NAN, -0.0]], dtype)
    if zeros is not None:  # -0.0 equals 0.0: a stable order keeps them as they came
        yield S(O(zeros), name="signed zeros, NaN")
        yield S(O(zeros), kwargs={"descending": True}, name="signed zeros, NaN, descending")


def _topk_samples(op, dtype, rng):
    yield S(O(_distinct((3, 6), dtype, rng)), kwargs={"k": 2}, name="largest")
    yield S(O(_distinct((5, 3), dtype, rng), "transposed"), kwargs={"k": 3, "dim": 0, "largest": False},
            name="transposed, smallest")
    yield S(O(_distinct((), dtype, rng)), kwargs={"k": 1, "dim": 0}, name="0-d")
    yield S(O(_distinct((), dtype, rng)), kwargs={"k": 0}, name="0-d, k = 0")  # PyTorch: the element itself
    yield S(O(_distinct((4, 3), dtype, rng)), kwargs={"k": 0}, name="k = 0")
    yield S(O(_distinct((2, 5, 3), dtype, rng), "stepped"), kwargs={"k": 5, "dim": 1}, name="3-d, k = size, stepped")
    yield S(O(_distinct((2, _LONG), dtype, rng)), kwargs={"k": 7}, name="long rows")
    extremal = _extremal([[1, _NAN, 3, -_INF, 2, _INF, 0]], dtype)
    yield S(O(extremal), kwargs={"k": 3}, name="NaN is the largest, then inf")
    yield S(O(extremal), kwargs={"k": 3, "largest": False}, name="smallest, -inf first")


def _scan_samples(low, high):
    def samples(op, dtype, rng):
        def v(*shape, layout="contiguous"):
            values = floats(shape, dtype, rng, low, high)
            if dtype.is_complex:  # magnitudes in [low, high] (a long product stays in range), any angle
                values = (np.abs(values.real) * np.exp(2j * np.pi * rng.random(shape))).astype(values.dtype)
            return O(values, layout)
        yield S(v(3, 5), kwargs={"dim": 1}, name="rows")
        yield S(v(4, 3, layout="transposed"), kwargs={"dim": 0}, name="transposed")
        yield S(v(2, 3, 6, layout="stepped"), kwargs={"dim": -1}, name="stepped")
        yield S(v(), kwargs={"dim": 0}, name="0-d")
        yield S(v(0, 3), kwargs={"dim": 1}, name="empty")
        yield S(v(2, _LONG), kwargs={"dim": 1}, name="long rows")
        if op.name in _EXTREMAL_SCANS and not dtype.is_complex:  # (complex special values: not sampled)
            yield S(O(_extremal(_EXTREMAL_SCANS[op.name], dtype)), kwargs={"dim": 1}, name="extremal")
        ties = _extremal(_TIES_ACROSS_CHUNKS, dtype)
        if op.name in ("cummax", "cummin") and ties is not None:
            yield S(O(ties), kwargs={"dim": 0}, name="ties and NaN across chunks")
            yield S(O(ties[:10]), kwargs={"dim": 0}, name="ties across chunks")
    return samples


# Rows where a scan meets NaN, ±inf and ties (cummax: a tie moves the index to the later one).
_EXTREMAL_SCANS = {
    "cumsum": [[1, _INF, -_INF, 2], [_NAN, 1, 2, 3]],
    "cumprod": [[2, 0, 3, 4], [_INF, 0, 1, 2]],
    "cummax": [[1, 3, 3, 2, 3, _NAN, 4, _NAN], [-_INF, -_INF, 0, _INF, 1, _INF, 2, 2]],
    "cummin": [[1, 0, 0, 2, 0, _NAN, -1, _NAN], [_INF, _INF, 0, -_INF, 1, -_INF, 2, 2]],
    "logcumsumexp": [[-_INF, -_INF, 1, _INF, 2], [3, -_INF, 2, 2, _NAN], [1000, 1000, -1000, 999, 0]],
}


# A row that the CUDA scan cuts into chunks, with runs of equal values (each moves the
# index on) and a NaN (it sticks) on both sides of the chunk borders.
_TIES_ACROSS_CHUNKS = [1, 3, 3, 2, 3, 0, 3, 3, 1, 1, _NAN, 5, 1, 2, 9, 0] * 2


def _searchsorted_samples(op, dtype, rng):
    def seq(*shape):
        return np.sort(floats(shape, dtype, rng), axis=-1)
    yield S(O(seq(6)), (O(floats((2, 3), dtype, rng, -3, 3)),), name="1-d sequence")
    boundaries = seq(5)
    yield S(O(boundaries), (O(np.concatenate([boundaries[:3], floats((3,), dtype, rng)]), "stepped"),),
            {"right": True}, name="on the boundaries, right, stepped values")
    yield S(O(seq(3, 4)), (O(floats((3, 5), dtype, rng), "transposed"),), name="rows, transposed values")
    yield S(O(seq(4)), (O(floats((), dtype, rng)),), name="0-d value")
    yield S(O(seq(4)), (O(floats((0,), dtype, rng)),), name="empty values")
    yield S(O(boundaries), (O(np.array([np.nan, -np.inf, np.inf], boundaries.dtype)),), name="NaN goes last, ±inf")
    repeated = np.array([1, 2, 2, 2, 3], boundaries.dtype)
    for right in (False, True):
        yield S(O(repeated), (O(np.array([0, 1, 2, 3, 4, 2.5], repeated.dtype)),), {"right": right},
                name=f"repeated boundaries, out of range, right={right}")


def _nanmedian_samples(op, dtype, rng):
    """Ties, an even count (transposed), 0-d, empty, NaN among ±inf, all NaN."""
    yield S(O(_with_ties((3, 5), dtype, rng)), name="ties")
    yield S(O(_distinct((4, 2), dtype, rng), "transposed"), name="transposed, even count")
    yield S(O(_with_ties((), dtype, rng)), name="0-d")
    yield S(O(_with_ties((0, 3), dtype, rng)), name="empty")
    extremal = _extremal([[1, _NAN, 3, -_INF, 2, _INF, _NAN, 0]], dtype)
    if extremal is not None:
        yield S(O(extremal), name="NaN skipped, ±inf")
        yield S(O(_extremal([[_NAN, _NAN]], dtype)), name="all NaN")


def _unique_samples(op, dtype, rng):
    yield S(O(_with_ties((9,), dtype, rng)), name="values")
    yield S(O(_with_ties((3, 4), dtype, rng), "transposed"), kwargs={"return_inverse": True, "return_counts": True},
            name="transposed, inverse and counts")
    yield S(O(_with_ties((2, 5), dtype, rng), "stepped"), kwargs={"return_counts": True}, name="stepped, counts")
    yield S(O(_with_ties((), dtype, rng)), kwargs={"return_inverse": True}, name="0-d")
    yield S(O(_with_ties((0,), dtype, rng)), kwargs={"return_counts": True}, name="empty")
    yield S(O(_with_ties((2, 3, 4), dtype, rng)), kwargs={"return_inverse": True, "return_counts": True},
            name="3-d, inverse and counts")
    yield S(O(floats((_LONG,), dtype, rng, -40, 40).round()), kwargs={"return_inverse": True, "return_counts": True},
            name="long, inverse and counts")


_WITH_INT = (F32, F64, I64)
SORT_SCAN_DB = [
    FamilyOpInfo("sort", "sort_scan", _sort, _ref_sort, _WITH_INT, sample_inputs_func=_sort_samples),
    FamilyOpInfo("argsort", "sort_scan", lambda x, **kw: et.argsort(x, stable=True, **kw), _ref_argsort, _WITH_INT,
                 sample_inputs_func=_argsort_samples),
    FamilyOpInfo("topk", "sort_scan", _topk, _ref_topk, sample_inputs_func=_topk_samples),
    FamilyOpInfo("cumsum", "sort_scan", et.cumsum, _ref_cumsum, (F32, F64) + COMPLEX,
                 sample_inputs_func=_scan_samples(-2, 2)),
    # Factors near 1 keep the running product of a row in range.
    FamilyOpInfo("cumprod", "sort_scan", et.cumprod, _ref_cumprod, (F32, F64) + COMPLEX,
                 sample_inputs_func=_scan_samples(0.5, 1.5)),
    FamilyOpInfo("cummax", "sort_scan", _cummax, _ref_cummax, sample_inputs_func=_scan_samples(-2, 2)),
    FamilyOpInfo("cummin", "sort_scan", _cummin, _ref_cummin, sample_inputs_func=_scan_samples(-2, 2)),
    FamilyOpInfo("logcumsumexp", "sort_scan", et.logcumsumexp, _ref_logcumsumexp, (F32, F64) + COMPLEX,
                 sample_inputs_func=_scan_samples(-4, 4)),
    FamilyOpInfo("nanmedian", "sort_scan", et.nanmedian, _ref_nanmedian, _WITH_INT,
                 sample_inputs_func=_nanmedian_samples),
    FamilyOpInfo("searchsorted", "sort_scan", et.searchsorted, _ref_searchsorted,
                 sample_inputs_func=_searchsorted_samples),
    # The number of distinct values sizes the output: read back, as PyTorch does.
    FamilyOpInfo("unique", "sort_scan", _unique, _ref_unique, _WITH_INT, sample_inputs_func=_unique_samples,
                 reads_scalars=True),
]
