"""`ember_tensor.testing` (torch.testing): assert_close's defaults, checks and messages
(against PyTorch's own where it is installed), and make_tensor's ranges and layouts."""
import numpy as np
import pytest

import ember_tensor as et
from ember_tensor.testing import assert_close, make_tensor

# (actual, expected, kwargs) as (values, dtype) pairs, so that both libraries build them.
CASES = [
    ("close floats", ([1., 2., 3.], "float32"), ([1., 2. + 1e-6, 3.], "float32"), {}),
    ("float mismatch", ([1., 2., 3.], "float32"), ([1., 2.5, 3.], "float32"), {}),
    ("int mismatch", ([1, 2, 3], "int64"), ([1, 3, 3], "int64"), {}),
    ("bool mismatch", ([True, False], "bool"), ([True, True], "bool"), {}),
    ("shape", ([1., 1.], "float32"), ([1., 1., 1.], "float32"), {}),
    ("dtype", ([1., 1.], "float32"), ([1., 1.], "float64"), {}),
    ("dtype unchecked", ([1., 1.], "float32"), ([1., 1.], "float64"), {"check_dtype": False}),
    ("nan", ([float("nan")], "float32"), ([float("nan")], "float32"), {}),
    ("nan equal", ([float("nan")], "float32"), ([float("nan")], "float32"), {"equal_nan": True}),
    ("explicit tolerance", ([1., 2.], "float64"), ([1.05, 2.], "float64"), {"rtol": 0.0, "atol": 0.1}),
    ("2-d index", ([[1., 2.], [3., 4.]], "float64"), ([[1., 2.], [3., 5.]], "float64"), {}),
    ("half", ([1., 2.], "float16"), ([1., 2.001], "float16"), {}),
]


def _outcome(library, case):
    _, (a, adt), (e, edt), kwargs = case
    actual = library.tensor(a, dtype=getattr(library, adt))
    expected = library.tensor(e, dtype=getattr(library, edt))
    try:
        library.testing.assert_close(actual, expected, **kwargs)
    except (AssertionError, ValueError, TypeError) as error:
        return type(error).__name__, str(error)
    return None


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_assert_close_matches_pytorch(case):
    torch = pytest.importorskip("torch")
    assert _outcome(et, case) == _outcome(torch, case)


def test_assert_close_outcomes():
    assert _outcome(et, CASES[0]) is None
    kind, message = _outcome(et, CASES[1])
    assert kind == "AssertionError" and message.startswith("Tensor-likes are not close!\n\nMismatched elements: 1 / 3")
    assert "Greatest absolute difference: 0.5 at index (1,) (up to 1e-05 allowed)" in message
    assert _outcome(et, CASES[2])[1].startswith("Tensor-likes are not equal!")
    assert _outcome(et, CASES[5])[1] == "The values for attribute 'dtype' do not match: torch.float32 != torch.float64."
    assert _outcome(et, CASES[7]) is not None and _outcome(et, CASES[8]) is None


def test_scalars_sequences_mappings_and_errors():
    assert_close(1.0, 1.0 + 1e-9)
    with pytest.raises(AssertionError, match="Scalars are not close!\n\nExpected 1.5 but got 1.0."):
        assert_close(1.0, 1.5)
    assert_close([et.ones(2), {"a": 1}], [et.ones(2), {"a": 1}])
    with pytest.raises(AssertionError, match=r"The failure occurred for item \[1\]\['a'\]"):
        assert_close([et.ones(2), {"a": 1}], [et.ones(2), {"a": 2}])
    with pytest.raises(TypeError, match="No comparison pair was able to handle inputs"):
        assert_close(et.ones(2), 1.0)
    with pytest.raises(ValueError, match="Both 'rtol' and 'atol' must be either specified or omitted, but got no rtol."):
        assert_close(et.ones(2), et.ones(2), atol=1)
    with pytest.raises(AssertionError, match="^custom$"):
        assert_close(et.zeros(1), et.ones(1), msg="custom")
    assert_close(np.ones(3), np.ones(3))


@pytest.mark.parametrize("dtype, low, high", [(et.float32, -9, 9), (et.int64, -9, 10), (et.uint8, 0, 10),
                                              (et.float64, 2, 3), (et.int32, 5, 6)])
def test_make_tensor_ranges(dtype, low, high):
    given = {} if (low, high) in ((-9, 9), (-9, 10), (0, 10)) else {"low": low, "high": high}
    t = make_tensor(200, dtype=dtype, device="cpu", **given)
    assert t.shape == (200,) and t.dtype == dtype
    values = t.numpy()
    assert values.min() >= low and (values.max() <= high if dtype.is_floating_point else values.max() < high)


def test_make_tensor_layout_and_flags():
    t = make_tensor(3, 4, dtype=et.float32, device="cpu", noncontiguous=True, exclude_zero=True, requires_grad=True)
    assert t.shape == (3, 4) and not t.is_contiguous() and t.requires_grad
    assert bool((t != 0).all())
    assert make_tensor((2,), dtype=et.bool, device="cpu").dtype == et.bool
    with pytest.raises(ValueError, match="`low` must be less than or equal to `high`"):
        make_tensor(2, dtype=et.float32, device="cpu", low=2, high=1)


def test_docstring_examples_run():
    import doctest

    from ember_tensor.testing import _comparison, _creation
    for module in (_comparison, _creation):
        assert doctest.testmod(module).failed == 0
