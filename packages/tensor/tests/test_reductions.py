"""Generic reduction tests driven by the op database's REDUCTION_DB (opdb.py).

Every reduction is checked on every layout (3-d, transposed, stepped, expanded, 0-d,
extremal values) over each dim form it takes (all elements, int, negative int, tuple),
with and without keepdim and with its keyword variants (dtype=, correction, p), against
a NumPy reference; non-contiguous inputs must give their contiguous copy's result; the
method form must agree; out= must be written and resized like PyTorch's; and the errors
(empty inputs without an identity, dims out of range or repeated, unsupported dtypes)
must be PyTorch's type and message.

The values are checked on every device (the `device` parameter): on the CPU against the
reference, on CUDA against the CPU inside `device_only()` — every sample on a real GPU,
every 8th (a rotating share per dtype) on Numba's simulator, where all take minutes.
"""
import math
import warnings

import numpy as np
import pytest

import ember_tensor as et
from cuda_guard import DEVICES, matches_the_cpu
from ember_tensor.testing.opdb import (B, F32, F64, I64, NP, REDUCTION_DB, REDUCTIONS, TOLERANCE, U8, EXTREMAL, Operand,
                  make_values, rng_for)

# What dim=() means: every dim for most reductions, no dim at all for all/any.
_EMPTY_TUPLE = {"sum": "all", "amax": "all", "amin": "all", "count_nonzero": "all", "all": "none", "any": "none"}
_SPARSE = {"all", "any", "count_nonzero"}  # inputs with many zeros, or the result is trivial


def _values(op, shape, dtype, rng):
    if dtype.is_floating_point or dtype.is_complex:
        v = make_values(shape, dtype, rng, *op.domain)
    else:
        v = make_values(shape, dtype, rng, -2, 2)
    if op.name in _SPARSE and dtype is not B:
        v = np.where(rng.random(shape) < 0.4, np.zeros((), v.dtype), v).astype(v.dtype)
    return np.asarray(v)


def _inputs(op, dtype):
    rng = rng_for(op.name, dtype)
    yield "3-d", Operand(_values(op, (3, 4, 5), dtype, rng))
    yield "transposed", Operand(_values(op, (4, 3), dtype, rng), "transposed")
    yield "stepped", Operand(_values(op, (2, 3, 4), dtype, rng), "stepped")
    yield "expanded", Operand(np.broadcast_to(_values(op, (1, 4), dtype, rng), (3, 4)), "expanded")
    yield "0-d", Operand(_values(op, (), dtype, rng))
    if dtype.is_floating_point:
        yield "extremal", Operand(np.array(EXTREMAL).astype(NP[dtype]).reshape(2, 4))


def _dims(op, ndim):
    if op.dims == "int":
        forms = [None, 0, -1]
    elif op.dims == "required":
        forms = [0, -1, (0, -1)]
    else:
        forms = [None, 0, -1, (0, -1)]
    if ndim == 0:  # a 0-d tensor takes dim 0 / -1 and has nothing to reduce
        return [d for d in forms if not isinstance(d, tuple)]
    if op.name in _EMPTY_TUPLE:
        forms.append(())
    return forms


def reduction_samples(op, dtype):
    """(name, operand, dim, keepdim, kwargs) for every input, dim form, keepdim and kwargs set."""
    for name, x in _inputs(op, dtype):
        for dim in _dims(op, x.value.ndim):
            for keepdim in ((False, True) if op.keepdim and dim is not None else (False,)):
                for kwargs in op.kwargs:
                    if kwargs.get("dtype") is not None and not _dtype_kwarg_applies(op, dtype, kwargs["dtype"]):
                        continue
                    yield f"{name}, dim={dim}, keepdim={keepdim}, {kwargs}", x, dim, keepdim, kwargs


def _dtype_kwarg_applies(op, dtype, target):
    # PyTorch's sum/prod take any dtype=; mean only a floating one its input casts to. A
    # complex input cast to a real dtype loses its imaginary part (with a warning): not sampled.
    if dtype.is_complex and not target.is_complex:
        return False
    return op.name != "mean" or dtype.is_floating_point


def _call(op, x, dim, keepdim, kwargs, **extra):
    args = {} if dim is None else {"dim": dim}
    if dim is not None and op.keepdim:
        args["keepdim"] = keepdim
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # var's "degrees of freedom is <= 0"
        return op.fn(x, **args, **kwargs, **extra)


