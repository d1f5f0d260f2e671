"""Generic op tests driven by the op database (opdb.py), like PyTorch's test_ops.py.

Every entry is checked for: values against its NumPy reference on every sample (0-d,
broadcast, non-contiguous, numbers on either side, extremal values), non-contiguous
inputs giving exactly the contiguous result, the result dtype under PyTorch's promotion
rules, the function / method / operator forms agreeing, `out=` (resize, dtype rules),
the in-place form (values, version counter, dtype and shape rules) and error inputs.

The values and the error inputs are checked on every device (the `device` parameter): on
the CPU against the reference, on CUDA (Numba's simulator where no GPU is) against the
CPU, inside `device_only()`, so that an op that quietly computed on the host fails.
"""
import warnings

import numpy as np
import pytest

import ember_tensor as et
from cuda_guard import DEVICES, matches_the_cpu
from ember_tensor.testing.opdb import (B, CAN_CAST, COMPLEX_SPECIAL_VALUES_DIFFER, F16, F32, F64, BF16, I32, I64, NP, OP_DB, OPS, TOLERANCE, TYPE_NAME, U8,
                  Operand, SampleInput, expected_result, is_inexact, make_values, reference_result_type, rng_for)


def _params(test, ops=OP_DB, dtypes=None):
    """(op, dtype) pytest params, with the op's expected failures marked (strict)."""
    params = []
    for op in ops:
        for dtype in (op.dtypes if dtypes is None else dtypes(op)):
            reason = op.xfail(test, dtype)
            marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
            params.append(pytest.param(op, dtype, marks=marks, id=f"{op.name}-{dtype.name}"))
    return params


def _device_params(test, ops=OP_DB):
    """(op, dtype, device) params: the CPU's carry the op's expected failures against the
    reference; another device's are held to the CPU's results, failures included."""
    params = []
    for device in DEVICES:
        (name,), device_marks = device.values, list(device.marks)
        for op in ops:
            for dtype in op.dtypes:
                reason = op.xfail(test, dtype) if name == "cpu" else None
                marks = device_marks + ([pytest.mark.xfail(reason=reason, strict=True)] if reason else [])
                params.append(pytest.param(op, dtype, name, marks=marks, id=f"{op.name}-{dtype.name}-{name}"))
    return params


def _device_op_params(test, ops):
    """(op, device) params, as `_device_params` without the dtype."""
    params = []
    for device in DEVICES:
        (name,), device_marks = device.values, list(device.marks)
        for op in ops:
            reason = op.xfail(test) if name == "cpu" else None
            marks = device_marks + ([pytest.mark.xfail(reason=reason, strict=True)] if reason else [])
            params.append(pytest.param(op, name, marks=marks, id=f"{op.name}-{name}"))
    return params


# Integer division reads back one flag (is any divisor zero?) to raise the CPU's
# ZeroDivisionError: the only host read these ops make on CUDA.
_READS_A_FLAG = {"div", "floor_divide", "remainder", "fmod"}


def _op_params(test, ops=OP_DB):
    params = []
    for op in ops:
        reason = op.xfail(test)
        marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
        params.append(pytest.param(op, marks=marks, id=op.name))
    return params


def _call(fn, args, kwargs, **extra):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # uint8 where-conditions and the like
        return fn(*args, **kwargs, **extra)


def assert_matches(op, sample, actual, expected, dtype):
    """`actual` (ember tensor) equals `expected` (array of `dtype`) within dtype tolerance."""
    msg = f"{op.name}, sample {sample.name!r}, dtype {dtype}"
    got = np.asarray(actual.numpy())
    assert got.shape == expected.shape, msg
    if is_inexact(dtype):
        rtol, atol = op.tol.get(dtype, TOLERANCE[dtype])
        wide = np.complex128 if dtype.is_complex else np.float64
        np.testing.assert_allclose(got.astype(wide), expected.astype(wide), rtol=rtol, atol=atol,
                                   equal_nan=True, err_msg=msg)
    else:
        np.testing.assert_array_equal(got, expected, err_msg=msg)


