"""Generic tests of every op family beyond the elementwise ops and reductions, driven by
the op database's FAMILY_DB (nn kernels, indexing, sort/scan, linalg, random, sparse).

Each entry is checked for every dtype on every device (the `device` parameter): on the
CPU every sample's outputs against the NumPy reference (values, dtype, shape); on CUDA
(Numba's simulator where no GPU is) against the CPU's, inside `device_only()`, so that an
op that quietly computed on the host fails. Random ops have no reference and CUDA's
Philox stream is not the CPU's: on each device a draw is checked for its shape, dtype
and device, for being the same again after the same seed and different after another,
and for its properties (range, loose moments).
"""
import contextlib
import doctest

import numpy as np
import pytest

import ember_tensor as et
from cuda_guard import DEVICES, device_only, matches_the_cpu
from ember_tensor.testing.opdb import FAMILIES, FAMILY_DB
from ember_tensor.testing.opdb.families import info as families_info

_DETERMINISTIC = [op for op in FAMILY_DB if not op.is_random]
_RANDOM = [op for op in FAMILY_DB if op.is_random]


def _device_params(ops):
    """(op, dtype, device, known_bug) params. known_bug is None (the entry's samples but
    those of a sample-level expected failure) or an XFailOn, whose samples (or all, if it
    names none) then run alone under xfail(strict=True) with its reason."""
    params = []
    for device in DEVICES:
        (name,), device_marks = device.values, list(device.marks)
        for op in ops:
            for dtype in op.dtypes:
                bugs = op.xfails_on(name, dtype)
                whole = [b for b in bugs if not b.samples]
                ident = f"{op.name}-{dtype.name}-{name}"
                for bug in bugs:
                    marks = device_marks + [pytest.mark.xfail(reason=bug.reason, strict=True)]
                    suffix = "-known-bug" if bug.samples else ""
                    params.append(pytest.param(op, dtype, name, bug, marks=marks, id=ident + suffix))
                if not whole:
                    params.append(pytest.param(op, dtype, name, None, marks=device_marks, id=ident))
    return params


def _samples(op, dtype, device, known_bug):
    """The samples a parameter runs (see `_device_params`)."""
    samples = op.sample_inputs(dtype)
    names = {s.name for s in samples}
    for bug in op.xfails_on(device, dtype):
        assert set(bug.samples) <= names, f"{op.name}: an expected failure names unknown samples"
    if known_bug is not None:
        return [s for s in samples if not known_bug.samples or s.name in known_bug.samples]
    buggy = {n for bug in op.xfails_on(device, dtype) for n in bug.samples}
    return [s for s in samples if s.name not in buggy]


def _what(op, sample, dtype):
    return f"{op.name}, sample {sample.name!r}, {dtype}"


def _assert_output(op, sample, dtype, got, want, want_dtype):
    what = _what(op, sample, dtype)
    assert isinstance(got, et.Tensor), f"{what}: {type(got).__name__} is not a tensor"
    assert got.dtype is want_dtype, f"{what}: dtype {got.dtype}, expected {want_dtype}"
    assert tuple(got.shape) == want.shape, f"{what}: shape {tuple(got.shape)}, expected {want.shape}"
    if want_dtype.is_floating_point or want_dtype.is_complex:
        rtol, atol = op.tolerance(want_dtype)
        wide = np.complex128 if want_dtype.is_complex else np.float64
        np.testing.assert_allclose(got.numpy().astype(wide), want, rtol=rtol, atol=atol, equal_nan=True,
                                   err_msg=what)
    else:
        np.testing.assert_array_equal(got.numpy(), want, err_msg=what)


