"""Hypothesis tests of broadcasting and type promotion against PyTorch's rules.

The rules are data in opdb.py: `PROMOTE` (torch.promote_types for every pair of dtypes),
`CAN_CAST` (torch.can_cast) and `reference_result_type` (c10's result_type: tensors
with dims, then 0-d tensors, then Python numbers, each lower group counting only when it
is of a higher category). Hypothesis draws shapes, dtypes and mixes of operands; ember's
`result_type`, `promote_types`, `can_cast`, the dtype of real op results, broadcast
shapes and broadcast values must all follow the rules.
"""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ember_tensor as et
from ember_tensor.testing.opdb import ALL_DTYPES, B, CAN_CAST, F32, F64, NP, PROMOTE, make_values, reference_result_type

# Small shapes and few examples: every example runs real (already compiled) kernels.
_SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
dtypes = st.sampled_from(ALL_DTYPES)


# --- the dtype tables --------------------------------------------------------------------

@pytest.mark.parametrize("a", ALL_DTYPES, ids=lambda d: d.name)
def test_promote_types_table(a):
    """promote_types(a, b) is PyTorch's table entry, in both argument orders."""
    for b in ALL_DTYPES:
        assert et.promote_types(a, b) is PROMOTE[(a, b)], (a, b)
        assert et.promote_types(b, a) is PROMOTE[(a, b)], (b, a)


@pytest.mark.parametrize("a", ALL_DTYPES, ids=lambda d: d.name)
def test_can_cast_table(a):
    """can_cast never lowers the kind (float > int > bool), as torch.can_cast."""
    for b in ALL_DTYPES:
        assert et.can_cast(a, b) is CAN_CAST[(a, b)], (a, b)


@pytest.mark.parametrize("scalar, tensor_dtype, expected", [
    (1, et.uint8, et.uint8), (1, et.bool, et.int64), (1.5, et.int32, et.float32), (1.5, et.float16, et.float16),
    (True, et.int8, et.int8), (True, et.bool, et.bool), (2, et.float64, et.float64), (1.5, et.bool, et.float32),
])
def test_result_type_with_numbers(scalar, tensor_dtype, expected):
    """A Python number never widens a tensor of its own category (PyTorch's exact examples)."""
    t = et.zeros(2, dtype=tensor_dtype)
    assert et.result_type(t, scalar) is expected
    assert et.result_type(scalar, t) is expected


def test_result_type_follows_default_dtype():
    """A Python float promotes an integer tensor to the default dtype, whatever it is."""
    t = et.zeros(2, dtype=et.int64)
    et.set_default_dtype(et.float64)
    try:
        assert et.result_type(t, 1.5) is et.float64
        assert (t + 1.5).dtype is et.float64
    finally:
        et.set_default_dtype(et.float32)


# --- result_type and real results on drawn operands ---------------------------------------

# An operand: ("dim", dtype) a 1-d tensor, ("0-d", dtype) a 0-d tensor, or ("number", kind).
operands = st.one_of(
    st.tuples(st.sampled_from(["dim", "0-d"]), dtypes),
    st.tuples(st.just("number"), st.sampled_from([True, False, 3, 2.5])),
)


def _build(spec):
    kind, what = spec
    if kind == "number":
        return what
    shape = (3,) if kind == "dim" else ()
    return et.tensor(make_values(shape, what, np.random.default_rng(0), 0, 3), dtype=what)


@_SETTINGS
@given(st.lists(operands, min_size=2, max_size=2).filter(lambda ops: any(k != "number" for k, _ in ops)))
def test_result_type_matches_reference(specs):
    """et.result_type of two operands is c10's rule, and `mul`'s result has that dtype."""
    a, b = (_build(s) for s in specs)
    expected = reference_result_type([a, b])
    assert et.result_type(a, b) is expected
    result = et.mul(a, b)
    assert result.dtype is expected
    want = np.multiply(np.asarray(a.numpy() if isinstance(a, et.Tensor) else a).astype(np.float64),
                       np.asarray(b.numpy() if isinstance(b, et.Tensor) else b).astype(np.float64))
    got = result.numpy().astype(np.float64)
    if expected is B:
        want = want != 0
    np.testing.assert_allclose(got, np.broadcast_to(want, got.shape), rtol=1e-2)