def _is_tensor_input(sample):
    return isinstance(sample.input, Operand)


# --- forward -----------------------------------------------------------------------------


@pytest.mark.parametrize("op, dtype, device", _device_params("test_forward"))
def test_forward(op, dtype, device):
    """Values, dtype and shape of every sample match the reference (another device: the CPU)."""
    samples = op.sample_inputs(dtype)
    assert samples, f"{op.name} has no samples for {dtype}"
    if device != "cpu":
        reads_a_flag = op.name in _READS_A_FLAG and not dtype.is_floating_point
        tol = op.tol[dtype][0] if dtype.is_complex and dtype in op.tol else 1e-6
        for sample in samples:
            if sample.name.startswith("complex extremal") and op.name in COMPLEX_SPECIAL_VALUES_DIFFER:
                continue  # the CPU's special values are not C99's there (nor the simulator's)
            matches_the_cpu(lambda *xs, kw=sample.kwargs: op.fn(*xs, **kw), sample.ember(),
                            f"{op.name}, sample {sample.name!r}, {dtype}", reads_a_flag, tol=tol)
        return
    for sample in samples:
        if sample.name.startswith("complex extremal"):
            continue  # NumPy's special values are not C99's: test_complex_ops.py holds these to PyTorch's
        args = sample.ember()
        result = _call(op.fn, args, sample.kwargs)
        if op.result == "python":
            assert result is expected_result(op, sample, None), sample.name
            continue
        expected_dtype = op.result_dtype(args, sample.kwargs)
        assert result.dtype is expected_dtype, f"{op.name} {sample.name}: {result.dtype} != {expected_dtype}"
        shape = np.broadcast_shapes(*(np.shape(x.value) for x in sample.operands() if isinstance(x, Operand)))
        assert tuple(result.shape) == shape, sample.name
        assert_matches(op, sample, result, expected_result(op, sample, expected_dtype), expected_dtype)


def _contiguous(x):
    return Operand(np.array(x.value, order="C")) if isinstance(x, Operand) else x


@pytest.mark.parametrize("op, dtype", _params("test_noncontiguous_matches_contiguous"))
def test_noncontiguous_matches_contiguous(op, dtype):
    """A non-contiguous or expanded operand gives exactly what its contiguous copy gives."""
    checked = 0
    for sample in op.sample_inputs(dtype):
        if all(not isinstance(x, Operand) or x.layout == "contiguous" for x in sample.operands()):
            continue
        args = sample.ember()
        assert any(isinstance(a, et.Tensor) and not a.is_contiguous() for a in args), sample.name
        dense = SampleInput(*_split(tuple(_contiguous(x) for x in sample.operands())), sample.kwargs)
        got, want = _call(op.fn, args, sample.kwargs), _call(op.fn, dense.ember(), sample.kwargs)
        if op.result == "python":
            assert got == want, sample.name
        else:
            np.testing.assert_array_equal(_comparable(got), _comparable(want), err_msg=sample.name)
        checked += 1
    assert checked, "the op has no non-contiguous samples"


def _split(operands):
    return operands[0], operands[1:]


# --- forms -------------------------------------------------------------------------------


def _comparable(t):
    # NumPy's assert_array_equal sees NaN == NaN only for its own float types, not for
    # ml_dtypes' bfloat16: compare bfloat16 as float32 (exact, every bfloat16 is a float32).
    a = t.numpy()
    return a.astype(np.float32) if t.dtype is BF16 else a


def _same(a, b, what):
    if isinstance(a, bool):
        assert a is b, what
        return
    assert a.dtype is b.dtype and a.shape == b.shape, what
    np.testing.assert_array_equal(_comparable(a), _comparable(b), err_msg=what)