@pytest.mark.parametrize("op, dtype, device, known_bug", _device_params(_DETERMINISTIC))
def test_forward(op, dtype, device, known_bug):
    """Every sample's outputs match the reference (another device: the CPU's)."""
    samples = _samples(op, dtype, device, known_bug)
    assert samples, f"{op.name} has no samples for {dtype}"
    for sample in samples:
        if device != "cpu":
            matches_the_cpu(lambda *xs, kw=sample.kwargs: op.fn(*xs, **kw), sample.ember(),
                            _what(op, sample, dtype), reads_a_flag=op.reads_scalars, tol=max(op.tolerance(dtype)))
            continue
        try:
            want = op.reference(sample)
        except np.linalg.LinAlgError:
            # A sample the reference refuses (a singular matrix): ember refuses it too.
            with pytest.raises(RuntimeError):
                op.fn(*sample.ember(), **sample.kwargs)
            continue
        got = op.fn(*sample.ember(), **sample.kwargs)
        got = tuple(got) if isinstance(got, (tuple, list)) else (got,)
        assert len(got) == len(want), f"{_what(op, sample, dtype)}: {len(got)} outputs, expected {len(want)}"
        for g, w, d in zip(got, want, op.result_dtypes(dtype, want)):
            _assert_output(op, sample, dtype, g, np.asarray(w), d)


def _draw(op, sample, device, seed):
    et.manual_seed(seed)
    # A sampler from sizes alone has no input (None); the others draw for their operands.
    operands = [] if sample.input is None else sample.ember()
    args = [x.to(device) if isinstance(x, et.Tensor) else x for x in operands]
    guard = device_only(allow_scalar_reads=op.reads_scalars) if device != "cpu" else contextlib.nullcontext()
    with guard:
        return op.fn(*args, device=device, **sample.kwargs)


@pytest.mark.parametrize("op, dtype, device, known_bug", _device_params(_RANDOM))
def test_random_properties(op, dtype, device, known_bug):
    """A draw on `device` has the right shape, dtype and device, repeats for a seed,
    changes with the seed, and passes the entry's property check."""
    samples = _samples(op, dtype, device, known_bug)
    assert samples, f"{op.name} has no samples for {dtype}"
    for sample in samples:
        what = _what(op, sample, dtype)
        first, again, other = (_draw(op, sample, device, seed) for seed in (1234, 1234, 4321))
        assert first.device.type == device, what
        assert first.dtype is op.random_result_dtype(dtype), f"{what}: dtype {first.dtype}"
        values = first.cpu().numpy()
        np.testing.assert_array_equal(again.cpu().numpy(), values, err_msg=f"{what}: not reproducible for a seed")
        if values.size > 8:  # a small draw may repeat by chance
            assert not np.array_equal(other.cpu().numpy(), values), f"{what}: another seed, the same numbers"
        op.check(values, sample, dtype)


# --- the database itself ---------------------------------------------------------------------


def test_every_family_has_entries():
    """The database covers each family it names."""
    assert {op.family for op in FAMILY_DB} == set(FAMILIES)


@pytest.mark.parametrize("op", FAMILY_DB, ids=lambda op: op.name)
def test_samples_cover_non_contiguous_and_empty_or_0d(op):
    """Every entry's samples for every dtype hold a non-contiguous operand (when the op
    takes tensors) and an empty or 0-d one, unless the entry says why it has none."""
    for dtype in op.dtypes:
        samples = op.sample_inputs(dtype)
        tensors = [[a for a in s.ember() if isinstance(a, et.Tensor)] for s in samples]
        if not any(tensors):  # a sampler from sizes alone (rand, randperm)
            continue
        assert any(not a.is_contiguous() for ts in tensors for a in ts), f"{op.name}: no non-contiguous operand"
        if op.no_empty is None:
            assert any(a.dim() == 0 or a.numel() == 0 for ts in tensors for a in ts), \
                f"{op.name}: no empty or 0-d operand (or say why in no_empty)"


def test_operands_are_numpy_backed():
    """Samples hold NumPy values (Operands), never ember tensors, so a reference never
    sees one and each device builds its own."""
    for op in FAMILY_DB:
        for s in op.sample_inputs(op.dtypes[0]):
            held = [*s.operands(), *s.kwargs.values()]
            assert not any(isinstance(x, et.Tensor) for x in held), op.name


def test_docstring_examples_run():
    """The entry type's example runs."""
    assert doctest.testmod(families_info).failed == 0