def _axis(dim, ndim, op):
    if dim is None or ndim == 0:
        return None
    if isinstance(dim, tuple):
        if not dim:
            return None if _EMPTY_TUPLE[op.name] == "all" else ()
        return tuple(sorted(d % ndim for d in dim))
    return (dim % ndim,)


def _expected(op, x, dim, keepdim, kwargs, dtype):
    value = x.value
    axis = _axis(dim, value.ndim, op)
    if dtype.is_complex:
        wide = value.astype(np.complex128)
    elif dtype.is_floating_point or op.name in ("logsumexp", "norm", "var", "std", "mean", "var_mean", "std_mean"):
        wide = value.astype(np.float64)
    else:
        wide = value.astype(np.int64)
    if op.pair and dim is not None and value.ndim == 0:  # max(0-d, 0): the element, index 0
        return wide, np.int64(0)
    with np.errstate(all="ignore"):
        if op.dims == "int" and axis is not None:
            if op.pair or op.name.startswith("arg"):
                result = op.ref(wide, axis=axis, keepdims=keepdim, **kwargs)
            else:  # prod: one dim
                result = op.ref(wide, axis=axis[0], keepdims=keepdim, **kwargs)
        else:
            result = op.ref(wide, axis=axis, keepdims=keepdim and dim is not None, **kwargs)
    return result


def _check(op, got, want, result_dtype, what):
    got_np = np.asarray(got.numpy())
    want = np.asarray(want)
    assert got.dtype is result_dtype, f"{what}: {got.dtype} != {result_dtype}"
    assert got_np.shape == want.shape, f"{what}: shape {got_np.shape} != {want.shape}"
    if result_dtype.is_floating_point or result_dtype.is_complex:
        rtol, atol = op.tol.get(result_dtype, TOLERANCE[result_dtype])
        wide = np.complex128 if result_dtype.is_complex else np.float64
        np.testing.assert_allclose(got_np.astype(wide), want.astype(wide), rtol=rtol, atol=atol,
                                   equal_nan=True, err_msg=what)
    else:
        with np.errstate(all="ignore"):
            np.testing.assert_array_equal(got_np, want.astype(NP[result_dtype]), err_msg=what)


def _params(ops=REDUCTION_DB):
    return [pytest.param(op, d, id=f"{op.name}-{d.name}") for op in ops for d in op.dtypes]


def _device_params(ops=REDUCTION_DB):
    return [pytest.param(op, d, device.values[0], marks=device.marks, id=f"{op.name}-{d.name}-{device.values[0]}")
            for device in DEVICES for op in ops for d in op.dtypes]


def _simulated():
    return et.cuda.is_available() and "simulator" in et.cuda.get_device_name().lower()


def _casts_non_finite_to_int(sample_name, dtype, kwargs):
    # sum(dtype=int64) of NaN/inf: undefined in C; a real GPU saturates where the CPU (and
    # the simulator) give INT_MIN, so PyTorch's CPU and CUDA differ there too.
    target = kwargs.get("dtype")
    return (sample_name.startswith("extremal") and dtype.is_floating_point
            and target is not None and not target.is_floating_point)


def _matches_the_cpu_on_cuda(op, dtype):
    simulated = _simulated()
    step = 8 if simulated else 1
    start = op.dtypes.index(dtype) % step  # another share of the samples for each dtype
    samples = list(reduction_samples(op, dtype))[start::step]
    assert samples
    for name, operand, dim, keepdim, kwargs in samples:
        if not simulated and _casts_non_finite_to_int(name, dtype, kwargs):
            continue
        args = {} if dim is None else {"dim": dim}
        if dim is not None and op.keepdim:
            args["keepdim"] = keepdim
        matches_the_cpu(lambda x, a=args, kw=kwargs: op.fn(x, **a, **kw), [operand.tensor(dtype)],
                        f"{op.name}, {name}, {dtype}")


