"""`assert_close`: PyTorch's `torch.testing.assert_close`, its default tolerances, its
attribute checks and its mismatch messages, for tensors, NumPy arrays, Python numbers and
sequences or mappings of them."""
import collections.abc
import math
import numbers

import numpy as np

from .. import _dtype as D
from .._device import CPU
from .._tensor import Tensor

__all__ = ["assert_close"]

# PyTorch's defaults (rtol, atol) by dtype; integers and bool compare exactly.
_TOLERANCES = {D.float16: (1e-3, 1e-5), D.bfloat16: (1.6e-2, 1e-5), D.float32: (1.3e-6, 1e-5),
               D.float64: (1e-7, 1e-7)}


def _tolerances(*dtypes):
    pairs = [_TOLERANCES.get(d, (0.0, 0.0)) for d in dtypes]
    return max(r for r, _ in pairs), max(a for _, a in pairs)


def _diff_line(kind, diff, index, tol, equality):
    line = f"{kind.title()} difference: {diff}" if index is None else f"Greatest {kind} difference: {diff} at index {index}"
    return line + ("" if equality else f" (up to {tol} allowed)") + "\n"


def _mismatch_message(identifier, extra, abs_diff, abs_index, atol, rel_diff, rel_index, rtol):
    equality = rtol == 0 and atol == 0
    msg = f"{identifier} are not {'equal' if equality else 'close'}!\n\n{extra.strip()}\n"
    msg += _diff_line("absolute", abs_diff, abs_index, atol, equality)
    msg += _diff_line("relative", rel_diff, rel_index, rtol, equality)
    return msg.strip()


def _fail(msg, generated):
    if msg is None:
        raise AssertionError(generated)
    raise AssertionError(msg(generated) if callable(msg) else msg)


def _is_number(x):
    return isinstance(x, (numbers.Number, np.number)) and not isinstance(x, Tensor)


def _compare_numbers(actual, expected, rtol, atol, equal_nan, msg):
    if rtol is None:
        floating = isinstance(actual, (float, complex, np.floating)) or isinstance(expected, (float, complex, np.floating))
        rtol, atol = _tolerances(D.float64 if floating else D.int64)
    if actual == expected or (equal_nan and math.isnan(actual) and math.isnan(expected)):
        return
    if abs(actual - expected) <= atol + rtol * abs(expected):
        return
    abs_diff = abs(actual - expected)
    rel_diff = math.inf if expected == 0 else abs_diff / abs(expected)
    _fail(msg, _mismatch_message("Scalars", f"Expected {expected} but got {actual}.", abs_diff, None, atol,
                                 rel_diff, None, rtol))


def _attribute(name, a, b, msg):
    _fail(msg, f"The values for attribute '{name}' do not match: {a} != {b}.")


def _compare_tensors(actual, expected, rtol, atol, equal_nan, check_device, check_dtype, check_stride, msg):
    if actual.shape != expected.shape:
        _attribute("shape", actual.shape, expected.shape, msg)
    if actual.device != expected.device:
        if check_device:
            _attribute("device", actual.device, expected.device, msg)
        actual, expected = actual.to(CPU), expected.to(CPU)
    if actual.dtype != expected.dtype:
        if check_dtype:
            _attribute("dtype", actual.dtype, expected.dtype, msg)
    if check_stride and actual.stride() != expected.stride():
        _attribute("stride()", actual.stride(), expected.stride(), msg)
    if rtol is None:
        rtol, atol = _tolerances(actual.dtype, expected.dtype)
    a, e = actual.detach().cpu().numpy(), expected.detach().cpu().numpy()
    common = np.promote_types(a.dtype, e.dtype) if a.dtype != e.dtype else a.dtype
    if common.kind == "V" or common.itemsize == 2 and common.kind == "f":  # half types: compare in float32
        common = np.dtype(np.float32)
    a, e = a.astype(common), e.astype(common)
    if a.dtype.kind == "b" or (rtol == 0 and atol == 0):
        matches = a == e
    else:
        with np.errstate(invalid="ignore", over="ignore"):
            matches = np.isclose(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan) if a.dtype.kind in "fc" else a == e
    if matches.all():
        return
    flat_matches = matches.reshape(-1)
    total = flat_matches.size
    mismatches = total - int(flat_matches.sum())
    extra = f"Mismatched elements: {mismatches} / {total} ({mismatches / total:.1%})"
    af, ef = a.reshape(-1), e.reshape(-1)
    if af.dtype.kind not in "fc":  # exact types: differences in int64, relative ones in float32
        af, ef = af.astype(np.int64), ef.astype(np.int64)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        abs_diff = np.abs(af - ef)
        abs_diff[flat_matches] = 0
        rel_diff = abs_diff / np.abs(ef)
        if rel_diff.dtype == np.float64 and af.dtype.kind not in "fc":
            rel_diff = rel_diff.astype(np.float32)
        rel_diff[flat_matches] = 0
    abs_at, rel_at = _argmax_nan_first(abs_diff), _argmax_nan_first(rel_diff)
    shape = matches.shape
    index = (lambda i: tuple(int(x) for x in np.unravel_index(i, shape))) if shape else (lambda i: ())
    _fail(msg, _mismatch_message("Tensor-likes", extra, abs_diff[abs_at].item(), index(abs_at), atol,
                                 rel_diff[rel_at].item(), index(rel_at), rtol))