@_SETTINGS
@given(dtypes, dtypes, st.booleans())
def test_true_division_is_floating(a, b, zero_dim):
    """`/` gives the promoted float dtype, or the default float for integer/bool operands."""
    x = et.ones(2, dtype=a)
    y = et.ones(() if zero_dim else 2, dtype=b)
    promoted = reference_result_type([x, y])
    assert (x / y).dtype is (promoted if promoted.is_floating_point else et.get_default_dtype())


@_SETTINGS
@given(dtypes, dtypes)
def test_comparisons_are_bool_and_compare_promoted_values(a, b):
    """Comparisons return bool whatever the operands' dtypes, comparing promoted values."""
    rng = np.random.default_rng(1)
    x = et.tensor(make_values((4,), a, rng, 0, 3), dtype=a)
    y = et.tensor(make_values((4,), b, rng, 0, 3), dtype=b)
    result = et.lt(x, y)
    assert result.dtype is et.bool
    np.testing.assert_array_equal(result.numpy(), x.numpy().astype(np.float64) < y.numpy().astype(np.float64))


@_SETTINGS
@given(dtypes, dtypes)
def test_inplace_result_keeps_self_dtype_or_raises(a, b):
    """x.add_(y) keeps x's dtype when the promoted dtype casts to it, else PyTorch's error."""
    x, y = et.ones(3, dtype=a), et.ones(3, dtype=b)
    promoted = PROMOTE[(a, b)]
    if promoted is B:
        return  # add of two bools is logical or: covered by the op database
    if CAN_CAST[(promoted, a)]:
        assert x.add_(y).dtype is a
    else:
        with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
            x.add_(y)


# --- broadcasting ------------------------------------------------------------------------

@_SETTINGS
@given(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=4, max_side=3),
       st.sampled_from([F32, F64, et.int64]))
def test_broadcast_values_match_numpy(shapes, dtype):
    """a + b broadcasts like NumPy: shape and every value."""
    rng = np.random.default_rng(2)
    xs = [make_values(s, dtype, rng) for s in shapes.input_shapes]
    result = et.tensor(xs[0], dtype=dtype) + et.tensor(xs[1], dtype=dtype)
    assert tuple(result.shape) == shapes.result_shape
    np.testing.assert_array_equal(result.numpy(), xs[0] + xs[1])
    assert et.broadcast_shapes(*shapes.input_shapes) == shapes.result_shape


@_SETTINGS
@given(hnp.mutually_broadcastable_shapes(num_shapes=3, min_dims=0, max_dims=3, max_side=3))
def test_broadcast_three_operands(shapes):
    """where(cond, x, y) broadcasts all three operands together."""
    rng = np.random.default_rng(3)
    c_shape, x_shape, y_shape = shapes.input_shapes
    c, x, y = np.asarray(rng.random(c_shape) < 0.5), rng.random(x_shape), rng.random(y_shape)
    result = et.where(et.tensor(c), et.tensor(x), et.tensor(y))
    assert tuple(result.shape) == shapes.result_shape
    np.testing.assert_array_equal(result.numpy(), np.where(c, x, y))


@st.composite
def mismatched_shapes(draw):
    """Two shapes that do not broadcast, with the dimension (of the result) PyTorch names."""
    ndim = draw(st.integers(1, 4))
    a = draw(st.lists(st.integers(1, 4), min_size=ndim, max_size=ndim))
    b = [draw(st.sampled_from([n, 1])) for n in a]
    bad = draw(st.lists(st.integers(0, ndim - 1), min_size=1, max_size=ndim, unique=True))
    for d in bad:  # sizes that differ and are both above 1
        a[d] = draw(st.integers(2, 4))
        b[d] = draw(st.integers(2, 4).filter(lambda n, m=a[d]: n != m))
    drop = draw(st.integers(0, min(bad)))  # b may have fewer leading dims
    last = max(bad)  # PyTorch compares from the last dimension backward
    return tuple(a), tuple(b[drop:]), last, a[last], b[last]


