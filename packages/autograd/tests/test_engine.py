"""The engine and the graph as users see them: recording flags, PyTorch's errors,
backward/grad arguments, higher order, in-place ops and views, hooks, grad modes,
and anomaly mode (Function: test_function.py). Expected values are PyTorch's."""
import warnings

import numpy as np
import pytest

import ember_autograd as autograd
import ember_tensor as E


def leaf(values, dtype=E.float64):
    return E.tensor(values, dtype=dtype, requires_grad=True)


# -- recording ---------------------------------------------------------------------------------

def test_graph_structure_and_leaf_flags():
    x = leaf([1.0, 2.0])
    y = x * 2
    z = y.exp().sum()
    assert x.is_leaf and not y.is_leaf and x.grad_fn is None
    assert z.grad_fn.name() == "SumBackward0"
    (exp_fn, nr), = z.grad_fn.next_functions
    assert exp_fn.name() == "ExpBackward0" and nr == 0
    (mul_fn, _), = exp_fn.next_functions
    assert mul_fn.name() == "MulBackward0"
    acc, none = mul_fn.next_functions
    assert acc[0].name() == "torch::autograd::AccumulateGrad" and acc[0].variable is x
    assert none == (None, 0)


@pytest.mark.parametrize("op", [lambda t: t.argmax(), lambda t: t > 0, lambda t: t.long(),
                                lambda t: t.floor().long(), lambda t: (t == t).all()])
def test_non_differentiable_outputs_never_require_grad(op):
    out = op(leaf([1.0, -2.0]))
    assert not out.requires_grad and out.grad_fn is None


def test_grad_accumulates_on_leaves_across_backward_calls():
    x = leaf([1.0, 2.0])
    (x * x).sum().backward()
    (x * 3).sum().backward()
    assert x.grad.tolist() == [5.0, 7.0]


def test_gradient_of_a_broadcast_input_is_summed_back():
    a, b = leaf([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]), leaf([10.0, 20.0, 30.0])
    (a * b).sum().backward()
    assert b.grad.tolist() == [5.0, 7.0, 9.0]
    assert a.grad.tolist() == [[10.0, 20.0, 30.0]] * 2


def test_a_float32_input_gets_a_float32_gradient_from_mixed_dtype_ops():
    a, b = leaf([1.0, 2.0], E.float32), leaf([3.0, 4.0], E.float64)
    (a * b).sum().backward()
    assert a.grad.dtype is E.float32 and b.grad.dtype is E.float64


# -- errors --------------------------------------------------------------------------------------

def test_backward_of_a_non_scalar_needs_a_gradient():
    y = leaf([1.0, 2.0]) * 2
    with pytest.raises(RuntimeError, match="^grad can be implicitly created only for scalar outputs$"):
        y.backward()
    y.backward(E.tensor([1.0, 0.5], dtype=E.float64))


def test_second_backward_through_a_freed_graph():
    x = leaf([1.0, 2.0])
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="^Trying to backward through the graph a second time"):
        y.backward()


def test_retain_graph_allows_a_second_backward():
    x = leaf([1.0, 2.0])
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.tolist() == [4.0, 8.0]


def test_grad_of_an_unused_input():
    x, unused = leaf([1.0]), leaf([2.0])
    with pytest.raises(RuntimeError, match="The differentiated Tensor at index 1 appears to not have been "
                                           "used in the graph. Set allow_unused=True"):
        autograd.grad((x * 2).sum(), (x, unused))
    assert autograd.grad((x * 2).sum(), (x, unused), allow_unused=True)[1] is None
    assert autograd.grad((x * 2).sum(), (x, unused), materialize_grads=True)[1].tolist() == [0.0]


def test_gradient_shape_mismatch():
    y = leaf([1.0, 2.0]) * 2
    with pytest.raises(RuntimeError, match=r"Mismatch in shape: grad_output\[0\] has a shape of"):
        y.backward(E.ones(3, dtype=E.float64))


def test_in_place_on_a_leaf_and_on_its_view():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="^a leaf Variable that requires grad is being used in an in-place "
                                           "operation.$"):
        x.add_(1)
    with pytest.raises(RuntimeError, match="^a view of a leaf Variable that requires grad is being used in an "
                                           "in-place operation.$"):
        x[0].mul_(2)
    with autograd.no_grad():
        x.add_(1)  # allowed: not recorded
    assert x.tolist() == [2.0, 3.0] and x.is_leaf


