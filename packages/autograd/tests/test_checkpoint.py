"""torch.utils.checkpoint: the same gradients as without it (inputs and the parameters
inside), random ops replayed, PyTorch's warnings and errors; the region's activations
are not kept."""
import warnings

import pytest

import ember_autograd
import ember_tensor as et
from ember_autograd.checkpoint import checkpoint, checkpoint_sequential


def _region(x, w, scale=1.0):
    return (x @ w).tanh().mul(scale).exp()


def _with_and_without(use_reentrant, **kwargs):
    et.manual_seed(0)
    x = et.randn(4, 3, requires_grad=True)
    w = et.randn(3, 5, requires_grad=True)
    _region(x, w, **kwargs).sum().backward()
    expected = (x.grad.clone(), w.grad.clone())
    x.grad = w.grad = None
    out = checkpoint(_region, x, w, use_reentrant=use_reentrant, **kwargs)
    assert out.grad_fn is not None and out.requires_grad
    out.sum().backward()
    return expected, (x.grad, w.grad)


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_gradients_match_the_plain_run(use_reentrant):
    expected, got = _with_and_without(use_reentrant)
    for e, g in zip(expected, got):
        assert et.allclose(e, g)


def test_keyword_arguments_need_use_reentrant_false():
    expected, got = _with_and_without(False, scale=0.5)
    assert all(et.allclose(e, g) for e, g in zip(expected, got))
    with pytest.raises(ValueError, match="^Unexpected keyword arguments: scale$"):
        checkpoint(_region, et.ones(1, 3), et.ones(3, 1), use_reentrant=True, scale=0.5)


def test_the_parameters_inside_get_gradients_when_no_input_requires_grad():
    w = et.randn(3, 2, requires_grad=True)
    x = et.randn(4, 3)
    checkpoint(lambda x: (x @ w).square(), x, use_reentrant=False).sum().backward()
    assert et.allclose(w.grad, 2 * x.t() @ (x @ w))
    with pytest.warns(UserWarning, match="^None of the inputs have requires_grad=True. Gradients will be None$"):
        out = checkpoint(lambda x: x * 2, x, use_reentrant=True)
    assert not out.requires_grad


def test_random_ops_are_replayed_in_the_recomputation():
    x = et.ones(200, requires_grad=True)

    def dropout(x):
        return x * (et.rand(200) > 0.5)
    et.manual_seed(3)
    out = checkpoint(dropout, x, use_reentrant=False)
    after_forward = et.rand(1)
    out.sum().backward()
    assert et.equal(x.grad, out.detach())  # the recomputation drew the same mask
    et.manual_seed(3)
    dropout(x)
    assert et.equal(et.rand(1), after_forward)  # and the generator moved on as without it


def test_without_use_reentrant_it_warns_as_pytorch():
    x = et.ones(2, requires_grad=True)
    with pytest.warns(UserWarning, match="the use_reentrant parameter should be passed explicitly"):
        checkpoint(lambda x: x * 2, x).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_the_region_keeps_no_graph():
    x = et.ones(3, requires_grad=True)
    seen = []

    def region(x):
        y = x.exp()
        seen.append(y.grad_fn)
        return y.sum()
    checkpoint(region, x, use_reentrant=False).backward()
    assert seen[0] is None and seen[1] is not None  # first run recorded nothing; the recomputation did


def test_under_no_grad_it_just_runs():
    with ember_autograd.no_grad():
        out = checkpoint(lambda x: x + 1, et.ones(2, requires_grad=True), use_reentrant=False)
    assert out.grad_fn is None and out.tolist() == [2.0, 2.0]


def test_options_ember_does_not_have_are_refused():
    with pytest.raises(ValueError, match="only supported when use_reentrant=False"):
        checkpoint(lambda x: x, et.ones(1), use_reentrant=True, debug=True)
    with pytest.raises(NotImplementedError, match="context_fn, debug and determinism_check"):
        checkpoint(lambda x: x, et.ones(1), use_reentrant=False, debug=True)


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_checkpoint_sequential(use_reentrant):
    et.manual_seed(0)
    ws = [et.randn(4, 4, requires_grad=True) for _ in range(4)]
    layers = [lambda x, w=w: (x @ w).tanh() for w in ws]
    x = et.randn(2, 4, requires_grad=True)
    plain = x
    for layer in layers:
        plain = layer(plain)
    plain.sum().backward()
    expected = [w.grad.clone() for w in ws] + [x.grad.clone()]
    for t in (*ws, x):
        t.grad = None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        checkpoint_sequential(layers, 2, x, use_reentrant=use_reentrant).sum().backward()
    assert all(et.allclose(e, g) for e, g in zip(expected, [w.grad for w in ws] + [x.grad]))
    with pytest.raises(ValueError, match="^Unexpected keyword arguments: foo$"):
        checkpoint_sequential(layers, 2, x, use_reentrant=True, foo=1)
