"""The CPU row loops of broadcasting elementwise ops (a bias row, a per-row column, a
per-channel scale, an outer product): every layout they take, against NumPy, and bit for
bit against the 4-d strided loop, which the same operands take when made non-contiguous
(every other element of a wider tensor)."""
import numpy as np
import pytest

import ember_tensor as et
from ember_tensor import fusion
from ember_tensor._backends.cpu import elementwise as cpu_elementwise
from ember_tensor._backends.plan import pair_row_layout, row_layout

RNG = np.random.default_rng(0)

# (shape a, shape b, the row loop's kinds: None where the layout takes the strided loop)
PAIRS = [
    ((64, 512), (512,), "rr"),                 # a bias row
    ((256, 33), (256, 1), "rk"),               # one value a row
    ((7, 1), (1, 9), "kr"),                    # an outer product
    ((4, 5, 6), (6,), "rr"),                   # (B, T, C) + (C,)
    ((2, 3, 4, 5), (1, 3, 1, 1), "rk"),        # (N, C, H, W) * (1, C, 1, 1): a value a row of H*W
    ((3, 1, 5), (1, 4, 1), "rk"),
    ((2, 3, 4, 5, 6), (6,), "rr"),             # five dims that merge to two
    ((2, 1, 3, 1, 4, 1, 2), (1, 2, 1, 3, 1, 4, 1), None),  # seven alternating dims: strided
    ((), (3, 4), "kr"),                        # a 0-d tensor
    ((0, 5), (5,), "rr"), ((5, 0), (5, 1), "rk"),          # no elements
]


def _strided(array):
    """A tensor of `array`'s values whose last dim has stride 2: the strided loop's operand."""
    array = np.asarray(array)
    if array.ndim == 0:
        return et.from_numpy(array.copy())
    wide = np.zeros(array.shape[:-1] + (2 * array.shape[-1],), array.dtype)
    wide[..., ::2] = array
    return et.from_numpy(wide)[..., ::2]


def _values(shape, dtype):
    if dtype == np.bool_:
        return np.asarray(RNG.random(shape) > 0.5)
    return np.asarray(RNG.standard_normal(shape) * 10).astype(dtype)