@pytest.mark.parametrize("op, dtype", _params("test_method_function_operator_agree"))
def test_method_function_operator_agree(op, dtype):
    """x.op(y), et.op(x, y) and the Python operator (x + y, 2 + x, -x) give the same result."""
    for sample in op.sample_inputs(dtype):
        args = sample.ember()
        want = _call(op.fn, args, sample.kwargs)
        if op.method and _is_tensor_input(sample):
            _same(_call(op.method_of(args[0]), args[1:], sample.kwargs), want, f"method, {sample.name}")
        if op.operator is not None and not sample.kwargs:
            _same(op.operator(*args), want, f"operator, {sample.name}")


# --- out= --------------------------------------------------------------------------------


def _out_samples(op, dtype):
    samples = [s for s in op.sample_inputs(dtype) if _is_tensor_input(s)]
    return samples[:3] + [s for s in samples if "0-d" in s.name][:1]


@pytest.mark.parametrize("op, dtype", _params("test_out", [op for op in OP_DB if op.supports_out]))
def test_out(op, dtype):
    """out= writes into and returns `out`, bumps its version, and resizes a wrong shape."""
    for sample in _out_samples(op, dtype):
        args = sample.ember()
        want = _call(op.fn, args, sample.kwargs)
        out = et.empty(want.shape, dtype=want.dtype)
        version = out._version
        got = _call(op.fn, args, sample.kwargs, out=out)
        assert got is out and out._version == version + 1, sample.name
        _same(out, want, f"out=, {sample.name}")
        if want.dim() == 2:  # a transposed out tensor is written through its strides
            base = et.zeros(want.shape[1], want.shape[0], dtype=want.dtype)
            _call(op.fn, args, sample.kwargs, out=base.t())
            _same(base.t().contiguous(), want, f"transposed out=, {sample.name}")
        # Called directly, not through _call: its warning filter would hide the resize warning.
        empty = et.empty(0, dtype=want.dtype)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # resizing an empty out= tensor is silent
            op.fn(*args, **sample.kwargs, out=empty)
        _same(empty, want, f"empty out=, {sample.name}")
        if want.numel() != 2:
            wrong = et.empty(2, dtype=want.dtype)
            with pytest.warns(UserWarning, match=r"An output with one or more elements was resized since it "
                                                 r"had shape \[2\], which does not match the required output "
                                                 rf"shape \[{', '.join(map(str, want.shape))}\]\. This behavior "
                                                 r"is deprecated, and in a future PyTorch release outputs will not "
                                                 r"be resized unless they have zero elements\. You can explicitly "
                                                 r"reuse an out tensor t by resizing it, inplace, to zero elements "
                                                 r"with t\.resize_\(0\)\."):
                op.fn(*args, **sample.kwargs, out=wrong)
            _same(wrong, want, f"resized out=, {sample.name}")


@pytest.mark.parametrize("op", _op_params("test_out_dtype", [op for op in OP_DB if op.supports_out]))
def test_out_dtype(op):
    """out= may hold a wider dtype, but not a lower kind: PyTorch's can't-cast error."""
    dtype = op.dtypes[0]
    sample = next(s for s in op.sample_inputs(dtype) if _is_tensor_input(s))
    args = sample.ember()
    want = _call(op.fn, args, sample.kwargs)
    if op.out_dtype_error:  # out= must have exactly the result's dtype
        for other in (F64, I64):
            msg = op.out_dtype_error.format(result=TYPE_NAME[want.dtype], out=TYPE_NAME[other])
            with pytest.raises(RuntimeError, match=msg):
                _call(op.fn, args, sample.kwargs, out=et.empty(want.shape, dtype=other))
        return
    wider = et.empty(want.shape, dtype=F64)
    _call(op.fn, args, sample.kwargs, out=wider)
    np.testing.assert_allclose(wider.numpy(), want.numpy().astype(np.float64), rtol=1e-6, equal_nan=True)
    lower = {2: I64, 1: B, 0: None}[2 if want.dtype.is_floating_point else (0 if want.dtype is B else 1)]
    if lower is None:
        return  # a bool result casts to anything
    with pytest.raises(RuntimeError, match=f"result type {TYPE_NAME[want.dtype]} can't be cast to the desired "
                                           f"output type {TYPE_NAME[lower]}"):
        _call(op.fn, args, sample.kwargs, out=et.empty(want.shape, dtype=lower))