@pytest.mark.parametrize("op, dtype, device", _device_params())
def test_forward(op, dtype, device):
    """Values, dtype and shape for every input layout, dim form, keepdim and keyword set
    (another device: the CPU's)."""
    if device != "cpu":
        _matches_the_cpu_on_cuda(op, dtype)
        return
    for what, x, dim, keepdim, kwargs in reduction_samples(op, dtype):
        got = _call(op, x.tensor(dtype), dim, keepdim, kwargs)
        want = _expected(op, x, dim, keepdim, kwargs, dtype)
        result_dtype = op.result_dtype(dtype, kwargs)
        if op.pair and dim is not None:
            assert isinstance(got, tuple) and got.values is got[0] and got.indices is got[1], what
            _check(op, got.values, want[0], dtype, f"{op.name} values, {what}")
            _check(op, got.indices, want[1], I64, f"{op.name} indices, {what}")
        elif op.name in ("var_mean", "std_mean"):
            _check(op, got[0], want[0], result_dtype, f"{op.name}[0], {what}")
            _check(op, got[1], want[1], dtype, f"{op.name}[1], {what}")
        else:
            _check(op, got, want, result_dtype, f"{op.name}, {what}")


def _flat(result):
    return [r.numpy() for r in result] if isinstance(result, tuple) else [result.numpy()]


@pytest.mark.parametrize("op, dtype", _params())
def test_noncontiguous_matches_contiguous(op, dtype):
    """A non-contiguous input reduces to what its contiguous copy reduces to."""
    checked = 0
    for what, x, dim, keepdim, kwargs in reduction_samples(op, dtype):
        if x.layout == "contiguous":
            continue
        t = x.tensor(dtype)
        assert not t.is_contiguous(), what
        got = _flat(_call(op, t, dim, keepdim, kwargs))
        want = _flat(_call(op, t.contiguous(), dim, keepdim, kwargs))
        for g, w in zip(got, want):
            if g.dtype.kind in "fc" or g.dtype == NP[et.bfloat16]:
                # Sums may add in another order: equal to the last bits of the dtype.
                rtol = TOLERANCE[op.result_dtype(dtype, kwargs)][0] if g.dtype.kind in "fc" and \
                    (dtype.is_floating_point or dtype.is_complex) else 1e-6
                wide = np.complex128 if g.dtype.kind == "c" else np.float64
                np.testing.assert_allclose(g.astype(wide), w.astype(wide), rtol=rtol, atol=1e-6,
                                           equal_nan=True, err_msg=what)
            else:
                np.testing.assert_array_equal(g, w, err_msg=what)
        checked += 1
    assert checked


@pytest.mark.parametrize("op", [op for op in REDUCTION_DB if op.method], ids=lambda op: op.name)
def test_method_matches_function(op):
    """x.op(dim, keepdim) computes what et.op(x, dim, keepdim) does."""
    dtype = op.dtypes[0]
    for what, x, dim, keepdim, kwargs in list(reduction_samples(op, dtype))[:12]:
        t = x.tensor(dtype)
        args = {} if dim is None else {"dim": dim}
        if dim is not None and op.keepdim:
            args["keepdim"] = keepdim
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            got = getattr(t, op.name)(**args, **kwargs)
        for g, w in zip(_flat(got), _flat(_call(op, t, dim, keepdim, kwargs))):
            np.testing.assert_array_equal(g, w, err_msg=what)


@pytest.mark.parametrize("op", [op for op in REDUCTION_DB if op.supports_out], ids=lambda op: op.name)
def test_out(op):
    """out= is written and returned; a wrong-shaped non-empty out is resized with PyTorch's warning."""
    dtype = op.dtypes[0]
    x = et.tensor(_values(op, (3, 4), dtype, rng_for(op.name, dtype)), dtype=dtype)
    dim = 1
    want = _call(op, x, dim, False, {})
    if op.pair:
        values, indices = et.empty(0, dtype=dtype), et.empty(0, dtype=I64)
        got = _call(op, x, dim, False, {}, out=(values, indices))
        assert got.values is values and got.indices is indices
        np.testing.assert_array_equal(values.numpy(), want.values.numpy())
        np.testing.assert_array_equal(indices.numpy(), want.indices.numpy())
        return
    out = et.empty(0, dtype=want.dtype)
    assert _call(op, x, dim, False, {}, out=out) is out
    np.testing.assert_array_equal(out.numpy(), want.numpy())
    wrong = et.empty(2, dtype=want.dtype)
    with pytest.warns(UserWarning, match=r"An output with one or more elements was resized since it had shape "
                                         r"\[2\], which does not match the required output shape \[3\]"):
        op.fn(x, dim=dim, out=wrong)
    np.testing.assert_array_equal(wrong.numpy(), want.numpy())