@_SETTINGS
@given(mismatched_shapes())
def test_broadcast_error_names_last_mismatch(case):
    """Shapes that don't broadcast raise PyTorch's error naming sizes and the dimension."""
    a, b, dim, size_a, size_b = case
    with pytest.raises(RuntimeError, match=rf"The size of tensor a \({size_a}\) must match the size of "
                                           rf"tensor b \({size_b}\) at non-singleton dimension {dim}$"):
        et.zeros(a) + et.zeros(b)


@_SETTINGS
@given(hnp.array_shapes(min_dims=1, max_dims=3, max_side=3), st.sampled_from(ALL_DTYPES))
def test_number_operand_broadcasts_without_changing_dtype(shape, dtype):
    """A Python int never changes the dtype of a non-bool tensor it is added to."""
    if dtype is B:
        return
    x = et.zeros(shape, dtype=dtype)
    result = x + 1
    assert result.dtype is dtype and tuple(result.shape) == shape
    np.testing.assert_array_equal(result.numpy().astype(np.float64), np.ones(shape))


def test_numpy_dtype_names_cover_every_dtype():
    """Every ember dtype stores its elements as the NumPy dtype the op database expects."""
    for d in ALL_DTYPES:
        assert np.dtype(d.np) == np.dtype(NP[d])


@pytest.mark.parametrize("shapes, message", [
    (((2, 3), (4,)), "Attempting to broadcast a dimension of length 4 at -1! Mismatching argument at index 1 had "
                     "(4,); but expected shape should be broadcastable to [2, 3]"),
    (((2, 3), (3,), (4, 3)), "Attempting to broadcast a dimension of length 4 at -2! Mismatching argument at index "
                             "2 had (4, 3); but expected shape should be broadcastable to [2, 3]"),
])
def test_public_broadcast_shapes_error(shapes, message):
    """torch.broadcast_shapes has its own message (not TensorIterator's): ember's matches it."""
    import re
    with pytest.raises(RuntimeError, match="^" + re.escape(message) + "$"):
        et.broadcast_shapes(*shapes)


def test_public_broadcast_shapes_accepts_ints_and_nothing():
    assert et.broadcast_shapes(2, (3, 1)) == (3, 2)
    assert et.broadcast_shapes() == ()
    assert isinstance(et.broadcast_shapes((2,), (3, 1), (1, 1, 1)), et.Size)


# --- the tables against PyTorch itself (optional: only where torch is installed) ------------

def _torch_dtype(torch, d):
    return getattr(torch, d.name)


def test_tables_match_torch():
    """PROMOTE and CAN_CAST are torch.promote_types and torch.can_cast, entry for entry."""
    torch = pytest.importorskip("torch")
    for a in ALL_DTYPES:
        for b in ALL_DTYPES:
            ta, tb = _torch_dtype(torch, a), _torch_dtype(torch, b)
            assert torch.promote_types(ta, tb) == _torch_dtype(torch, PROMOTE[(a, b)]), (a, b)
            assert torch.can_cast(ta, tb) == CAN_CAST[(a, b)], (a, b)


@_SETTINGS
@given(st.lists(operands, min_size=2, max_size=2).filter(lambda ops: any(k != "number" for k, _ in ops)))
def test_reference_result_type_matches_torch(specs):
    """opdb's reference_result_type is torch.result_type's rule on drawn operand pairs."""
    torch = pytest.importorskip("torch")
    ours = [_build(s) for s in specs]
    theirs = [torch.tensor(x.tolist(), dtype=_torch_dtype(torch, x.dtype)) if isinstance(x, et.Tensor) else x
              for x in ours]
    assert torch.result_type(*theirs) == _torch_dtype(torch, reference_result_type(ours))


def test_to_another_tensor_takes_its_dtype_and_device():
    x = et.ones(2)
    assert x.to(et.zeros(1, dtype=et.float64)).dtype is et.float64
    assert x.to(et.zeros(1, dtype=et.int32), copy=True).dtype is et.int32