# --- in-place ----------------------------------------------------------------------------


def _inplace_samples(op, dtype):
    """Samples whose input can be written in place: a tensor of the result's shape, not expanded."""
    for sample in op.sample_inputs(dtype):
        if not _is_tensor_input(sample) or sample.input.layout == "expanded":
            continue
        if sample.name.startswith("complex extremal"):
            continue  # against NumPy: test_complex_ops.py holds these to PyTorch's
        operands = [x.value for x in sample.operands() if isinstance(x, Operand)]
        if np.broadcast_shapes(*(np.shape(v) for v in operands)) == sample.input.value.shape:
            yield sample


def _inplace_dtypes(op):
    """The dtypes whose own result can be written back in place (float results into ints cannot:
    test_inplace_cast_error checks those)."""
    # A real result of complex input (abs) is refused in place: the op's error inputs say so.
    return [d for d in op.dtypes if CAN_CAST[(op.result(d, {}), d)]
            and not (d.is_complex and not op.result(d, {}).is_complex)]


@pytest.mark.parametrize("op, dtype", _params("test_inplace", [op for op in OP_DB if op.inplace], _inplace_dtypes))
def test_inplace(op, dtype):
    """x.op_(y) writes the result into x (cast to x's dtype), returns x, bumps its version once."""
    checked = 0
    for sample in _inplace_samples(op, dtype):
        args = sample.ember()
        x = args[0]
        result_dtype = op.result_dtype(args, sample.kwargs)
        if not CAN_CAST[(result_dtype, x.dtype)]:
            continue
        expected = expected_result(op, sample, result_dtype)
        with np.errstate(all="ignore"):
            expected = expected.astype(NP[x.dtype])
        version = x._version
        got = _call(op.inplace_of(x), args[1:], sample.kwargs)
        assert got is x and x._version == version + 1, sample.name
        assert x.dtype is dtype
        assert_matches(op, sample, x, expected, dtype)
        if op.ioperator is not None and not sample.kwargs:
            y = sample.ember()[0]
            alias = y
            y = op.ioperator(y, *args[1:])
            assert y is alias, f"augmented assignment rebinds, {sample.name}"
            assert_matches(op, sample, y, expected, dtype)
        checked += 1
    assert checked, "no in-place sample ran"


@pytest.mark.parametrize("op, dtype", _params("test_inplace_cast_error", [op for op in OP_DB if op.inplace]))
def test_inplace_cast_error(op, dtype):
    """An in-place result of a higher kind than self (float into int) is PyTorch's error."""
    for sample in _inplace_samples(op, dtype):
        args = sample.ember()
        result_dtype = op.result_dtype(args, sample.kwargs)
        if CAN_CAST[(result_dtype, args[0].dtype)]:
            continue
        version = args[0]._version
        names = {**TYPE_NAME, **(op.cast_error_names or {})}
        with pytest.raises(RuntimeError, match=f"result type {TYPE_NAME[result_dtype]} can't be cast to "
                                               f"the desired output type {names[args[0].dtype]}"):
            _call(op.inplace_of(args[0]), args[1:], sample.kwargs)
        assert args[0]._version == version


_BINARY = [op for op in OP_DB if op.kind == "binary"]