# --- empty inputs ----------------------------------------------------------------------------

_EMPTY_IDENTITY = [("sum", 0.0), ("prod", 1.0), ("mean", math.nan), ("all", True), ("any", False),
                   ("count_nonzero", 0), ("var", math.nan), ("norm", 0.0)]


@pytest.mark.parametrize("name, identity", _EMPTY_IDENTITY)
def test_empty_full_reduction_gives_identity(name, identity):
    """Reductions with an identity give it for an empty tensor (mean and var: NaN)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        got = getattr(et, name)(et.empty(0, 3))
    assert got.shape == ()
    np.testing.assert_array_equal(np.asarray(got.numpy(), np.float64), np.float64(identity))


def test_logsumexp_of_empty_dim_is_minus_inf():
    got = et.logsumexp(et.empty(0, 3), 0)
    assert got.shape == (3,)
    np.testing.assert_array_equal(got.numpy(), np.full(3, -np.inf, np.float32))


@pytest.mark.parametrize("op", [op for op in REDUCTION_DB if op.empty_error], ids=lambda op: op.name)
def test_empty_without_identity(op):
    """max/min/amax/amin/argmax/argmin of an empty tensor: PyTorch's errors; a kept empty dim is fine."""
    e = et.empty(0, 3)
    exc, msg = op.empty_error
    with pytest.raises(exc, match=_escape(msg.format(name=op.name))):
        op.fn(e)
    with pytest.raises(IndexError, match=_escape(f"{op.name}(): Expected reduction dim 0 to have non-zero size.")):
        op.fn(e, dim=0)
    got = op.fn(e, dim=1)
    got = got.values if op.pair else got
    assert tuple(got.shape) == (0,)


def _escape(msg):
    import re
    return "^" + re.escape(msg) + "$"


# --- errors ---------------------------------------------------------------------------------------