def test_out_argument_refuses_tensors_that_require_grad():
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        E.add(leaf([1.0]), 1, out=E.empty(1, dtype=E.float64))


# -- backward / grad arguments --------------------------------------------------------------------

def test_backward_inputs_restricts_accumulation():
    a, b = leaf([1.0]), leaf([2.0])
    (a * b).sum().backward(inputs=[a])
    assert a.grad.tolist() == [2.0] and b.grad is None


def test_autograd_backward_with_several_roots():
    x = leaf([1.0, 2.0])
    autograd.backward([(x * 2).sum(), x * x], [None, E.ones(2, dtype=E.float64)])
    assert x.grad.tolist() == [4.0, 6.0]


def test_create_graph_third_derivative():
    x = leaf([2.0])
    y = x ** 4
    (g1,) = autograd.grad(y, x, create_graph=True)
    (g2,) = autograd.grad(g1, x, create_graph=True)
    (g3,) = autograd.grad(g2, x)
    assert (g1.item(), g2.item(), g3.item()) == (32.0, 48.0, 48.0)


def test_backward_create_graph_makes_grad_differentiable():
    x = leaf([1.0, 3.0])
    (x ** 3).sum().backward(create_graph=True)
    assert x.grad.requires_grad
    (g,) = autograd.grad(x.grad.sum(), x)
    assert g.tolist() == [6.0, 18.0]


# -- in-place ops and views --------------------------------------------------------------------------

def test_in_place_ops_on_non_leaves_are_differentiable():
    x = leaf([1.0, 2.0, 3.0])
    y = x * 1
    y.mul_(x)           # y = x^2
    y.add_(x, alpha=2)  # y = x^2 + 2x
    y.sum().backward()
    assert y.grad_fn.name() == "AddBackward0"
    assert x.grad.tolist() == [4.0, 6.0, 8.0]


def test_setitem_gradients_flow_to_the_value_and_the_rest():
    x, v = leaf([1.0, 2.0, 3.0, 4.0]), leaf([10.0, 20.0])
    y = x * 2
    y[1:3] = v * v
    (y * E.tensor([1.0, 2.0, 3.0, 4.0], dtype=E.float64)).sum().backward()
    assert x.grad.tolist() == [2.0, 0.0, 0.0, 8.0]
    assert v.grad.tolist() == [40.0, 120.0]


def test_in_place_op_on_a_view_rebases_the_base():
    x = leaf([1.0, 2.0, 3.0])
    base = x.clone()
    view = base[:2]
    view.mul_(3)
    assert base.grad_fn.name() == "CopySlices"
    (base * base).sum().backward()
    assert x.grad.tolist() == [18.0, 36.0, 6.0]


def test_views_of_a_leaf_share_its_gradient():
    x = leaf([[1.0, 2.0], [3.0, 4.0]])
    (x.t()[0] * 5).sum().backward()
    assert x.grad.tolist() == [[5.0, 0.0], [5.0, 0.0]]


def test_modified_saved_input_names_its_version():
    x = leaf([1.0, 2.0])
    y = x * 1
    z = y * y
    y.add_(1)
    with pytest.raises(RuntimeError, match=r"\[torch.DoubleTensor \[2\]\], which is output 0 of Add, "
                                           r"is at version 1; expected version 0 instead"):
        z.sum().backward()


# -- detach, .data, Variable ----------------------------------------------------------------------

def test_detach_shares_memory_and_version_detach_in_place():
    x = leaf([1.0, 2.0])
    y = x * 2
    d = y.detach()
    assert not d.requires_grad and d.data_ptr() == y.data_ptr()
    d.add_(1)
    assert y._version == 1
    y.detach_()
    assert y.grad_fn is None and not y.requires_grad and y.is_leaf


def test_variable_returns_a_tensor():
    v = autograd.Variable(E.ones(2), requires_grad=True)
    assert type(v) is E.Tensor and v.requires_grad and v.is_leaf
    assert isinstance(v, autograd.Variable)


# -- hooks ------------------------------------------------------------------------------------------

def test_tensor_hook_sees_and_replaces_the_gradient():
    x = leaf([1.0, 2.0])
    y = x * 2
    seen = []
    handle = y.register_hook(lambda g: seen.append(g.tolist()) or g * 10)
    y.sum().backward()
    assert seen == [[1.0, 1.0]] and x.grad.tolist() == [20.0, 20.0]
    handle.remove()
    x.grad = None
    (x * 2).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_leaf_hook_runs_before_accumulation():
    x = leaf([1.0])
    x.register_hook(lambda g: g * 3)
    (x * 2).sum().backward()
    assert x.grad.tolist() == [6.0]


