"""x[key] and x[key] = value: the seed's Advanced Indexing examples, tables of keys against
NumPy (whose advanced-indexing rules PyTorch follows), PyTorch's own departures from NumPy,
views vs copies, errors, and hypothesis over random shapes and index arrays (x[key] = v
with them: the rest of x[key] = v is test_setitem.py's).

The tests taking `device` hold the CPU to the reference (or to PyTorch, `index_cases`)
and CUDA (Numba's simulator in CI) to the CPU, computed on the device (`cuda_guard`).
"""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import ember_tensor as torch
from cuda_guard import DEVICES, cpu_result, matches_the_cpu
from index_cases import ALL_DTYPES, SIGNED, assigned, check_on, layouts


def _x555():
    return torch.arange(125.).reshape(5, 5, 5)


# --- the seed: pytorch-0.2 release notes, "Advanced Indexing" ---------------------------

def test_seed_pure_integer_array_indexing():
    x = _x555()
    got = x[[1, 2], [3, 2], [1, 0]]
    assert got.shape == (2,)
    assert got.tolist() == [x[1][3][1].item(), x[2][2][0].item()]


def test_seed_broadcasting_and_duplicates():
    x = _x555()
    got = x[[2, 3, 2], [0], [1]]
    assert got.tolist() == [x[2][0][1].item(), x[3][0][1].item(), x[2][0][1].item()]


def test_seed_arbitrary_indexer_shapes():
    x = _x555()
    got = x[[[1, 0], [0, 1]], [0], [1]]
    assert got.shape == (2, 2)
    a, b = x[1][0][1].item(), x[0][0][1].item()
    assert got.tolist() == [[a, b], [b, a]]


def test_seed_colon_and_ellipsis():
    x = _x555()
    for got in (x[[0, 3], :, :], x[[0, 3], ...]):
        assert got.shape == (2, 5, 5)
        assert torch.equal(got[0], x[0]) and torch.equal(got[1], x[3])


def test_seed_tensors_as_indices():
    x = _x555()
    y = torch.LongTensor([0, 2, 4])
    got = x[y, :, :]
    assert got.shape == (3, 5, 5)
    for i, j in enumerate([0, 2, 4]):
        assert torch.equal(got[i], x[j])


def test_seed_selection_with_less_than_ndim():
    x = _x555()
    got = x[[1, 3], ]
    assert got.shape == (2, 5, 5)
    assert torch.equal(got[0], x[1]) and torch.equal(got[1], x[3])


# --- keys against NumPy -----------------------------------------------------------------

A = np.arange(2 * 3 * 4 * 5).reshape(2, 3, 4, 5)
MASK = np.array([True, False, True])

NUMPY_KEYS = [
    (1,), (-1, 2), (slice(None, None, 2),), (slice(1, None), slice(None, None, 3)),
    (None, 0, None), (Ellipsis, 1), (0, Ellipsis, None), (Ellipsis,),
    ([1, 0],), ([[0, 1], [1, 0]],), (slice(None), [2, 0, 2]), ([0, 1], [2, 0]),
    ([0, 1], slice(None), [3, 1]),                 # non-adjacent: index dims go first
    (slice(None), [0, 2], [1, 3]),                 # adjacent after a slice: stay in place
    (slice(None), [[0], [2]], [1, 3]),             # broadcast index shapes
    (slice(None), [0, 2], slice(None), [1, 4]),
    (Ellipsis, [0, 4]), ([1], Ellipsis, [2]), (None, [1, 0], None, [2, 2]),
    (slice(None), MASK), (A[:, :, 0, 0] > 5,), (A > 60,), (slice(None), A[0, :, :, 0] % 2 == 0),
    ([0, 1], [True, False, True], [1, 2]),
    ([-1, -2],), (slice(None), [], ), ([],), (A < 0,),
]


def _getitem_on(device, x, key):
    """x[key] on the CPU, for the test's asserts; on CUDA first matched there, the key's
    tensors moved along (a list or array key is uploaded by the op)."""
    parts = list(key) if isinstance(key, (tuple, list)) else [key]
    tensors = [k for k in parts if isinstance(k, torch.Tensor)]

    def getitem(t, *moved):
        given = iter(moved)
        rebuilt = [next(given) if isinstance(k, torch.Tensor) else k for k in parts]
        return t[type(key)(rebuilt) if isinstance(key, (tuple, list)) else rebuilt[0]]
    return cpu_result(device, getitem, x, *tensors)


