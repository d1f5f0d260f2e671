"""Shape ops (repeat, tile, repeat_interleave, flip, roll, rot90, tril/triu, meshgrid,
broadcast_to/broadcast_tensors, view errors) against NumPy, on contiguous, transposed
and 0-d inputs, with PyTorch's error messages."""
import numpy as np
import pytest

import ember_tensor as E
from cuda_guard import DEVICES, cpu_result
from index_cases import SIGNED, check_on, layouts, lib_of, typed

BASE = np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 7.5


def _inputs():
    """(label, ember tensor, the same values in NumPy): contiguous and non-contiguous."""
    contiguous = E.tensor(BASE)
    transposed = E.tensor(np.ascontiguousarray(BASE.transpose(2, 1, 0))).permute(2, 1, 0)
    assert not transposed.is_contiguous()
    sliced = E.tensor(np.concatenate([BASE, BASE], axis=2))[:, :, ::2]
    return [("contiguous", contiguous, BASE), ("permuted", transposed, BASE),
            ("strided", sliced, np.concatenate([BASE, BASE], axis=2)[:, :, ::2])]


def _tril_np(x, k, lower):
    rows, cols = x.shape[-2:]
    mask = np.arange(cols)[None, :] - np.arange(rows)[:, None]
    return np.where(mask <= k if lower else mask >= k, x, 0)


CASES = [
    # (name, ember op, NumPy reference)
    ("repeat", lambda t: t.repeat(2, 1, 3), lambda a: np.tile(a, (2, 1, 3))),
    ("repeat_new_dims", lambda t: t.repeat(2, 1, 1, 2), lambda a: np.tile(a, (2, 1, 1, 2))),
    ("repeat_zero", lambda t: t.repeat(1, 0, 1), lambda a: np.tile(a, (1, 0, 1))),
    ("tile_short", lambda t: t.tile((2,)), lambda a: np.tile(a, (1, 1, 2))),
    ("tile_long", lambda t: E.tile(t, (2, 1, 1, 1)), lambda a: np.tile(a, (2, 1, 1, 1))),
    ("repeat_interleave_flat", lambda t: t.repeat_interleave(2), lambda a: np.repeat(a, 2)),
    ("repeat_interleave_dim", lambda t: t.repeat_interleave(3, dim=1), lambda a: np.repeat(a, 3, axis=1)),
    ("repeat_interleave_tensor", lambda t: t.repeat_interleave(E.tensor([1, 0, 2]), dim=1),
     lambda a: np.repeat(a, [1, 0, 2], axis=1)),
    ("repeat_interleave_one_elem", lambda t: E.repeat_interleave(t, E.tensor([2]), dim=-1),
     lambda a: np.repeat(a, 2, axis=-1)),
    ("flip_one", lambda t: t.flip(0), lambda a: np.flip(a, 0)),
    ("flip_many", lambda t: E.flip(t, (0, -1)), lambda a: np.flip(a, (0, 2))),
    ("flip_none", lambda t: t.flip(()), lambda a: a),
    ("flip_keyword", lambda t: E.flip(t, dims=[1]), lambda a: np.flip(a, 1)),
    ("tile_varargs", lambda t: t.tile(2, 1), lambda a: np.tile(a, (1, 2, 1))),
    ("tile_keyword", lambda t: E.tile(t, dims=(1, 1, 1, 2)), lambda a: np.tile(a, (1, 1, 1, 2))),
    ("fliplr", E.fliplr, np.fliplr),
    ("flipud", E.flipud, np.flipud),
    ("roll_flat", lambda t: t.roll(5), lambda a: np.roll(a, 5)),
    ("roll_dim", lambda t: t.roll(-1, 1), lambda a: np.roll(a, -1, 1)),
    ("roll_dims", lambda t: E.roll(t, (1, 7), (0, 2)), lambda a: np.roll(a, (1, 7), (0, 2))),
    ("rot90", lambda t: t.rot90(), lambda a: np.rot90(a)),
    ("rot90_k2", lambda t: t.rot90(2, (1, 2)), lambda a: np.rot90(a, 2, (1, 2))),
    ("rot90_k3", lambda t: E.rot90(t, 3, [2, 0]), lambda a: np.rot90(a, 3, (2, 0))),
    ("rot90_neg", lambda t: t.rot90(-1, (0, 1)), lambda a: np.rot90(a, -1, (0, 1))),
    ("rot90_k0", lambda t: t.rot90(4), lambda a: a),
    ("tril", lambda t: t.tril(), lambda a: _tril_np(a, 0, True)),
    ("tril_neg", lambda t: E.tril(t, -1), lambda a: _tril_np(a, -1, True)),
    ("triu", lambda t: t.triu(), lambda a: _tril_np(a, 0, False)),
    ("triu_pos", lambda t: E.triu(t, 2), lambda a: _tril_np(a, 2, False)),
    ("broadcast_to", lambda t: E.broadcast_to(t[:, :1], (5, 2, 3, 4)),
     lambda a: np.broadcast_to(a[:, :1], (5, 2, 3, 4))),
    ("swapaxes", lambda t: t.swapaxes(0, 2), lambda a: np.swapaxes(a, 0, 2)),
]


