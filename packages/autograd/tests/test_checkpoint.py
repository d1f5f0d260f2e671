"""torch.utils.checkpoint: the same gradients as without it (inputs and the parameters
inside), random ops replayed, PyTorch's warnings and errors; the region's activations
are not kept."""
import warnings

import pytest

import ember_autograd
import ember_tensor as et
from ember_autograd._graph import SavedTensor
from ember_autograd.checkpoint import CheckpointError, checkpoint, checkpoint_sequential


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


def test_the_reentrant_region_keeps_no_graph():
    x = et.ones(3, requires_grad=True)
    seen = []

    def region(x):
        y = x.exp()
        seen.append(y.grad_fn)
        return y.sum()
    checkpoint(region, x, use_reentrant=True).backward()
    assert seen[0] is None and seen[1] is not None  # first run recorded nothing; the recomputation did


def test_the_non_reentrant_region_keeps_no_saved_tensor():
    """The region's graph is recorded, but what its ops save is a position, not a tensor:
    the activations are freed, and the recomputation stops once it has them all."""
    x = et.ones(3, requires_grad=True)
    runs = []

    def region(x):
        runs.append(1)
        y = x.exp()
        return (y * y).sum()
    out = checkpoint(region, x, use_reentrant=False)
    node = out.grad_fn
    saved = []
    while node is not None:
        saved += [s for s in node._saved or () if isinstance(s, SavedTensor)]
        node = node.next_functions[0][0] if node.next_functions else None
    assert len(saved) == 3  # y twice by mul, exp's result by exp
    assert all(type(s.packed) is int and s.tensor is None and s.fields is None for s in saved)
    out.backward()
    assert len(runs) == 2
    et.testing.assert_close(x.grad, 2 * et.exp(et.ones(3)) ** 2)


def test_under_no_grad_it_just_runs():
    with ember_autograd.no_grad():
        out = checkpoint(lambda x: x + 1, et.ones(2, requires_grad=True), use_reentrant=False)
    assert out.grad_fn is None and out.tolist() == [2.0, 2.0]


def test_reentrant_refuses_the_non_reentrant_options():
    with pytest.raises(ValueError, match="only supported when use_reentrant=False"):
        checkpoint(lambda x: x, et.ones(1), use_reentrant=True, debug=True)
    with pytest.raises(ValueError, match="determinism_check should be one of"):
        checkpoint(lambda x: x, et.ones(1), use_reentrant=False, determinism_check="strict")


def test_autograd_grad_reaches_the_parameters_inside():
    """Non-reentrant: gradients flow through the ordinary graph, so autograd.grad and
    backward(inputs=) can ask for the weights used inside (the reentrant variant cannot)."""
    et.manual_seed(3)
    x = et.randn(4, 3, requires_grad=True)
    w = et.randn(3, 5, requires_grad=True)
    expected = ember_autograd.grad(_region(x, w).sum(), (x, w))
    got = ember_autograd.grad(checkpoint(_region, x, w, use_reentrant=False).sum(), (x, w))
    for a, b in zip(got, expected):
        et.testing.assert_close(a, b)
    checkpoint(_region, x, w, use_reentrant=False).sum().backward(inputs=[w])
    assert x.grad is None
    et.testing.assert_close(w.grad, expected[1])


def test_context_fn_wraps_forward_and_recomputation():
    log = []

    class Mark:
        def __init__(self, name):
            self.name = name

        def __enter__(self):
            log.append(self.name)

        def __exit__(self, *exc):
            return False
    x = et.ones(2, requires_grad=True)
    out = checkpoint(lambda t: t.sin().sum(), x, use_reentrant=False,
                     context_fn=lambda: (Mark("forward"), Mark("recompute")))
    assert log == ["forward"]
    out.backward()
    assert log == ["forward", "recompute"]


def _changing_region():
    calls = []

    def region(a):
        calls.append(1)
        return (a * 2).sin() if len(calls) != 2 else (a[:1] * 2).sin()
    return region


def test_determinism_check_compares_what_the_recomputation_saved():
    x = et.ones(2, requires_grad=True)
    with pytest.raises(CheckpointError, match="different metadata than during the forward pass"):
        checkpoint(_changing_region(), x, use_reentrant=False).sum().backward()
    assert issubclass(CheckpointError, RuntimeError)

    def fewer(calls=[]):
        def region(a):
            calls.append(1)
            return (a * 2).sin() if len(calls) != 2 else (a * 2)
        return region
    with pytest.raises(CheckpointError, match="A different number of tensors was saved"):
        checkpoint(fewer(), x, use_reentrant=False).sum().backward()
    # determinism_check="none" skips the metadata comparison (the count must still match)
    checkpoint(_changing_region(), x, use_reentrant=False, determinism_check="none").sum().backward()


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