def test_post_accumulate_grad_hook_sees_the_accumulated_grad():
    x = leaf([1.0, 2.0])
    seen = []
    x.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.tolist()))
    (x * 2).sum().backward()
    (x * 3).sum().backward()
    assert seen == [[2.0, 2.0], [5.0, 5.0]]
    with pytest.raises(RuntimeError, match="post accumulate grad hooks cannot be registered on non-leaf tensors"):
        (x * 2).register_post_accumulate_grad_hook(lambda t: None)


def test_node_hooks():
    x = leaf([1.0, 2.0])
    y = x * 3
    calls = []

    def post(grad_inputs, grad_outputs):
        calls.append(("post", [g.tolist() if g is not None else None for g in grad_inputs],
                      [g.tolist() for g in grad_outputs]))
        return (grad_inputs[0] * 2,) + tuple(grad_inputs[1:])

    y.grad_fn.register_hook(post)
    y.grad_fn.register_prehook(lambda grad_outputs: calls.append(("pre", grad_outputs[0].tolist())))
    y.sum().backward()
    assert calls == [("pre", [1.0, 1.0]), ("post", [[3.0, 3.0], None], [[1.0, 1.0]])]
    assert x.grad.tolist() == [6.0, 6.0]


def test_hook_on_a_tensor_without_grad_is_refused():
    with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't require gradient"):
        E.ones(2).register_hook(lambda g: g)


# -- grad modes -------------------------------------------------------------------------------------

def test_grad_modes_nest_and_decorate():
    x = leaf([1.0])
    with autograd.no_grad():
        assert not autograd.is_grad_enabled()
        with autograd.enable_grad():
            assert (x * 2).requires_grad
        assert not (x * 2).requires_grad
    assert autograd.is_grad_enabled()

    @autograd.no_grad()
    def doubled(t):
        return t * 2

    assert not doubled(x).requires_grad
    with autograd.inference_mode():
        assert autograd.is_inference_mode_enabled() and not (x * 2).requires_grad
    assert not autograd.is_inference_mode_enabled()


def test_requires_grad_can_be_set_only_on_leaves():
    y = leaf([1.0]) * 2
    with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf variables"):
        y.requires_grad_(False)
    with pytest.raises(RuntimeError, match="only Tensors of floating point"):
        E.tensor([1, 2]).requires_grad_()


# -- anomaly mode -----------------------------------------------------------------------------------

def test_detect_anomaly_names_the_op_that_made_a_nan():
    x = leaf([0.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with autograd.detect_anomaly():
            y = x.sqrt() * 0  # d sqrt(0) = inf; inf * 0 = nan
            with pytest.raises(RuntimeError, match="Function 'SqrtBackward0' returned nan values in its 0th output."):
                y.sum().backward()
    assert not autograd.is_anomaly_enabled()


def test_set_detect_anomaly_as_a_call():
    autograd.set_detect_anomaly(True)
    try:
        assert autograd.is_anomaly_enabled()
    finally:
        autograd.set_detect_anomaly(False)
    assert not autograd.is_anomaly_enabled()


def test_set_anomaly_enabled_with_check_nan():
    # torch.set_anomaly_enabled(enabled, check_nan): a plain switch, no context to restore.
    autograd.anomaly_mode.set_anomaly_enabled(True, check_nan=False)
    try:
        assert autograd.is_anomaly_enabled() and not autograd.anomaly_mode.is_anomaly_check_nan_enabled()
    finally:
        autograd.anomaly_mode.set_anomaly_enabled(False)
    assert not autograd.is_anomaly_enabled() and autograd.anomaly_mode.is_anomaly_check_nan_enabled()


# -- numerics against NumPy on a small composite -------------------------------------------------------

def test_composite_gradient_against_numpy():
    rng = np.random.default_rng(3)
    a_np, b_np = rng.standard_normal((4, 3)), rng.standard_normal((3,))
    a, b = leaf(a_np), leaf(b_np)
    ((a @ b).tanh() * (a.sum(1) + 1)).sum().backward()
    s = a_np @ b_np
    t = np.tanh(s)
    r = a_np.sum(1) + 1
    grad_s = (1 - t ** 2) * r
    np.testing.assert_allclose(a.grad.numpy(), np.outer(grad_s, b_np) + t[:, None], rtol=1e-12)
    np.testing.assert_allclose(b.grad.numpy(), a_np.T @ grad_s, rtol=1e-12)