@pytest.mark.parametrize("name,op,ref", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("layout", ["contiguous", "permuted", "strided"])
def test_shape_op_matches_numpy(name, op, ref, layout):
    _, tensor, array = next(i for i in _inputs() if i[0] == layout)
    result = op(tensor)
    expected = ref(array)
    assert tuple(result.shape) == expected.shape
    np.testing.assert_array_equal(result.numpy(), expected)
    assert result.dtype == tensor.dtype


@pytest.mark.parametrize("name,op,expected", [
    ("repeat", lambda t: t.repeat(2, 3), np.full((2, 3), 5.0)),
    ("tile", lambda t: t.tile((2,)), np.full((2,), 5.0)),
    ("repeat_interleave", lambda t: t.repeat_interleave(3), np.full((3,), 5.0)),
    ("flip", lambda t: t.flip(0), np.array(5.0)),
    ("roll", lambda t: t.roll(1), np.array(5.0)),
    ("broadcast_to", lambda t: E.broadcast_to(t, (2,)), np.full((2,), 5.0)),
])
def test_zero_dim_inputs(name, op, expected):
    result = op(E.tensor(5.0))
    assert tuple(result.shape) == expected.shape
    np.testing.assert_array_equal(result.numpy(), expected)


def test_copies_do_not_share_storage():
    x = E.arange(6.0).reshape(2, 3)
    for result in (x.repeat(1, 1), x.flip(()), x.roll(0), x.rot90(0), x.tile((1,)), x.tril(5)):
        result.fill_(-1.0)
    np.testing.assert_array_equal(x.numpy(), np.arange(6.0).reshape(2, 3))


def test_broadcast_to_is_a_view():
    x = E.ones(3)
    y = E.broadcast_to(x, (2, 3))
    assert y.stride() == (0, 1) and y.untyped_storage() is x.untyped_storage()


def test_in_place_triangles():
    x = E.ones(3, 3)
    assert x.tril_(-1) is x
    np.testing.assert_array_equal(x.numpy(), np.tril(np.ones((3, 3)), -1))
    y = E.ones(2, 3, 3)
    y.triu_(1)
    np.testing.assert_array_equal(y.numpy(), np.triu(np.ones((2, 3, 3)), 1))


def test_triangles_keep_bool_and_int_dtypes():
    b = E.ones(3, 3, dtype=E.bool).tril()
    assert b.dtype == E.bool and b.numpy().tolist() == np.tril(np.ones((3, 3), bool)).tolist()
    assert E.ones(2, 2, dtype=E.int64).triu().dtype == E.int64


@pytest.mark.parametrize("indexing", ["ij", "xy"])
def test_meshgrid_matches_numpy(indexing):
    a, b, c = np.arange(3), np.arange(4) * 10, np.arange(2) * 100
    grids = E.meshgrid(E.tensor(a), E.tensor(b), E.tensor(c), indexing=indexing)
    expected = np.meshgrid(a, b, c, indexing=indexing)
    assert len(grids) == 3
    for g, e in zip(grids, expected):
        np.testing.assert_array_equal(g.numpy(), e)
    list_form = E.meshgrid([E.tensor(a), E.tensor(b)], indexing=indexing)
    for g, e in zip(list_form, np.meshgrid(a, b, indexing=indexing)):
        np.testing.assert_array_equal(g.numpy(), e)


def test_meshgrid_of_zero_dim_tensors():
    x, y = E.meshgrid(E.tensor(1.0), E.ones(2), indexing="ij")
    assert tuple(x.shape) == (1, 2) and tuple(y.shape) == (1, 2)


def test_broadcast_tensors():
    a, b = E.broadcast_tensors(E.ones(3, 1), E.arange(4.0))
    assert tuple(a.shape) == tuple(b.shape) == (3, 4)
    np.testing.assert_array_equal(b.numpy(), np.broadcast_to(np.arange(4.0), (3, 4)))


def test_repeat_interleave_of_counts():
    assert E.repeat_interleave(E.tensor([1, 0, 3])).tolist() == [0, 2, 2, 2]


ERRORS = [
    (lambda: E.ones(2, 3).repeat(2), RuntimeError,
     "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor"),
    (lambda: E.ones(2, 3).repeat(-1, 2), RuntimeError, r"Trying to create tensor with negative dimension -2: \[-2, 6\]"),
    (lambda: E.ones(2, 3).flip(0, 0), RuntimeError, "dim 0 appears multiple times in the list of dims"),
    (lambda: E.ones(2, 3).flip(2), IndexError, r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)"),
    (lambda: E.ones(2, 3).roll((1, 2), (0,)), RuntimeError, "shifts and dimensions must align. shifts: 2, dims:1"),
    (lambda: E.ones(2, 3).rot90(1, [0]), RuntimeError, "expected total rotation dims == 2, but got dims = 1"),
    (lambda: E.ones(3).rot90(), RuntimeError, "expected total dims >= 2, but got total dims = 1"),
    (lambda: E.ones(2, 3).rot90(1, [0, 0]), RuntimeError, "expected rotation dims to be different, but got dim0 = 0 and dim1 = 0"),
    (lambda: E.ones(3).tril(), RuntimeError, "tril: input tensor must have at least 2 dimensions"),
    (lambda: E.ones(3).triu(), RuntimeError, "triu: input tensor must have at least 2 dimensions"),
    (lambda: E.meshgrid(E.ones(2), E.ones(3), indexing="foo"), RuntimeError,
     'torch.meshgrid: indexing must be one of "xy" or "ij", but received: foo'),
    (lambda: E.meshgrid(), RuntimeError, "meshgrid expects a non-empty TensorList"),
    (lambda: E.meshgrid(E.ones(2), E.ones(2, dtype=E.float64)), RuntimeError,
     "meshgrid expects all tensors to have the same dtype"),
    (lambda: E.meshgrid(E.ones(2, 2)), RuntimeError, "Expected 0D or 1D tensor in the tensor list"),
    (lambda: E.ones(2, 3).repeat_interleave(E.tensor([1, 2])), RuntimeError,
     r"repeats must have the same size as input along dim, but got repeats.size\(0\) = 2 and input.size\(0\) = 6"),
    (lambda: E.ones(2, 3).repeat_interleave(E.tensor([-1, 2]), dim=0), RuntimeError, "repeats can not be negative"),
    (lambda: E.ones(2, 3).repeat_interleave(-1), RuntimeError, "Repeats must be non-negative"),
    (lambda: E.fliplr(E.ones(3)), RuntimeError, r"Input must be >= 2-d."),
    (lambda: E.flipud(E.tensor(1.0)), RuntimeError, r"Input must be >= 1-d."),
    (lambda: E.broadcast_to(E.ones(2, 3), (3, 3)), RuntimeError,
     r"The expanded size of the tensor \(3\) must match the existing size \(2\) at non-singleton dimension 0"),
    (lambda: E.arange(6.0).view(3, 2).t().view(6), RuntimeError,
     r"view size is not compatible with input tensor's size and stride \(at least one dimension spans "
     r"across two contiguous subspaces\). Use .reshape\(...\) instead."),
]


@pytest.mark.parametrize("call,exc,message", ERRORS, ids=[str(i) for i in range(len(ERRORS))])
def test_errors_match_pytorch(call, exc, message):
    with pytest.raises(exc, match=message):
        call()


@pytest.mark.parametrize("call", [e[0] for e in ERRORS[:9]], ids=[str(i) for i in range(9)])
def test_errors_match_pytorch_oracle(call):
    """The same calls raise the same messages in PyTorch (when it is installed)."""
    torch = pytest.importorskip("torch")
    import ember_tensor
    src = call.__code__
    # Re-run the very same lambda with `E` bound to torch.
    fn = type(call)(src, {**call.__globals__, "E": torch})
    with pytest.raises(Exception) as theirs:
        fn()
    with pytest.raises(type(theirs.value)) as ours:
        call()
    assert str(theirs.value).splitlines()[0] == str(ours.value).splitlines()[0]
    assert ember_tensor is E


def test_shape_ops_match_numpy_on_random_shapes_hypothesis():
    hypothesis = pytest.importorskip("hypothesis")
    from hypothesis import strategies as st

    @hypothesis.settings(max_examples=40, deadline=None, derandomize=True)
    @hypothesis.given(st.lists(st.integers(0, 3), min_size=0, max_size=3), st.data())
    def check(shape, data):
        array = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
        t = E.tensor(array)
        ndim = len(shape)
        reps = data.draw(st.lists(st.integers(0, 2), min_size=ndim, max_size=ndim + 1))
        np.testing.assert_array_equal(t.repeat(*reps).numpy() if reps else t.repeat(()).numpy(),
                                      np.tile(array, reps) if reps else array)
        np.testing.assert_array_equal(t.tile(tuple(reps)).numpy(), np.tile(array, reps))
        if ndim:
            dims = data.draw(st.lists(st.integers(0, ndim - 1), unique=True, max_size=ndim))
            np.testing.assert_array_equal(t.flip(dims).numpy(), np.flip(array, dims))
            shifts = data.draw(st.lists(st.integers(-5, 5), min_size=len(dims), max_size=len(dims)))
            if dims:
                np.testing.assert_array_equal(t.roll(shifts, dims).numpy(), np.roll(array, shifts, dims))
            dim = data.draw(st.integers(0, ndim - 1))
            count = data.draw(st.integers(0, 2))
            np.testing.assert_array_equal(t.repeat_interleave(count, dim).numpy(), np.repeat(array, count, dim))
        if ndim >= 2:
            k = data.draw(st.integers(-3, 3))
            np.testing.assert_array_equal(t.tril(k).numpy(), np.tril(array, k))
            np.testing.assert_array_equal(t.triu(k).numpy(), np.triu(array, k))
            np.testing.assert_array_equal(t.rot90(k, (0, ndim - 1)).numpy(), np.rot90(array, k, (0, ndim - 1)))

    check()


def test_atleast_nd_match_numpy():
    for array in (np.array(2.0), np.arange(3.0), np.ones((2, 3)), np.ones((2, 3, 4))):
        t = E.tensor(array)
        for ours, theirs in ((E.atleast_1d, np.atleast_1d), (E.atleast_2d, np.atleast_2d),
                             (E.atleast_3d, np.atleast_3d)):
            result = ours(t)
            assert result.untyped_storage() is t.untyped_storage()  # a view
            np.testing.assert_array_equal(result.numpy(), theirs(array))
    pair = E.atleast_2d(E.tensor(1.0), E.ones(2))
    assert [tuple(p.shape) for p in pair] == [(1, 1), (1, 2)]
    assert [tuple(p.shape) for p in E.atleast_1d([E.tensor(1.0)])] == [(1,)]


def test_block_diag_matches_pytorch_layout():
    result = E.block_diag(E.ones(2, 2), E.tensor(3.0), E.arange(3.0), E.zeros(1, 2, dtype=E.int64))
    expected = np.zeros((5, 8))
    expected[:2, :2] = 1
    expected[2, 2] = 3
    expected[3, 3:6] = [0, 1, 2]
    assert result.dtype == E.float32
    np.testing.assert_array_equal(result.numpy(), expected)
    assert tuple(E.block_diag(E.ones(0, 2), E.ones(1, 0)).shape) == (1, 2)
    with pytest.raises(RuntimeError, match="Input tensors must have 2 or fewer dimensions. Input 0 has 3 dimensions"):
        E.block_diag(E.ones(2, 2, 2))


# --- every dtype and layout, on every device -------------------------------------------------
# On the CPU against PyTorch where installed, on CUDA (the simulator in CI) against the CPU,
# computed on the device (index_cases.check_on).

FOUR_D = np.arange(2 * 3 * 4 * 5).reshape(2, 3, 4, 5)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [E.float32, E.float16, E.bfloat16, E.int64, E.int8, E.bool], ids=str)
def test_element_moves_of_every_dtype(dtype, device):
    """flip, roll, rot90, tril/triu, diag, diag_embed, cat and stack move every dtype's
    values exactly, from both layouts, a permuted 4-d view, 0-d and empty inputs."""
    moves = [lambda t: t.flip(0), lambda t: t.flip(0, 1), lambda t: t.flip(-1), lambda t: lib_of(t).fliplr(t),
             lambda t: lib_of(t).rot90(t, 1), lambda t: t.roll(1, 0), lambda t: t.roll((2, -1), (1, 0)), lambda t: t.roll(5),
             lambda t: t.tril(), lambda t: t.triu(1)]
    for x in layouts(SIGNED, dtype):
        for move in moves:
            check_on(device, move, x)
    check_on(device, lambda t: t.flip(0, 2), typed(FOUR_D[:, :, :2, :3], dtype).permute(2, 0, 3, 1))
    check_on(device, lambda t: t.flip(()), typed(7, dtype))
    check_on(device, lambda t: t.flip(0), E.zeros(0, 2, dtype=dtype))
    with pytest.raises(RuntimeError):
        cpu_result(device, lambda t: t.flip(0, 0), typed(SIGNED, dtype))
    x = typed(SIGNED, dtype)
    check_on(device, lambda t: lib_of(t).diag(t, 1), x)
    check_on(device, lambda t: lib_of(t).diag(t[0], -1), x)
    check_on(device, lambda t: lib_of(t).diag_embed(t), x)
    check_on(device, lambda t: lib_of(t).cat([t, t.flip(0)], 1), x)
    check_on(device, lambda t: lib_of(t).stack([t[0], t[2]]), x)
    check_on(device, lambda t: lib_of(t).rot90(t, 1).float(), x)  # a cast of a moved, column-major view