@pytest.mark.parametrize("op", _op_params("test_inplace_shape_error", [op for op in _BINARY if op.inplace]))
def test_inplace_shape_error(op):
    """In-place ops cannot broadcast self: PyTorch's 'output with shape' error."""
    dtype = op.dtypes[0]
    rng = rng_for(op.name, dtype)
    x = et.tensor(make_values((1, 3, 1), dtype, rng, *op.domain), dtype=dtype)
    y = et.tensor(make_values((3, 3, 7), dtype, rng, *op.rhs_domain, nonzero=op.rhs_nonzero), dtype=dtype)
    with pytest.raises(RuntimeError, match=r"output with shape \[1, 3, 1\] doesn't match the broadcast shape "
                                           r"\[3, 3, 7\]"):
        op.inplace_of(x)(y)
    assert x._version == 0
    if op.ioperator is not None:
        with pytest.raises(RuntimeError, match=r"output with shape \[1, 3, 1\] doesn't match"):
            op.ioperator(x, y)


# --- errors ------------------------------------------------------------------------------


@pytest.mark.parametrize("op, device", _device_op_params("test_error_inputs",
                                                          [op for op in OP_DB if op.error_inputs_func]))
def test_error_inputs(op, device):
    """Each error input raises PyTorch's exception type with PyTorch's message (on CUDA
    the CPU's, word for word, as PyTorch's CUDA build words it)."""
    for err in op.error_inputs():
        args = err.sample.ember()
        fn = {"function": op.fn, "method": lambda *a, **k: op.method_of(a[0])(*a[1:], **k),
              "inplace": lambda *a, **k: op.inplace_of(a[0])(*a[1:], **k)}[err.variant]
        with pytest.raises(err.exc, match=err.match):
            _call(fn, args, err.sample.kwargs)
        if device != "cpu":
            matches_the_cpu(lambda *xs, kw=err.sample.kwargs: fn(*xs, **kw), args,
                            f"{op.name} error input {err.sample.name!r} ({err.variant})")


def _to_torch(torch, x):
    if not isinstance(x, Operand):
        return x
    v = x.value
    if v.dtype == NP[BF16]:
        return torch.tensor(v.astype(np.float32), dtype=torch.bfloat16)
    return torch.from_numpy(np.ascontiguousarray(v))


@pytest.mark.parametrize("op", [pytest.param(op, id=op.name) for op in OP_DB if op.error_inputs_func])
def test_error_inputs_match_torch(op):
    """The error inputs are PyTorch's: torch itself raises that type and message (where installed)."""
    torch = pytest.importorskip("torch")
    for err in op.error_inputs():
        args = [_to_torch(torch, x) for x in err.sample.operands()]
        fn = {"function": getattr(torch, op.name), "method": lambda *a, **k: getattr(a[0], op.name)(*a[1:], **k),
              "inplace": lambda *a, **k: getattr(a[0], op.name + "_")(*a[1:], **k)}[err.variant]
        with pytest.raises(err.exc, match=err.match):
            fn(*args, **err.sample.kwargs)


@pytest.mark.parametrize("op", _op_params("test_broadcast_error", _BINARY))
def test_broadcast_error(op):
    """Operands that do not broadcast: PyTorch's message naming sizes and dimension."""
    dtype = op.dtypes[0]
    rng = rng_for(op.name, dtype)
    a = et.tensor(make_values((2, 3), dtype, rng, *op.domain), dtype=dtype)
    b = et.tensor(make_values((4,), dtype, rng, *op.rhs_domain, nonzero=op.rhs_nonzero), dtype=dtype)
    with pytest.raises(RuntimeError, match=r"The size of tensor a \(3\) must match the size of tensor b \(4\) "
                                           r"at non-singleton dimension 1"):
        op.fn(a, b)


@pytest.mark.parametrize("name", ["sin", "exp", "neg", "abs", "isnan", "logical_not"])
def test_unary_rejects_numbers(name):
    with pytest.raises(TypeError, match=rf"{name}\(\): argument 'input' \(position 1\) must be Tensor, not float"):
        getattr(et, name)(1.0)


