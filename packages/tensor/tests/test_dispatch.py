"""The dispatcher: every way of calling an op (the function, a Tensor method, a Python
operator) reaches the registered wrappers with the same op and arguments, and Tensor
methods keep the op's name, documentation and signature."""
import inspect
import pickle

import numpy as np
import pytest

import ember_tensor as et
from ember_tensor import dispatch

# (how the op is called, on tensors a and b, the op's name, the arguments the wrapper sees)
CALLS = [
    (lambda a, b: et.add(a, b), "add", 2),
    (lambda a, b: a + b, "add", 2),
    (lambda a, b: a.add(b, alpha=2), "add", 2),
    (lambda a, b: a - b, "sub", 2),
    (lambda a, b: a * 2.0, "mul", 2),
    (lambda a, b: -a, "neg", 1),
    (lambda a, b: a.exp(), "exp", 1),
    (lambda a, b: a[1], "getitem", 2),
    (lambda a, b: a.sum(0), "sum", 2),
    (lambda a, b: a.view(1, 3), "view", 3),
]


@pytest.mark.parametrize("call, name, n_args", CALLS)
def test_every_call_form_reaches_the_wrappers(call, name, n_args):
    a, b = et.tensor([1.0, 2.0, 3.0]), et.tensor([4.0, 5.0, 6.0])
    expected = call(a, b)
    seen = []

    def wrapper(op, args, kwargs, redispatch):
        seen.append((op.name, len(args), dict(kwargs)))
        return redispatch(op, args, kwargs)

    dispatch.register_wrapper(wrapper, outermost=True)
    try:
        result = call(a, b)
    finally:
        dispatch.unregister_wrapper(wrapper)
    assert seen[0][:2] == (name, n_args)
    np.testing.assert_array_equal(result.numpy(), expected.numpy())


def test_keyword_arguments_reach_the_wrappers_through_methods():
    seen = []

    def wrapper(op, args, kwargs, redispatch):
        seen.append(dict(kwargs))
        return redispatch(op, args, kwargs)

    dispatch.register_wrapper(wrapper, outermost=True)
    try:
        et.ones(2).add(et.ones(2), alpha=3)
    finally:
        dispatch.unregister_wrapper(wrapper)
    assert seen[0] == {"alpha": 3}


def test_a_wrapper_may_answer_for_the_op_through_a_method():
    marker = object()

    def wrapper(op, args, kwargs, redispatch):
        return marker if op.name == "add" else redispatch(op, args, kwargs)

    dispatch.register_wrapper(wrapper, outermost=True)
    try:
        assert (et.ones(2) + et.ones(2)) is marker
        assert et.ones(2).add(et.ones(2)) is marker
    finally:
        dispatch.unregister_wrapper(wrapper)


def test_the_innermost_wrapper_is_handed_call_impl():
    handed = []

    def outer(op, args, kwargs, redispatch):
        return redispatch(op, args, kwargs)

    def inner(op, args, kwargs, redispatch):
        handed.append(redispatch)
        return redispatch(op, args, kwargs)

    dispatch.register_wrapper(outer, outermost=True)
    dispatch.register_wrapper(inner)
    try:
        out = et.ones(2) * et.full((2,), 3.0)
    finally:
        dispatch.unregister_wrapper(inner)
        dispatch.unregister_wrapper(outer)
    assert handed and all(r is dispatch.call_impl for r in handed)
    assert out.tolist() == [3.0, 3.0]
    assert dispatch.call_impl(dispatch.get_operator("add"), (et.ones(1), et.ones(1)), {"alpha": 2}).tolist() == [3.0]


@pytest.mark.parametrize("name, op", [("exp", "exp"), ("add", "add"), ("__add__", "add"), ("__neg__", "neg"),
                                      ("__getitem__", "getitem"), ("clip", "clamp")])
def test_methods_keep_the_ops_name_doc_and_signature(name, op):
    method = getattr(et.Tensor, name)
    operator = dispatch.get_operator(op)
    assert method.__name__ == name
    assert method.__doc__ == operator.__doc__
    assert inspect.signature(method) == inspect.signature(operator.impl)
    assert method.__wrapped__ is operator


@pytest.mark.parametrize("name", ["exp", "add", "__add__", "__getitem__", "clip"])
def test_methods_pickle_by_their_place_on_tensor(name):
    method = getattr(et.Tensor, name)
    assert pickle.loads(pickle.dumps(method)) is method


def test_sparse_tensors_refuse_dense_op_methods():
    # A dense op run as a method of a sparse tensor would compute on its placeholder.
    sparse = et.ones(2, 2).to_sparse()
    with pytest.raises((RuntimeError, NotImplementedError)):
        sparse.exp()
    with pytest.raises((RuntimeError, NotImplementedError)):
        sparse.softmax(0)