@pytest.mark.parametrize("device", DEVICES)
def test_repeat_interleave_on_every_device(device):
    """repeat_interleave of counts (with output_size, empty, many chunks, one long run) and of
    both layouts by int64/int32 tensors and numbers; errors for negative, mismatched and float counts."""
    counts = E.tensor([2, 0, 3])
    check_on(device, lambda c: lib_of(c).repeat_interleave(c), counts)
    check_on(device, lambda c: lib_of(c).repeat_interleave(c, output_size=5), counts)
    check_on(device, lambda c: lib_of(c).repeat_interleave(c), E.tensor([], dtype=E.int64))
    # 61 counts: a scan over uneven chunks, the last one short; then one run of 40
    check_on(device, lambda c: lib_of(c).repeat_interleave(c), E.tensor(np.random.default_rng(0).integers(0, 4, 61)))
    check_on(device, lambda c: lib_of(c).repeat_interleave(c), E.tensor([0, 0, 40, 0]))
    for x in layouts(SIGNED[:, :3]):
        check_on(device, lambda t, c: t.repeat_interleave(c, dim=0), x, counts)
        check_on(device, lambda t, c: t.repeat_interleave(c, dim=1), x, counts.int())
        check_on(device, lambda t: t.repeat_interleave(2, dim=1), x)
        check_on(device, lambda t: t.repeat_interleave(2), x)
    for call, args in ((lambda c: lib_of(c).repeat_interleave(c), [E.tensor([1, -1])]),
                       (lambda t, c: t.repeat_interleave(c, dim=0), [E.tensor(SIGNED), counts[:2]]),
                       (lambda c: lib_of(c).repeat_interleave(c), [E.tensor([1., 2.])])):
        with pytest.raises(RuntimeError):
            cpu_result(device, call, *args)