# --- promotion ---------------------------------------------------------------------------

# Mixed-dtype pairs whose promoted dtype computes in kernels the ops already have.
_PAIRS = [(F32, I64), (I64, F64), (B, I64), (F16, F64), (BF16, F16), (I32, I64), (B, F16), (U8, I64)]
# heaviside does not promote: PyTorch refuses operands of different dtypes (its error inputs say so).
_PROMOTING = [op for op in _BINARY if op.name not in ("true_divide", "heaviside")] + [OPS["where"], OPS["clamp"]]


def _promotion_samples(op, rng):
    def v(shape, dtype, rhs=False):
        domain = op.rhs_domain if rhs else op.domain
        return make_values(shape, dtype, rng, *domain, nonzero=rhs and op.rhs_nonzero)
    for a, b in _PAIRS:
        for sa, sb, layout in (((3, 4), (3, 4), "dims"), ((3, 4), (), "0-d other"), ((), (3, 4), "0-d input")):
            x, y = Operand(v(sa, a)), Operand(v(sb, b, True))
            if op.name == "where":
                yield SampleInput(Operand(rng.random((3, 4)) < 0.5), (x, y), name=f"{a}, {b}, {layout}")
            elif op.name == "clamp":
                yield SampleInput(x, (y, None), name=f"{a}, {b}, {layout}")
            else:
                yield SampleInput(x, (y,), name=f"{a}, {b}, {layout}")


def _supported(op, sample):
    # Skip pairs the op rejects (bitwise ops on floats, sub with bool, hypot on ints ...).
    tensors = [x for x in sample.ember() if isinstance(x, et.Tensor)]
    if op.name == "where":
        tensors = tensors[1:]
    promoted = reference_result_type(tensors)
    if op.name in ("sub", "div", "floor_divide", "remainder", "fmod", "pow") and any(t.dtype is B for t in tensors):
        return op.name != "sub" and promoted is not B
    return promoted in op.dtypes


@pytest.mark.parametrize("op", _op_params("test_type_promotion", _PROMOTING))
def test_type_promotion(op):
    """Mixed dtypes and 0-d tensors promote by PyTorch's rules, and the values follow."""
    checked = 0
    for sample in _promotion_samples(op, rng_for(op.name, F64)):
        if not _supported(op, sample):
            continue
        args = sample.ember()
        result = _call(op.fn, args, sample.kwargs)
        expected_dtype = op.result_dtype(args, sample.kwargs)
        assert result.dtype is expected_dtype, f"{sample.name}: {result.dtype} != {expected_dtype}"
        assert_matches(op, sample, result, expected_result(op, sample, expected_dtype), expected_dtype)
        checked += 1
    assert checked


_ALIASES = {"true_divide": "div", "multiply": "mul", "subtract": "sub", "divide": "div", "negative": "neg",
            "absolute": "abs", "arcsin": "asin", "arccos": "acos", "arctan": "atan", "arctan2": "atan2",
            "arcsinh": "asinh", "arccosh": "acosh", "arctanh": "atanh", "greater": "gt",
            "greater_equal": "ge", "less": "lt", "less_equal": "le", "not_equal": "ne", "clip": "clamp"}


@pytest.mark.parametrize("alias, name", sorted(_ALIASES.items()))
def test_aliases(alias, name):
    """PyTorch's alternative names compute the same thing, as functions and methods."""
    x = et.tensor([[0.5, -0.25], [0.75, 0.1]])
    y = et.tensor([[0.3, 0.2], [-0.4, 0.6]])
    args = (x, 0.0, 0.5) if name == "clamp" else (x, y) if name in {"div", "mul", "sub", "atan2", "gt", "ge", "lt",
                                                                       "le", "ne"} else (x,)
    _same(getattr(et, alias)(*args), getattr(et, name)(*args), alias)
    _same(getattr(x, alias)(*args[1:]), getattr(et, name)(*args), f"method {alias}")