def _np_index(k):
    """A list entry of a key as NumPy reads it (an empty list indexes nothing, as int64)."""
    if isinstance(k, list):
        return np.array(k) if k else np.array([], dtype=np.int64)
    return k


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("key", NUMPY_KEYS, ids=[str(i) for i in range(len(NUMPY_KEYS))])
def test_getitem_matches_numpy(key, device):
    """Each key, with lists and with tensors as indices, selects what NumPy selects."""
    x = torch.tensor(A)
    np_key = tuple(_np_index(k) for k in key)
    torch_key = tuple(torch.tensor(k) if isinstance(k, np.ndarray) else k for k in key)
    expected = A[np_key]
    for k in (key, torch_key):
        got = _getitem_on(device, x, k)
        assert got.shape == expected.shape
        np.testing.assert_array_equal(got.numpy(), expected)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("key", NUMPY_KEYS[:20], ids=[str(i) for i in range(20)])
def test_getitem_non_contiguous_input(key, device):
    """A permuted input (no unit stride) selects what NumPy selects."""
    base = np.arange(5 * 4 * 3 * 2).reshape(5, 4, 3, 2)
    ref = base.transpose(3, 2, 1, 0)                       # shape (2, 3, 4, 5), no unit strides
    x = torch.tensor(base).permute(3, 2, 1, 0)
    assert not x.is_contiguous()
    np_key = tuple(_np_index(k) for k in key)
    np.testing.assert_array_equal(_getitem_on(device, x, key).numpy(), ref[np_key])