@pytest.mark.parametrize("shape_a, shape_b, kinds", PAIRS, ids=str)
def test_pair_layouts_are_the_general_ones(shape_a, shape_b, kinds):
    """The layout found from the shapes alone (binary_fresh) is `row_layout`'s of the
    broadcast views (`run`'s)."""
    found = pair_row_layout(shape_a, shape_b)
    assert (found[4] if found else None) == kinds
    if found is None or 0 in found[0]:
        return
    out_shape = found[0]
    views = [np.broadcast_to(np.zeros(s, np.float32), out_shape) for s in (shape_a, shape_b)]
    strides = [[st // 4 for st in v.strides] for v in views] + [list(np.empty(out_shape, np.float32).strides)]
    strides[-1] = [st // 4 for st in strides[-1]]
    shape, outer, general_kinds = row_layout(out_shape, strides)
    assert (tuple(shape), tuple(outer), general_kinds) == (found[1], found[2:4], found[4])


@pytest.mark.parametrize("shape_a, shape_b, kinds", PAIRS, ids=str)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.int32])
def test_binary_ops_match_numpy_and_the_strided_loop(shape_a, shape_b, kinds, dtype):
    a, b = _values(shape_a, dtype), _values(shape_b, dtype)
    x, y = et.from_numpy(a.copy()), et.from_numpy(b.copy())
    xs, ys = _strided(a), _strided(b)
    for op, reference in ((et.add, np.add), (et.mul, np.multiply), (et.sub, np.subtract),
                          (et.maximum, np.maximum), (et.lt, np.less)):
        got = op(x, y).numpy()
        np.testing.assert_array_equal(got, reference(a, b))
        np.testing.assert_array_equal(op(y, x).numpy(), reference(b, a))
        assert got.tobytes() == op(xs, ys).numpy().tobytes()
    if dtype in (np.float32, np.float64):  # functions that round: bit for bit with the strided loop
        for op in (et.atan2, et.pow, et.hypot):
            p, q = op(x.abs(), y), op(xs.abs(), ys)
            assert p.numpy().tobytes() == q.numpy().tobytes()
        np.testing.assert_allclose(et.atan2(x, y).numpy(), np.arctan2(a, b), rtol=1e-6)


@pytest.mark.parametrize("shape_a, shape_b", [(p[0], p[1]) for p in PAIRS], ids=str)
def test_bool_ops(shape_a, shape_b):
    a, b = _values(shape_a, np.bool_), _values(shape_b, np.bool_)
    x, y = et.from_numpy(a.copy()), et.from_numpy(b.copy())
    np.testing.assert_array_equal(et.logical_and(x, y).numpy(), a & b)
    np.testing.assert_array_equal((x ^ y).numpy(), a ^ b)
    np.testing.assert_array_equal(et.logical_xor(_strided(a), _strided(b)).numpy(), a ^ b)


@pytest.mark.parametrize("shapes", [
    ((64, 32), (32,), (64, 1)),                # a row, a column: kinds r, r, k
    ((2, 3, 4, 5), (1, 3, 1, 1), (5,)),        # per-channel values next to a row
    ((7, 1), (1, 9), ()),                      # outer product with a 0-d weight
    ((0, 3), (3,), (0, 1)),
], ids=str)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_ternary_ops(shapes, dtype):
    a, b, w = (_values(s, dtype) for s in shapes)
    x, y, z = (et.from_numpy(v.copy()) for v in (a, b, w))
    mask = z > 0
    got = et.where(mask, x, y)
    np.testing.assert_array_equal(got.numpy(), np.where(w > 0, a, b))
    assert got.numpy().tobytes() == et.where(_strided(w) > 0, _strided(a), _strided(b)).numpy().tobytes()
    np.testing.assert_array_equal(et.where(mask, x, 0.5).numpy(), np.where(w > 0, a, dtype(0.5)))
    weight = z.abs() / 20
    got = et.lerp(x, y, weight)
    expected = et.lerp(_strided(a), _strided(b), _strided(np.abs(w)) / 20)
    assert got.numpy().tobytes() == expected.numpy().tobytes()
    if 0 not in got.shape:
        np.testing.assert_allclose(got.numpy(), a + np.abs(w) / 20 * (b - a), rtol=1e-4, atol=1e-4)


def test_matches_pytorch():
    torch = pytest.importorskip("torch")
    for shape_a, shape_b, _ in PAIRS:
        a, b = _values(shape_a, np.float32), _values(shape_b, np.float32)
        for op in ("add", "mul", "div", "atan2"):
            got = getattr(et, op)(et.from_numpy(a.copy()), et.from_numpy(b.copy())).numpy()
            expected = getattr(torch, op)(torch.from_numpy(a.copy()), torch.from_numpy(b.copy())).numpy()
            np.testing.assert_allclose(got, expected, rtol=2e-7 if op != "atan2" else 1e-6)


def test_unary_op_of_an_expanded_tensor():
    """A unary op over a broadcast view (kind 'k': one value a row)."""
    a = _values((6, 1), np.float32)
    x = et.from_numpy(a.copy()).expand(6, 10)
    np.testing.assert_array_equal(x.neg().numpy(), -np.broadcast_to(a, (6, 10)))
    assert x.exp().numpy().tobytes() == _strided(np.broadcast_to(a, (6, 10)).copy()).exp().numpy().tobytes()


@pytest.mark.parametrize("shapes", [((600, 300), (300,)), ((600, 300), (600, 1)), ((1, 1 << 18), (1, 1)),
                                    ((4, 64, 32, 32), (1, 64, 1, 1)), ((3, 90000), (3, 1))], ids=str)
def test_large_sizes_split_over_threads(shapes, monkeypatch):
    threads_before = et.get_num_threads()
    et.set_num_threads(2)
    try:
        calls = []
        split = cpu_elementwise.threads.split
        monkeypatch.setattr(cpu_elementwise.threads, "split", lambda *args, **kw: calls.append(1) or split(*args, **kw))
        a, b = _values(shapes[0], np.float32), _values(shapes[1], np.float32)
        x, y = et.from_numpy(a.copy()), et.from_numpy(b.copy())
        np.testing.assert_array_equal((x + y).numpy(), a + b)
        np.testing.assert_array_equal(et.where(y > 0, x, y).numpy(), np.where(b > 0, a, b))
        out = et.empty(x.shape)
        et.mul(x, y, out=out)
        np.testing.assert_array_equal(out.numpy(), a * b)
        if et.get_num_threads() > 1 and cpu_elementwise.threads.part_count() > 1:
            assert len(calls) == 3
    finally:
        et.set_num_threads(threads_before)


@pytest.mark.parametrize("shape_a, shape_b", [((64, 512), (512,)), ((256, 33), (256, 1)), ((2, 3, 4, 5), (1, 3, 1, 1))],
                         ids=str)
def test_in_place_and_out(shape_a, shape_b):
    a, b = _values(shape_a, np.float32), _values(shape_b, np.float32)
    x = et.from_numpy(a.copy())
    x.add_(et.from_numpy(b.copy()))
    np.testing.assert_array_equal(x.numpy(), a + b)
    x.mul_(et.from_numpy(b.copy()))
    np.testing.assert_array_equal(x.numpy(), (a + b) * b)
    out = et.empty(shape_a)
    et.sub(et.from_numpy(a.copy()), et.from_numpy(b.copy()), out=out)
    np.testing.assert_array_equal(out.numpy(), a - b)


def test_custom_kernel_takes_the_row_loops():
    """ember.kernel's loops compile the row variants on demand, as the built-in ops'."""
    kernel = getattr(et, "kernel", None)
    if kernel is None:
        pytest.skip("ember_tensor.kernel is not provided")

    @kernel
    def scaled_diff(x, y):
        return (x - y) * 0.5

    a, b = _values((64, 32), np.float64), _values((64, 1), np.float64)
    got = scaled_diff(et.from_numpy(a.copy()), et.from_numpy(b.copy()))
    np.testing.assert_array_equal(got.numpy(), (a - b) * 0.5)


@pytest.mark.parametrize("call, kinds", [
    (lambda x, b, c: x + b, "rr"),                          # binary_fresh
    (lambda x, b, c: et.add(x, c, out=et.empty(x.shape)), "rk"),   # run, out=
    (lambda x, b, c: et.where(c > 0, x, b), "krr"),         # run, ternary
], ids=["fresh", "out", "where"])
def test_broadcast_layouts_take_the_row_loops(call, kinds, monkeypatch):
    taken = []
    loop = cpu_elementwise.BuiltinLoops.loop
    monkeypatch.setattr(cpu_elementwise.BuiltinLoops, "loop", lambda self, k: taken.append(k) or loop(self, k))
    monkeypatch.setattr(cpu_elementwise, "_fresh_rows", {})
    x, b, c = et.ones(8, 16), et.ones(16), et.ones(8, 1)
    call(x, b, c)
    assert kinds in taken and not any("s" in k for k in taken)


@pytest.mark.parametrize("shape_b", [(512,), (64, 1), (1, 1)], ids=str)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fused_programs_take_the_row_loops(shape_b, dtype):
    """A fused program over a bias row or a column: the eager ops' results bit for bit,
    new and written in place (``reuse=``), and the same as with strided operands."""
    prog = fusion.FusedElementwise([("mul", (("in", 0), ("in", 1))), ("add", (("step", 0), ("in", 0))),
                                    ("relu", (("step", 1),))], 2, name="bias_relu")
    a, b = _values((64, 512), dtype), _values(shape_b, dtype)
    x, y = et.from_numpy(a.copy()), et.from_numpy(b.copy())
    eager = et.relu(x * y + x)
    assert prog(x, y).numpy().tobytes() == eager.numpy().tobytes()
    assert prog(_strided(a), _strided(b)).numpy().tobytes() == eager.numpy().tobytes()
    target = et.from_numpy(a.copy())
    assert prog(target, y, reuse=0) is target
    assert target.numpy().tobytes() == eager.numpy().tobytes()