_ERRORS = [
    (lambda: et.mean(et.ones(3, dtype=I64)), RuntimeError,
     "mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. Got: Long"),
    (lambda: et.mean(et.ones(3, dtype=I64), dtype=et.int32), RuntimeError,
     "mean(): could not infer output dtype. Optional dtype must be either a floating point or complex dtype. "
     "Got: Int"),
    (lambda: et.var(et.ones(3, dtype=I64)), RuntimeError, "std and var only support floating point and complex dtypes"),
    (lambda: et.std(et.ones(3, dtype=B)), RuntimeError, "std and var only support floating point and complex dtypes"),
    (lambda: et.sum(et.ones(2, 3), dim=(0, 0)), RuntimeError, "dim 0 appears multiple times in the list of dims"),
    (lambda: et.amax(et.ones(2, 3), dim=(1, -1)), RuntimeError, "dim 1 appears multiple times in the list of dims"),
    (lambda: et.count_nonzero(et.ones(2, 3), dim=(0, 0)), RuntimeError,
     "dim 0 appears multiple times in the list of dims"),
    (lambda: et.sum(et.ones(2, 3), dim=2), IndexError,
     "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
    (lambda: et.mean(et.ones(2, 3), dim=-3), IndexError,
     "Dimension out of range (expected to be in range of [-2, 1], but got -3)"),
    (lambda: et.sum(et.tensor(2.0), 1), IndexError,
     "Dimension out of range (expected to be in range of [-1, 0], but got 1)"),
    (lambda: et.argmax(et.ones(2, dtype=B)), RuntimeError, "argmax(): does not support bool input"),
    (lambda: et.norm(et.ones(3, dtype=I64)), RuntimeError,
     "linalg.vector_norm: Expected a floating point or complex tensor as input. Got Long"),
    (lambda: et.norm(et.empty(0, 3), math.inf), RuntimeError,
     "linalg.vector_norm cannot compute the inf norm on an empty tensor because the operation does not have an "
     "identity"),
    (lambda: et.norm(et.ones(2, 3), p="fro", dim=(0, 1, 0)), RuntimeError,
     "linalg.matrix_norm: dim must be a 2-tuple. Got 0 1 0"),
    # Complex inputs where PyTorch has no complex kernel (complex numbers have no order).
    (lambda: et.nansum(et.ones(3, dtype=et.complex64)), RuntimeError, "nansum on CPU does not support complex inputs"),
    (lambda: et.nanmean(et.ones(3, dtype=et.complex64)), RuntimeError, "nansum on CPU does not support complex inputs"),
    (lambda: et.max(et.ones(2, 3, dtype=et.complex64), 1), RuntimeError, "max(): does not support complex input"),
    (lambda: et.max(et.ones(2, 3, dtype=et.complex64)), NotImplementedError,
     "\"max_all\" not implemented for 'ComplexFloat'"),
    (lambda: et.median(et.ones(2, 3, dtype=et.complex128), 1), NotImplementedError,
     "\"median_out\" not implemented for 'ComplexDouble'"),
    (lambda: et.nanmedian(et.ones(2, 3, dtype=et.complex64)), NotImplementedError,
     "\"median_cpu\" not implemented for 'ComplexFloat'"),
    (lambda: et.cummax(et.ones(2, 3, dtype=et.complex64), 1), NotImplementedError,
     "\"cummax_cpu\" not implemented for 'ComplexFloat'"),
    (lambda: et.aminmax(et.ones(2, 3, dtype=et.complex64)), NotImplementedError,
     "\"aminmax_cpu\" not implemented for 'ComplexFloat'"),
    (lambda: et.mode(et.ones(2, 3, dtype=et.complex64)), NotImplementedError,
     "\"mode_cpu\" not implemented for 'ComplexFloat'"),
    (lambda: et.kthvalue(et.ones(2, 3, dtype=et.complex64), 1), NotImplementedError,
     "\"kthvalue_cpu\" not implemented for 'ComplexFloat'"),
]


@pytest.mark.parametrize("call, exc, msg", _ERRORS, ids=[m[:40] for _, _, m in _ERRORS])
def test_errors(call, exc, msg):
    """Bad arguments raise PyTorch's exception type and message."""
    with pytest.raises(exc, match=_escape(msg)):
        call()


def test_var_warns_when_degrees_of_freedom_run_out():
    """var with correction >= N warns like PyTorch and gives inf or NaN."""
    with pytest.warns(UserWarning, match=r"var\(\): degrees of freedom is <= 0"):
        got = et.var(et.tensor([1.0, 2.0]), correction=2)
    assert math.isinf(got.item()) or math.isnan(got.item())


def test_max_ties_and_nan_pick_the_first_index():
    """max/argmax with ties give the first index; the first NaN is the maximum."""
    x = et.tensor([[1.0, 3.0, 3.0], [2.0, math.nan, math.nan]])
    got = et.max(x, 1)
    np.testing.assert_array_equal(got.indices.numpy(), [1, 1])
    assert got.values[0].item() == 3.0 and math.isnan(got.values[1].item())
    assert et.argmin(et.tensor([2, 1, 1])).item() == 1


def test_return_types_fields():
    """max/min with dim return PyTorch's named (values, indices) pair."""
    got = et.min(et.tensor([[4, 2], [1, 3]]), dim=0, keepdim=True)
    assert type(got).__name__ == "min"
    values, indices = got
    assert values.shape == (1, 2) and indices.dtype is I64
    np.testing.assert_array_equal(indices.numpy(), [[1, 0]])


def test_uint8_all_any_keep_uint8():
    """all/any of uint8 give uint8 (PyTorch's legacy rule), of other dtypes bool."""
    assert et.all(et.ones(3, dtype=U8)).dtype is U8
    assert et.any(et.ones(3, dtype=et.int32)).dtype is B
    assert et.sum(et.ones(3, dtype=U8)).dtype is I64
    assert et.prod(et.ones(3, dtype=B)).dtype is I64
    assert et.logsumexp(et.ones(3, dtype=I64), 0).dtype is F32
    assert et.mean(et.ones(3), dtype=F64).dtype is F64


def test_reductions_database_names_every_op():
    assert set(REDUCTIONS) >= {"sum", "mean", "prod", "amax", "amin", "max", "min", "argmax", "argmin", "var",
                               "std", "var_mean", "std_mean", "norm", "logsumexp", "all", "any", "count_nonzero"}
