"""gradcheck and gradgradcheck (float64) over ember-tensor's op database
(`ember_tensor.testing.opdb`): every differentiable op there, on its own samples
(0-d, broadcast, transposed, stepped, Python numbers on either side).

A sample that sits on a kink of the op (|x| at 0, floor at an integer, max at a tie) makes
finite differences meaningless there; as Chainer's gradient check does, such a sample is
moved by a small random offset and checked again (up to three times) before it counts as a
failure. Samples with non-finite values (the extremal ones) are left out.
"""
import numpy as np
import pytest

import ember_autograd
import ember_tensor as et
from ember_autograd._rules import NOT_DIFFERENTIABLE, TABLE
from ember_autograd.gradcheck import GradcheckError

from ember_tensor.testing import opdb

F64 = et.float64
SAMPLES_PER_OP = 6
# Ops whose gradient PyTorch itself does not implement (they raise, as ember does).
NO_DERIVATIVE_IN_PYTORCH = {"floor_divide", "heaviside"}


def _differentiable(op):
    entry = TABLE.get(op.name)
    return (entry is not None and entry is not NOT_DIFFERENTIABLE and F64 in op.dtypes
            and op.name not in NO_DERIVATIVE_IN_PYTORCH)


def _finite(sample):
    for x in sample.operands():
        value = x.value if isinstance(x, opdb.Operand) else x
        if isinstance(value, (float, int, np.ndarray)) and not np.all(np.isfinite(value)):
            return False
    return True


def _cases():
    for op in opdb.OP_DB:
        if not _differentiable(op):
            continue
        samples = [s for s in op.sample_inputs(F64) if _finite(s)][:SAMPLES_PER_OP]
        for i, sample in enumerate(samples):
            yield pytest.param(op, sample, id=f"{op.name}-{i}-{sample.name}")


def _arguments(sample, rng, jitter):
    args = []
    for x in sample.operands():
        if isinstance(x, opdb.Operand) and np.asarray(x.value).dtype == np.float64:
            value = np.asarray(x.value, dtype=np.float64)
            if jitter:
                value = value + rng.uniform(-jitter, jitter, value.shape)
            t = opdb.Operand(value, x.layout).tensor(F64)
            if 0 in t.stride():
                t = t.contiguous()  # stride-0 inputs overlap in memory: gradcheck refuses them
            args.append(t.detach().requires_grad_())
        elif isinstance(x, opdb.Operand):
            args.append(x.tensor(opdb._dtype_of_array(x.value)))
        else:
            args.append(x)
    return args


@pytest.mark.parametrize("op, sample", list(_cases()))
def test_opdb_gradcheck_and_gradgradcheck(op, sample):
    rng = np.random.default_rng(0)
    last_error = None
    for attempt in range(4):
        args = _arguments(sample, rng, jitter=0.0 if attempt == 0 else 1e-2 * attempt)
        if not any(isinstance(a, et.Tensor) and a.requires_grad for a in args):
            pytest.skip("no float64 tensor operand in this sample")

        def fn(*tensors, _kwargs=sample.kwargs):
            return op.fn(*tensors, **_kwargs)
        try:
            assert gradcheck_both(fn, args)
            return
        except GradcheckError as error:
            last_error = error
    raise last_error


def gradcheck_both(fn, args):
    return (ember_autograd.gradcheck(fn, tuple(args), atol=1e-5, rtol=1e-3)
            and ember_autograd.gradgradcheck(fn, tuple(args), atol=1e-5, rtol=1e-3))


def test_the_database_has_differentiable_ops():
    assert sum(_differentiable(op) for op in opdb.OP_DB) >= 40


# (op, its second operand, PyTorch's message)
_NO_DERIVATIVE_CALLS = [("floor_divide", 2.0, "the derivative for 'floor_divide' is not implemented."),
                        ("heaviside", et.tensor(0.5, dtype=F64), "derivative for aten::heaviside is not implemented")]


@pytest.mark.parametrize("name, other, message", _NO_DERIVATIVE_CALLS, ids=[c[0] for c in _NO_DERIVATIVE_CALLS])
def test_ops_without_a_derivative_raise_pytorchs_error(name, other, message):
    assert {c[0] for c in _NO_DERIVATIVE_CALLS} == NO_DERIVATIVE_IN_PYTORCH
    x = et.tensor([1.5, 2.5], dtype=F64, requires_grad=True)
    with pytest.raises(RuntimeError, match=message):
        getattr(et, name)(x, other).sum().backward()
