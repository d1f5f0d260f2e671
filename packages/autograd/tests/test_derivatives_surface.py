"""``ember_autograd.derivatives``: the derivative table as the layers above see it (the
recorder's own entries, markers and un-broadcasting, not a copy)."""
import doctest

import ember_autograd
import ember_tensor as torch
from ember_autograd import derivatives
from ember_tensor import dispatch


def test_entries_are_the_recorders():
    mul = derivatives.entry_for(dispatch.get_operator("mul"))
    assert isinstance(mul, derivatives.Rule) and mul.node_name == "MulBackward0"
    x = torch.ones(2, requires_grad=True)
    assert type((x * x).grad_fn)._rule is mul  # the node eager autograd records uses this very rule
    assert derivatives.entry_for(dispatch.get_operator("argmax")) is derivatives.NOT_DIFFERENTIABLE
    assert derivatives.entry_for(dispatch.get_operator("flatten")) is derivatives.COMPOSITE  # the table says so


def test_rules_save_and_apply_outside_the_engine():
    exp = derivatives.entry_for(dispatch.get_operator("exp"))
    x = torch.tensor([0.0, 1.0])
    (marker,) = exp.save(x)
    assert derivatives.is_result(marker) and derivatives.result_index(marker) is None

    class Ctx:
        needs_input_grad = (True,)
    grad = exp.backward(Ctx(), torch.ones(2), torch.exp(x))
    assert torch.equal(grad, torch.exp(x))


def test_fit_gradient_unbroadcasts_and_casts_as_the_engine():
    grad = torch.ones(3, 2, dtype=torch.float64)
    fitted = derivatives.fit_gradient(grad, (2,), torch.float32)
    assert fitted.dtype == torch.float32 and fitted.tolist() == [3.0, 3.0]
    b = torch.zeros(2, requires_grad=True)
    (eager,) = ember_autograd.grad((torch.ones(3, 2) + b).sum(), b)
    assert torch.equal(derivatives.fit_gradient(torch.ones(3, 2), (2,), torch.float32), eager)


def test_doctests():
    assert doctest.testmod(derivatives).failed == 0