@pytest.mark.parametrize("numel, shape, message", [
    (6, (-2, -1, -1), "invalid shape dimension -2 at index 0 of shape [-2, -1, -1]"),
    (6, (2, -1, -1), "only one dimension can be inferred"),
    (6, (-2, -3), "invalid shape dimension -2 at index 0 of shape [-2, -3]"),
    (0, (0, -1), "cannot reshape tensor of 0 elements into shape [0, -1] because the unspecified "
                 "dimension size -1 can be any value and is ambiguous"),
    (6, (0, -1), "shape '[0, -1]' is invalid for input of size 6"),
    (6, (4, -1), "shape '[4, -1]' is invalid for input of size 6"),
    (6, (4, 2), "shape '[4, 2]' is invalid for input of size 6"),
])
@pytest.mark.parametrize("method", ["view", "reshape"])
def test_bad_shapes_raise_pytorchs_errors(numel, shape, message, method):
    # PyTorch 2.13's infer_size checks the dims left to right, then the element count.
    with pytest.raises(RuntimeError) as error:
        getattr(E.empty(numel), method)(*shape)
    assert str(error.value) == message


@pytest.mark.parametrize("shape, expected", [((-1,), (6,)), ((2, -1), (2, 3)), ((-1, 1, 2), (3, 1, 2)),
                                             ([3, 2], (3, 2)), ((E.tensor(3), 2), (3, 2))])
def test_view_shapes_fill_the_inferred_dim(shape, expected):
    x = E.arange(6.)
    viewed = x.view(*shape) if isinstance(shape, tuple) else x.view(shape)
    assert tuple(viewed.shape) == expected
    assert viewed.data_ptr() == x.data_ptr()