# PyTorch selects with an int *before* advanced indexing, unlike NumPy (where an int next to
# an index array is itself an index array): these shapes are PyTorch's.
TORCH_ONLY = [
    ((0, slice(None), [0, 1]), (3, 2)),
    ((slice(None), 1, [0, 1, 2]), (2, 3)),
    ((torch.tensor(0), slice(None), [0, 1]), (3, 2)),
    ((True,), (1, 2, 3, 4)), ((False,), (0, 2, 3, 4)), ((torch.tensor(True),), (1, 2, 3, 4)),
    ((None, [0, 1], None, [1]), (2, 1, 1, 4)),
    ((torch.tensor([0, 1], dtype=torch.uint8),), (1, 3, 4)),   # legacy byte mask
    ((torch.tensor([1, 0], dtype=torch.int32),), (2, 3, 4)),
    ([0, slice(None)], (3, 4)),                                # a list meaning a tuple (legacy)
    ([[0, 1]], (2, 3, 4)),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("key,shape", TORCH_ONLY, ids=[str(i) for i in range(len(TORCH_ONLY))])
def test_getitem_pytorch_shapes(key, shape, device):
    """Keys where PyTorch departs from NumPy give PyTorch's shapes."""
    x = torch.arange(24).reshape(2, 3, 4)
    assert tuple(_getitem_on(device, x, key).shape) == shape


def test_0d_inputs():
    s = torch.tensor(5.)
    assert s[None].tolist() == [5.] and s[...].item() == 5.
    assert s[True].tolist() == [5.] and s[False].shape == (0,)
    with pytest.raises(IndexError, match="invalid index of a 0-dim tensor"):
        s[0]
    x = torch.arange(6).reshape(2, 3)
    assert x[torch.tensor(1)].tolist() == [3, 4, 5]
    assert x[torch.tensor(1), torch.tensor(2)].item() == 5


def test_basic_is_view_advanced_is_copy():
    x = torch.arange(12.).reshape(3, 4)
    v = x[1:, ::2]
    v[0, 0] = 100.
    assert x[1, 0].item() == 100.
    c = x[[1, 2]]
    c[0, 0] = -1.
    assert x[1, 0].item() == 100.


ERRORS = [
    (lambda x: x[::-1], ValueError, "step must be greater than zero"),
    (lambda x: x[::0], ValueError, "slice step cannot be zero"),
    (lambda x: x[5], IndexError, "index 5 is out of bounds for dimension 0 with size 3"),
    (lambda x: x[:, -5], IndexError, "index -5 is out of bounds for dimension 1 with size 4"),
    (lambda x: x[[5]], IndexError, "index 5 is out of bounds for dimension 0 with size 3"),
    (lambda x: x[[1], [7]], IndexError, "index 7 is out of bounds for dimension 1 with size 4"),
    (lambda x: x[:, [5]], IndexError, "index 5 is out of bounds for dimension 0 with size 4"),
    (lambda x: x[1, 2, 3], IndexError, "too many indices for tensor of dimension 2"),
    (lambda x: x[..., ...], IndexError, "an index can only have a single ellipsis"),
    (lambda x: x[torch.tensor([1.])], IndexError, "tensors used as indices must be long, int, byte or bool"),
    (lambda x: x[torch.tensor([True, False])], IndexError, r"The shape of the mask \[2\] at index 0"),
    (lambda x: x[[0, 1], [0, 1, 2]], IndexError,
     r"shape mismatch: indexing tensors could not be broadcast together with shapes \[2\], \[3\]"),
]


@pytest.mark.parametrize("fn,error,message", ERRORS, ids=[m[:30] for _, _, m in ERRORS])
def test_getitem_errors(fn, error, message):
    with pytest.raises(error, match=message):
        fn(torch.arange(12).reshape(3, 4))


def test_bfloat16_and_bool_move_by_bits():
    x = torch.tensor([1., 2., 3.], dtype=torch.bfloat16)
    assert x[[2, 0]].tolist() == [3., 1.]
    b = torch.tensor([True, False, True])
    assert b[[1, 2]].tolist() == [False, True]


# --- hypothesis ---------------------------------------------------------------------------

@st.composite
def _array_and_key(draw):
    shape = draw(st.lists(st.integers(1, 4), min_size=1, max_size=4))
    key = []
    for n in shape[:draw(st.integers(1, len(shape)))]:
        kind = draw(st.sampled_from(["slice", "array", "array", "int"]))
        if kind == "slice":
            start = draw(st.integers(-n, n))
            key.append(slice(start, None, draw(st.integers(1, 3))))
        elif kind == "int":
            key.append(draw(st.integers(-n, n - 1)))
        else:
            idx_shape = draw(st.sampled_from([(2,), (1,), (2, 1)]))
            key.append(np.array(draw(st.lists(st.integers(-n, n - 1), min_size=int(np.prod(idx_shape)),
                                              max_size=int(np.prod(idx_shape))))).reshape(idx_shape))
    return shape, tuple(key)


@settings(max_examples=60, deadline=None)
@given(_array_and_key())
def test_hypothesis_advanced_indexing_matches_numpy(case):
    shape, key = case
    arrays = [k for k in key if isinstance(k, np.ndarray)]
    ints = [k for k in key if isinstance(k, int)]
    if ints and arrays:
        return  # NumPy treats such ints as index arrays; PyTorch selects first (tested above)
    try:
        np.broadcast_shapes(*(a.shape for a in arrays))
    except ValueError:
        return
    ref = np.arange(int(np.prod(shape))).reshape(shape)
    x = torch.tensor(ref)
    torch_key = tuple(torch.tensor(k) if isinstance(k, np.ndarray) else k for k in key)
    np.testing.assert_array_equal(x[torch_key].numpy(), ref[key])
    value = -np.arange(ref[key].size).reshape(ref[key].shape) - 1
    ref_set = ref.copy()
    ref_set[key] = value
    x[torch_key] = torch.tensor(value)
    # With repeated positions the last write wins in both libraries.
    np.testing.assert_array_equal(x.numpy(), ref_set)


# --- against PyTorch itself (optional oracle) ----------------------------------------------

@st.composite
def _torch_key(draw):
    """Random shapes (size-0 dims included) and keys mixing every kind of entry."""
    shape = draw(st.lists(st.integers(0, 3), min_size=1, max_size=3))
    key, d = [], 0
    for _ in range(draw(st.integers(1, len(shape) + 1))):
        kind = draw(st.sampled_from(["int", "slice", "list", "tensor", "none", "ellipsis", "mask", "int0d"]))
        if kind == "none":
            key.append(("none", None))
            continue
        if kind == "ellipsis":
            if all(k != "ellipsis" for k, _ in key):
                key.append(("ellipsis", None))
            continue
        if d >= len(shape):
            break
        n = shape[d]
        if kind in ("int", "int0d"):
            key.append((kind, draw(st.integers(-n, n - 1)) if n else 0))
        elif kind == "slice":
            key.append(("slice", slice(draw(st.integers(-n - 1, n + 1)), draw(st.integers(-n - 1, n + 1)),
                                       draw(st.integers(1, 2)))))
        elif kind == "mask":
            key.append(("mask", draw(st.lists(st.booleans(), min_size=n, max_size=n))))
        else:
            values = draw(st.lists(st.integers(-n, n - 1) if n else st.just(0), min_size=1, max_size=3))
            key.append((kind, values))
        d += 1
    return shape, key


def _build_key(key, lib):
    built = []
    for kind, value in key:
        if kind in ("none", "ellipsis"):
            built.append(None if kind == "none" else Ellipsis)
        elif kind in ("int", "slice", "list"):
            built.append(value)
        else:
            built.append(lib.tensor(value))
    return tuple(built)


def _cuda_matches_the_cpu(case):
    """x[key] and x[key] = -1 for a drawn key: CUDA's result or error is the CPU's."""
    shape, key = case
    x = torch.tensor(np.arange(int(np.prod(shape))).reshape(shape))
    key_tensors = [v for kind, v in key if kind in ("tensor", "mask", "int0d")]
    built = [torch.tensor(v) for v in key_tensors]

    def rebuild(moved):
        given = iter(moved)
        return tuple(next(given) if kind in ("tensor", "mask", "int0d") else b
                     for (kind, _), b in zip(key, _build_key(key, torch)))
    matches_the_cpu(lambda t, *m: t[rebuild(m)], [x, *built], f"x[{key}]", reads_a_flag=True)
    try:
        x[_build_key(key, torch)]
    except (IndexError, ValueError, RuntimeError):
        return
    matches_the_cpu(lambda t, *m: assigned(t, rebuild(m), -1), [x, *built], f"x[{key}] = -1", reads_a_flag=True)


@pytest.mark.parametrize("device", DEVICES)
def test_hypothesis_matches_pytorch(device):
    """Random shapes and keys: x[key] and x[key] = values as PyTorch's (errors word for word);
    on CUDA (40 examples: the simulator is slow) the CPU's, one value written where keys repeat."""
    @settings(max_examples=300 if device == "cpu" else 40, deadline=None)
    @given(_torch_key())
    def check(case):
        if device == "cpu":
            _cpu_matches_pytorch(case)
        else:
            _cuda_matches_the_cpu(case)
    check()


def _cpu_matches_pytorch(case):
    """x[key] and x[key] = values for a drawn key as PyTorch gives them."""
    ref = pytest.importorskip("torch")
    shape, key = case
    values = np.arange(int(np.prod(shape))).reshape(shape)
    try:
        want = ref.tensor(values)[_build_key(key, ref)]
    except (IndexError, ValueError, RuntimeError) as error:
        with pytest.raises(type(error)) as raised:
            torch.tensor(values)[_build_key(key, torch)]
        assert str(raised.value) == str(error)   # PyTorch's words, dimension numbers included
        return
    got = torch.tensor(values)[_build_key(key, torch)]
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    new = -np.arange(want.numel()).reshape(tuple(want.shape)) - 1
    expected, x = ref.tensor(values), torch.tensor(values)
    expected[_build_key(key, ref)] = ref.tensor(new)
    x[_build_key(key, torch)] = torch.tensor(new)
    np.testing.assert_array_equal(x.numpy(), expected.numpy())


# --- every dtype, layout and path, on every device ------------------------------------------


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_getitem_of_every_dtype(dtype, device):
    """Negative, mask, broadcast and empty indices into both layouts of every dtype."""
    for x in layouts(SIGNED, dtype):
        check_on(device, lambda t, i: t[i], x, torch.tensor([2, 0, -1]))
        check_on(device, lambda t, m: t[m], x, torch.tensor(SIGNED > 0))
        check_on(device, lambda t, i, j: t[i, j], x, torch.tensor([[0], [2]]), torch.tensor([3, 1]))
        check_on(device, lambda t, i: t[:, i], x, torch.tensor([], dtype=torch.int64))


@pytest.mark.parametrize("device", DEVICES)
def test_getitem_of_0d_and_empty_inputs(device):
    """A 0-d input under a mask and None; empty inputs under indices and masks."""
    check_on(device, lambda t, m: t[m], torch.tensor(5.), torch.tensor(True))
    check_on(device, lambda t: t[None][[0, 0]], torch.tensor(5.))
    check_on(device, lambda t, i: t[i], torch.zeros(0, 3), torch.tensor([], dtype=torch.int64))
    check_on(device, lambda t, m: t[m], torch.zeros(0, 3), torch.zeros(0, 3, dtype=torch.bool))
    check_on(device, lambda t, i: t[i], torch.zeros(3, 0), torch.tensor([2, 0]))


TENSOR_INDEX_ERRORS = [
    lambda x, i: x[i],
    lambda x, i: x[[1], i],
    lambda x, i: x[:, i],
    lambda x, i: x[i.float()],
    lambda x, i: x[[0, 1], i],
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("fn", TENSOR_INDEX_ERRORS, ids=[str(i) for i in range(len(TENSOR_INDEX_ERRORS))])
def test_index_tensor_errors(fn, device):
    """Out-of-range and float index tensors, and a mask of the wrong shape, raise (on CUDA the CPU's error)."""
    x = torch.arange(12).reshape(3, 4)
    for index in (torch.tensor([0, 7, 5]), torch.tensor([-9])):
        with pytest.raises(IndexError):
            cpu_result(device, fn, x, index)
    with pytest.raises(IndexError):
        cpu_result(device, lambda t, m: t[m], x, torch.tensor([True, False]))


def test_a_range_indexes_like_a_list():
    x = torch.arange(12.0).reshape(3, 4)
    assert x[range(3), torch.tensor([0, 2, 3])].tolist() == [0.0, 6.0, 11.0]
    assert x[range(1, 3)].tolist() == x[[1, 2]].tolist()
