"""default_collate / default_convert against PyTorch's documented results, as a table."""
import collections

import numpy as np
import pytest

import ember_tensor as et
from ember_data import default_collate, default_convert

Point = collections.namedtuple("Point", "x y")


def _plain(obj):
    """Tensors -> (dtype name, nested lists), so results compare with ==."""
    if isinstance(obj, et.Tensor):
        return (str(obj.dtype), obj.tolist())
    if isinstance(obj, dict):
        return {k: _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_plain(v) for v in obj) if not hasattr(obj, "_fields") else type(obj)(*map(_plain, obj))
    return obj


COLLATE_CASES = [
    ("tensors", [et.tensor([1.0, 2.0]), et.tensor([3.0, 4.0])], ("torch.float32", [[1.0, 2.0], [3.0, 4.0]])),
    ("0-d tensors", [et.tensor(1), et.tensor(2)], ("torch.int64", [1, 2])),
    ("non-contiguous", [et.arange(6.0).reshape(2, 3).t(), et.zeros(3, 2)],
     ("torch.float32", [[[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]], [[0.0, 0.0]] * 3])),
    ("numpy arrays", [np.array([1, 2], dtype=np.int32), np.array([3, 4], dtype=np.int32)], ("torch.int32", [[1, 2], [3, 4]])),
    ("numpy scalars", [np.float32(1.5), np.float32(2.5)], ("torch.float32", [1.5, 2.5])),
    ("floats", [1.0, 2.5], ("torch.float64", [1.0, 2.5])),
    ("ints", [1, 2], ("torch.int64", [1, 2])),
    ("bools", [True, False], ("torch.bool", [True, False])),
    ("strings", ["a", "b"], ["a", "b"]),
    ("dicts", [{"x": 1, "s": "a"}, {"x": 2, "s": "b"}], {"x": ("torch.int64", [1, 2]), "s": ["a", "b"]}),
    ("tuples become lists", [(1, 2.0), (3, 4.0)], [("torch.int64", [1, 3]), ("torch.float64", [2.0, 4.0])]),
    ("namedtuples", [Point(1, 2), Point(3, 4)], Point(("torch.int64", [1, 3]), ("torch.int64", [2, 4]))),
    ("lists", [[1, 2], [3, 4]], [("torch.int64", [1, 3]), ("torch.int64", [2, 4])]),
    ("nested", [{"img": et.ones(2), "meta": (1, "a")}, {"img": et.zeros(2), "meta": (2, "b")}],
     {"img": ("torch.float32", [[1.0, 1.0], [0.0, 0.0]]), "meta": [("torch.int64", [1, 2]), ("a", "b")]}),  # strings: the transposed tuple
]


@pytest.mark.parametrize("name, batch, expected", COLLATE_CASES, ids=[c[0] for c in COLLATE_CASES])
def test_default_collate(name, batch, expected):
    assert _plain(default_collate(batch)) == expected


@pytest.mark.parametrize("batch, error, message", [
    ([object(), object()], TypeError, "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found <class 'object'>"),
    ([np.array(["a"]), np.array(["b"])], TypeError, "default_collate: batch must contain tensors, numpy arrays"),
    ([[1, 2], [3]], RuntimeError, "each element in list of batch should be of equal size"),
    ([et.zeros(2), et.zeros(3)], RuntimeError, "stack expects each tensor to be equal size, but got [2] at entry 0 and [3] at entry 1"),
])
def test_default_collate_errors(batch, error, message):
    with pytest.raises(error) as info:
        default_collate(batch)
    assert message in str(info.value)


def test_default_collate_matches_pytorch():
    torch = pytest.importorskip("torch")
    from torch.utils.data import default_collate as torch_collate
    batch = [{"a": 1.5, "b": [1, 2], "c": "s"}, {"a": 2.5, "b": [3, 4], "c": "t"}]
    ours, theirs = default_collate(batch), torch_collate(batch)
    assert ours["a"].tolist() == theirs["a"].tolist() and str(ours["a"].dtype) == str(theirs["a"].dtype)
    assert [t.tolist() for t in ours["b"]] == [t.tolist() for t in theirs["b"]] and ours["c"] == theirs["c"]


def test_default_convert():
    converted = default_convert({"a": np.array([1.0, 2.0]), "b": (np.int64(3), "s"), "c": Point(np.zeros(1), 5)})
    assert _plain(converted) == {"a": ("torch.float64", [1.0, 2.0]), "b": [("torch.int64", 3), "s"],
                                 "c": Point(("torch.float64", [0.0]), 5)}
    t = et.ones(2)
    assert default_convert(t) is t
