"""autograd.Function as users write it: needs_input_grad, mark_non_differentiable,
mark_dirty, set_materialize_grads, once_differentiable, setup_context, saved-tensor checks.
Expected values are PyTorch's."""
import pytest

import ember_autograd as autograd
import ember_tensor as E
from ember_autograd import Function, once_differentiable


def leaf(values, dtype=E.float64):
    return E.tensor(values, dtype=dtype, requires_grad=True)


# -- Function ---------------------------------------------------------------------------------------

class ScaleAndIndex(Function):
    @staticmethod
    def forward(ctx, x, factor):
        ctx.factor = factor
        out = x * factor
        index = x.argmax()
        ctx.mark_non_differentiable(index)
        return out, index

    @staticmethod
    def backward(ctx, grad_out, grad_index):
        assert ctx.needs_input_grad == (True, False)
        return grad_out * ctx.factor, None


def test_function_with_a_non_differentiable_output():
    x = leaf([1.0, 5.0])
    out, index = ScaleAndIndex.apply(x, 4.0)
    assert out.grad_fn.name() == "ScaleAndIndexBackward" and not index.requires_grad
    out.sum().backward()
    assert x.grad.tolist() == [4.0, 4.0]


class AddOneInPlace(Function):
    @staticmethod
    def forward(ctx, x):
        x.add_(1)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad


def test_function_mark_dirty():
    x = leaf([1.0, 2.0])
    y = x * 1
    z = AddOneInPlace.apply(y)
    assert z is y and y.grad_fn.name() == "AddOneInPlaceBackward"
    (z * z).sum().backward()
    assert x.grad.tolist() == [4.0, 6.0]


class MaterializeCheck(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        return x * 1, x * 2

    @staticmethod
    def backward(ctx, g1, g2):
        assert g2 is None
        return g1


def test_function_set_materialize_grads_false_passes_none():
    x = leaf([1.0])
    a, _ = MaterializeCheck.apply(x)
    a.sum().backward()
    assert x.grad.tolist() == [1.0]


class Cube(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 3 * x ** 2


def test_once_differentiable_refuses_double_backward():
    x = leaf([2.0])
    (g,) = autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
    assert g.tolist() == [12.0] and not g.requires_grad  # as in PyTorch: x is not differentiated again
    v = leaf([1.0])
    (g,) = autograd.grad(Cube.apply(x), x, v, create_graph=True)
    assert g.requires_grad  # through v
    with pytest.raises(RuntimeError, match="trying to differentiate twice a function that was marked with "
                                           "@once_differentiable"):
        g.sum().backward()


def test_function_returning_too_many_gradients():
    class Bad(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, grad):
            return grad, grad

    with pytest.raises(RuntimeError, match="returned an incorrect number of gradients"):
        Bad.apply(leaf([1.0])).sum().backward()


class SquareWithSetupContext(Function):
    """PyTorch 2's style: forward without ctx, then setup_context."""

    @staticmethod
    def forward(x, scale):
        return x * x * scale

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, scale = inputs
        ctx.save_for_backward(x)
        ctx.scale = scale

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 2 * x * ctx.scale, None


def test_function_with_setup_context_and_double_backward():
    x = leaf([1.0, 3.0])
    y = SquareWithSetupContext.apply(x, 0.5)
    assert y.tolist() == [0.5, 4.5]
    (g,) = autograd.grad(y.sum(), x, create_graph=True)
    assert g.tolist() == [1.0, 3.0]
    g.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]
    assert autograd.gradcheck(lambda t: SquareWithSetupContext.apply(t, 0.5), (x,))


def test_saved_tensor_of_a_function_modified_in_place_is_reported():
    x = leaf([1.0, 2.0])
    y = x * 1
    z = SquareWithSetupContext.apply(y, 1.0)
    y.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()