def _argmax_nan_first(values):
    """torch.max's index: the first NaN if any, else the first largest value."""
    nans = np.flatnonzero(np.isnan(values)) if values.dtype.kind in "fc" else ()
    return int(nans[0]) if len(nans) else int(np.argmax(values))


def _to_tensor(x):
    if isinstance(x, np.ndarray):
        from .._ops.creation import from_numpy
        return from_numpy(np.ascontiguousarray(x))
    return x


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None, equal_nan=False,
                 check_device=True, check_dtype=True, check_layout=True, check_stride=False, msg=None):
    """Assert that `actual` and `expected` are close: ``|actual - expected| <= atol + rtol *
    |expected|`` elementwise (exactly equal for integers and bool), after checking their
    shapes, devices and dtypes; PyTorch's defaults by dtype when `rtol`/`atol` are omitted
    (float32: 1.3e-6 and 1e-5, float64: 1e-7 and 1e-7, float16: 1e-3 and 1e-5, bfloat16:
    1.6e-2 and 1e-5). Sequences and mappings are compared item by item.

    Raises:
        AssertionError: with PyTorch's message (or `msg`: a string, or a callable taking it).

    >>> import ember_tensor as et
    >>> assert_close(et.tensor([1.0, 2.0]), et.tensor([1.0, 2.5]))
    Traceback (most recent call last):
    ...
    AssertionError: Tensor-likes are not close!
    <BLANKLINE>
    Mismatched elements: 1 / 2 (50.0%)
    Greatest absolute difference: 0.5 at index (1,) (up to 1e-05 allowed)
    Greatest relative difference: 0.20000000298023224 at index (1,) (up to 1.3e-06 allowed)
    """
    if (rtol is None) != (atol is None):
        missing = "rtol" if rtol is None else "atol"
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got no {missing}.")
    _compare(actual, expected, (), dict(rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=check_device,
                                        check_dtype=check_dtype, check_stride=check_stride, msg=msg))


def _compare(actual, expected, path, options):
    try:
        _compare_pair(actual, expected, path, options)
    except AssertionError as error:
        if not path or getattr(error, "_ember_located", False):
            raise
        located = AssertionError(f"{error}\n\nThe failure occurred for item {''.join(f'[{p!r}]' for p in path)}")
        located._ember_located = True
        raise located from None


def _compare_pair(actual, expected, path, options):
    actual, expected = _to_tensor(actual), _to_tensor(expected)
    if isinstance(actual, Tensor) and isinstance(expected, Tensor):
        _compare_tensors(actual, expected, options["rtol"], options["atol"], options["equal_nan"],
                         options["check_device"], options["check_dtype"], options["check_stride"], options["msg"])
        return
    if _is_number(actual) and _is_number(expected):
        _compare_numbers(actual, expected, options["rtol"], options["atol"], options["equal_nan"], options["msg"])
        return
    sequence = collections.abc.Sequence
    if isinstance(actual, sequence) and isinstance(expected, sequence) and not isinstance(actual, str) \
            and not isinstance(expected, str):
        if len(actual) != len(expected):
            raise AssertionError(f"The length of the sequences mismatch: {len(actual)} != {len(expected)}")
        for i, (a, e) in enumerate(zip(actual, expected)):
            _compare(a, e, path + (i,), options)
        return
    mapping = collections.abc.Mapping
    if isinstance(actual, mapping) and isinstance(expected, mapping):
        if set(actual) != set(expected):
            raise AssertionError(f"The keys of the mappings do not match:\n"
                                 f"Missing keys in the actual mapping: {sorted(set(expected) - set(actual))}\n"
                                 f"Additional keys in the actual mapping: {sorted(set(actual) - set(expected))}")
        for key in expected:
            _compare(actual[key], expected[key], path + (key,), options)
        return
    raise TypeError(f"No comparison pair was able to handle inputs of type {type(actual)} and {type(expected)}.")
