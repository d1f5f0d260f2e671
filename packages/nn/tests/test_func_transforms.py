"""torch.func's transforms (grad, vjp, jvp, jacrev, jacfwd, hessian, vmap) against PyTorch:
each case is one function written over a namespace, run in ember and in PyTorch on the same
float64 data (skipped without torch), plus the requires_grad rules of composition."""
import functools

import numpy as np
import pytest

import ember_autograd
import ember_nn
import ember_nn.func as efunc
import ember_tensor as et
from ember_nn.func._pytree import tree_flatten

torch = pytest.importorskip("torch")
import torch.func as tfunc  # noqa: E402

rng = np.random.default_rng(0)
X = rng.standard_normal((3, 4))
W = rng.standard_normal((4, 2))
V = rng.standard_normal(4)


def as_numpy(tree):
    leaves, _ = tree_flatten(tree)
    return [np.asarray(leaf.detach().numpy() if hasattr(leaf, "detach") else leaf) for leaf in leaves]


def both(run):
    """``run(T, func)`` with (ember_tensor, ember_nn.func) and (torch, torch.func), compared leaf by leaf."""
    ours, theirs = run(et, efunc), run(torch, tfunc)
    a, b = as_numpy(ours), as_numpy(theirs)
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert x.shape == y.shape
        np.testing.assert_allclose(x, y, rtol=1e-10, atol=1e-12)


def mlp(T, w, x):
    return (T.tanh(x @ w) ** 2).sum()


CASES = {
    "grad": lambda T, f: f.grad(lambda x: (T.sin(x) * x).sum())(T.tensor(X)),
    "grad argnums tuple": lambda T, f: f.grad(functools.partial(mlp, T), argnums=(0, 1))(T.tensor(W), T.tensor(X)),
    "grad negative argnum": lambda T, f: f.grad(functools.partial(mlp, T), argnums=-1)(T.tensor(W), T.tensor(X)),
    "grad dict input": lambda T, f: f.grad(lambda p: (p["a"] * p["b"]).sum())({"a": T.tensor(V), "b": T.tensor(V) ** 2}),
    "grad has_aux": lambda T, f: f.grad(lambda x: ((x ** 3).sum(), x.mean()), has_aux=True)(T.tensor(V)),
    "grad_and_value": lambda T, f: f.grad_and_value(lambda x: T.exp(x).sum())(T.tensor(V)),
    "grad of grad": lambda T, f: f.grad(f.grad(lambda x: T.sin(x) * x ** 2))(T.tensor(0.7, dtype=T.float64)),
    "grad independent": lambda T, f: f.grad(lambda x, y: (y ** 2).sum())(T.tensor(V), T.tensor(V)),
    "vjp": lambda T, f: f.vjp(lambda x, w: T.tanh(x @ w), T.tensor(X), T.tensor(W))[1](T.ones(3, 2, dtype=T.float64)),
    "vjp pytree out": lambda T, f: f.vjp(lambda x: (x * 2, {"s": x.sum()}), T.tensor(V))[1](
        (T.tensor(V), {"s": T.tensor(3.0, dtype=T.float64)})),
    "jvp": lambda T, f: f.jvp(lambda x, w: T.tanh(x @ w), (T.tensor(X), T.tensor(W)), (T.tensor(X) * 0 + 1, T.tensor(W))),
    "jvp has_aux": lambda T, f: f.jvp(lambda x: (x.exp(), x.sum()), (T.tensor(V),), (T.tensor(V),), has_aux=True),
    "jacrev": lambda T, f: f.jacrev(lambda x, w: T.tanh(x @ w))(T.tensor(X), T.tensor(W)),
    "jacrev argnums tuple": lambda T, f: f.jacrev(lambda x, w: T.tanh(x @ w), argnums=(0, 1))(T.tensor(X), T.tensor(W)),
    "jacrev pytrees": lambda T, f: f.jacrev(lambda p: {"y": p["a"] * p["b"].sum(), "z": p["a"].sum()})(
        {"a": T.tensor(V), "b": T.tensor(W)}),
    "jacfwd": lambda T, f: f.jacfwd(lambda x: T.sin(x) * x.sum())(T.tensor(V)),
    "jacrev of jacrev": lambda T, f: f.jacrev(f.jacrev(lambda x: T.sin(x) * x.sum()))(T.tensor(V)),
    "hessian": lambda T, f: f.hessian(lambda x: (T.sin(x) * x.sum()).sum())(T.tensor(V)),
    "hessian argnums": lambda T, f: f.hessian(functools.partial(mlp, T), argnums=0)(T.tensor(W), T.tensor(X)),
    "vmap": lambda T, f: f.vmap(T.dot)(T.tensor(X), T.tensor(X)),
    "vmap in_dims None": lambda T, f: f.vmap(lambda x, w: x @ w, in_dims=(0, None))(T.tensor(X), T.tensor(W)),
    "vmap in_dims 1 out_dims 1": lambda T, f: f.vmap(lambda c: c * c.sum(), in_dims=1, out_dims=1)(T.tensor(X)),
    "vmap negative in_dim": lambda T, f: f.vmap(lambda c: c.cumsum(0), in_dims=-1)(T.tensor(X)),
    "vmap nested": lambda T, f: f.vmap(f.vmap(lambda a, b: a * b, in_dims=(0, None)), in_dims=(None, 0))(
        T.tensor(V), T.tensor(X[:, 0])),
    "vmap dict in_dims": lambda T, f: f.vmap(lambda d: d["a"] @ d["w"], in_dims=({"a": 0, "w": None},))(
        {"a": T.tensor(X), "w": T.tensor(W)}),
    "vmap tuple out_dims": lambda T, f: f.vmap(lambda x: (x, x.sum()), out_dims=(1, 0))(T.tensor(X)),
    "vmap out_dims None": lambda T, f: f.vmap(lambda x, w: (x * 2, w), in_dims=(0, None), out_dims=(0, None))(
        T.tensor(X), T.tensor(W)),
    "vmap kwargs passed whole": lambda T, f: f.vmap(lambda x, scale: x * scale)(T.tensor(X), scale=T.tensor(V)),
    "vmap empty batch": lambda T, f: f.vmap(lambda x: x.sum(0, keepdim=True))(T.zeros(0, 3, dtype=T.float64)),
    "vmap of grad": lambda T, f: f.vmap(f.grad(functools.partial(mlp, T)), in_dims=(None, 0))(T.tensor(W), T.tensor(X)),
    "vmap of jacrev": lambda T, f: f.vmap(f.jacrev(lambda w, x: T.tanh(x @ w)), in_dims=(None, 0))(
        T.tensor(W), T.tensor(X)),
    "grad of vmap": lambda T, f: f.grad(lambda w: f.vmap(lambda x: T.tanh(x @ w).sum())(T.tensor(X)).sum())(
        T.tensor(W)),
    "vmap of jvp": lambda T, f: f.vmap(lambda x: f.jvp(T.sin, (x,), (T.ones_like(x),))[1])(T.tensor(X)),
    "linearize": lambda T, f: f.linearize(T.sin, T.tensor(V))[1](T.tensor(V) * 2),
}


@pytest.mark.parametrize("name", list(CASES))
def test_against_pytorch(name):
    both(CASES[name])


def per_sample_grads(T, func, nn):
    """The per-sample-gradients tutorial, only the import differing: vmap(grad(loss))."""
    T.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3)).double()
    params = {k: v.detach() for k, v in model.named_parameters()}
    buffers = {k: v.detach() for k, v in model.named_buffers()}
    data, targets = T.tensor(X), T.tensor([0, 2, 1])

    def loss(params, buffers, sample, target):
        prediction = func.functional_call(model, (params, buffers), (sample.unsqueeze(0),))
        return nn.functional.cross_entropy(prediction, target.unsqueeze(0))

    grads = func.vmap(func.grad(loss), in_dims=(None, None, 0, 0))(params, buffers, data, targets)
    # The loop it replaces: one backward pass per sample.
    looped = {k: [] for k in params}
    for i in range(len(data)):
        model.zero_grad()
        nn.functional.cross_entropy(model(data[i:i + 1]), targets[i:i + 1]).backward()
        for k, p in model.named_parameters():
            looped[k].append(p.grad.clone())
    return grads, {k: T.stack(v) for k, v in looped.items()}


def test_per_sample_gradients_equal_a_loop_of_backward_passes_and_pytorch():
    ours, looped = per_sample_grads(et, efunc, ember_nn)
    for k in ours:
        assert ours[k].grad_fn is None and not ours[k].requires_grad
        np.testing.assert_allclose(ours[k].numpy(), looped[k].numpy(), rtol=1e-10, atol=1e-12)
    # The same program under PyTorch (its own initial weights) agrees with its own loop.
    theirs, their_loop = per_sample_grads(torch, tfunc, torch.nn)
    for k in ours:
        assert ours[k].shape == theirs[k].shape
        np.testing.assert_allclose(theirs[k].numpy(), their_loop[k].numpy(), rtol=1e-10, atol=1e-12)


def test_model_ensembling_with_stack_module_state():
    models = [ember_nn.Linear(4, 2).double() for _ in range(3)]
    params, buffers = efunc.stack_module_state(models)
    assert params["weight"].shape == (3, 2, 4) and params["weight"].is_leaf and params["weight"].requires_grad
    out = efunc.vmap(lambda p, b, x: efunc.functional_call(models[0], (p, b), (x,)), in_dims=(0, 0, None))(
        params, buffers, et.tensor(X))
    expected = et.stack([m(et.tensor(X)) for m in models])
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=1e-12)
    out.sum().backward()  # the stacked parameters are optimizable leaves
    assert params["weight"].grad.shape == (3, 2, 4)


def test_stack_module_state_errors():
    with pytest.raises(RuntimeError, match="Expected at least one model, got 0"):
        efunc.stack_module_state([])
    with pytest.raises(RuntimeError, match="same class"):
        efunc.stack_module_state([ember_nn.Linear(2, 2), ember_nn.Conv1d(2, 2, 1)])
    frozen = ember_nn.Linear(2, 2)
    frozen.weight.requires_grad_(False)
    with pytest.raises(RuntimeError, match="Expected weight from each model to have the same .requires_grad"):
        efunc.stack_module_state([ember_nn.Linear(2, 2), frozen])


def test_functional_call_dicts():
    layer = ember_nn.Linear(2, 1, bias=False)
    with pytest.raises(ValueError, match="appeared in multiple dictionaries"):
        efunc.functional_call(layer, ({"weight": et.ones(1, 2)}, {"weight": et.ones(1, 2)}), (et.ones(1, 2),))
    with pytest.raises(ValueError, match="Expected parameter_and_buffer_dicts to be a dict"):
        efunc.functional_call(layer, 3, (et.ones(1, 2),))


# -- requires_grad: results are tracked exactly where an outer level differentiates them --

def test_results_of_plain_inputs_have_no_history():
    g = efunc.grad(lambda x: (x ** 3).sum())(et.tensor(V))
    assert not g.requires_grad
    j = efunc.jacrev(lambda x: x ** 3)(et.tensor(V))
    assert not j.requires_grad


def test_results_stay_differentiable_for_the_outer_autograd():
    x = et.tensor(V, requires_grad=True)
    g = efunc.grad(lambda y: (y ** 3).sum())(x)  # 3 x^2
    assert g.requires_grad
    (gx,) = ember_autograd.grad(g.sum(), x)
    np.testing.assert_allclose(gx.numpy(), 6 * V)
    # A parameter held by a closure is tracked too (PyTorch: a grad_fn at the outer level).
    w = et.tensor(V, requires_grad=True)
    g = efunc.grad(lambda y: (y * w).sum())(et.tensor(V))
    assert g.requires_grad
    with ember_autograd.no_grad():
        assert not efunc.grad(lambda y: (y ** 3).sum())(x).requires_grad


def test_grad_ignores_outer_no_grad():
    with ember_autograd.no_grad():
        g = efunc.grad(lambda y: (y ** 2).sum())(et.tensor(V))
    np.testing.assert_allclose(g.numpy(), 2 * V)


def test_grad_through_vmap_by_the_outer_autograd():
    x = et.tensor(X, requires_grad=True)
    efunc.vmap(lambda row: (row ** 2).sum())(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * X)


# -- errors --

VMAP_ERRORS = [
    (lambda: efunc.vmap(lambda x, y: x)(et.ones(3, 2), et.ones(2)), ValueError,
     r"Expected all tensors to have the same size in the mapped dimension, got sizes \[3, 2\]"),
    (lambda: efunc.vmap(lambda x, y: x, in_dims=(0,))(et.ones(3), et.ones(3)), ValueError,
     r"in_dims is not compatible with the structure of `inputs`"),
    (lambda: efunc.vmap(lambda x: x, in_dims=[0])(et.ones(3)), ValueError, r"expected `in_dims` to be int or a"),
    (lambda: efunc.vmap(lambda x: x, in_dims=(0.5,))(et.ones(3)), ValueError, r"in_dim must be either an integer"),
    (lambda: efunc.vmap(lambda x: x, in_dims=(None,))(et.ones(3)), ValueError, r"Expected at least one Tensor"),
    (lambda: efunc.vmap(lambda x: x, in_dims=(3,))(et.ones(2, 3)), ValueError, r"expected in_dim to satisfy -2 <= in_dim < 2"),
    (lambda: efunc.vmap(lambda x: x)(3.0), ValueError, r"We cannot vmap over non-Tensor arguments"),
    (lambda: efunc.vmap(lambda x: x)(), ValueError, r"got no inputs"),
    (lambda: efunc.vmap(lambda x: 1)(et.ones(3)), ValueError, r"must only return Tensors, got type <class 'int'>"),
    (lambda: efunc.vmap(lambda x: x * 2, out_dims=None)(et.arange(3.0)), ValueError, r"can not return a BatchedTensor"),
    (lambda: efunc.vmap(lambda x: (x, x), out_dims=(0, 1, 2))(et.ones(3)), ValueError, r"out_dims is not compatible"),
    (lambda: efunc.vmap(lambda x: x, out_dims=1.0)(et.ones(3)), ValueError, r"`out_dims` must be an int, None"),
    (lambda: efunc.vmap(lambda x: x, randomness="x"), RuntimeError, r"Only allowed values for randomness"),
    (lambda: efunc.vmap(lambda x: x, chunk_size=0), ValueError, r"chunk_size should be None or greater than 0"),
    (lambda: efunc.vmap(lambda x: x + et.rand(2))(et.ones(3, 2)), RuntimeError, r"randomness error mode"),
]


@pytest.mark.parametrize("case", range(len(VMAP_ERRORS)))
def test_vmap_errors(case):
    call, error, message = VMAP_ERRORS[case]
    with pytest.raises(error, match=message):
        call()


def test_vmap_errors_match_pytorch_word_for_word():
    pairs = [
        (lambda T, f: f.vmap(lambda x, y: x, in_dims=(0,))(T.ones(3, 2), T.ones(2))),
        (lambda T, f: f.vmap(lambda d: d["a"], in_dims=({"a": 0, "c": None},))({"a": T.ones(3), "b": T.ones(2)})),
        (lambda T, f: f.vmap(lambda x: (x, x), out_dims=(0, 1, 2))(T.ones(3, 2))),
        (lambda T, f: f.vmap(lambda a: a, in_dims=0)(T.tensor(1.))),
    ]
    for run in pairs:
        messages = []
        for T, f in ((et, efunc), (torch, tfunc)):
            with pytest.raises(ValueError) as caught:
                run(T, f)
            messages.append(str(caught.value))
        assert messages[0] == messages[1]


def test_vmap_randomness_modes():
    same = efunc.vmap(lambda x: x + et.rand(2), randomness="same")(et.zeros(3, 2))
    assert et.equal(same[0], same[1]) and et.equal(same[1], same[2])
    different = efunc.vmap(lambda x: x + et.rand(2), randomness="different")(et.zeros(3, 2))
    assert not et.equal(different[0], different[1])


TRANSFORM_ERRORS = [
    (lambda: efunc.grad(lambda x: x * 2)(et.ones(3)), "Expected f\\(\\*args\\) to return a scalar Tensor"),
    (lambda: efunc.grad(lambda x: x.sum(), argnums=1)(et.ones(3)), "Got argnum=1, but only 1 positional inputs"),
    (lambda: efunc.grad(lambda x: x.sum(), argnums=[0])(et.ones(3)), "argnums must be int or Tuple"),
    (lambda: efunc.grad(lambda x: x.sum(), has_aux=True)(et.ones(3)), "should be a tuple: \\(output, aux\\)"),
    (lambda: efunc.vjp(lambda y: (y * y, y), et.ones(3))[1](et.ones(3)), "cotangents: \\*, primal output: \\(\\*, \\*\\)"),
    (lambda: efunc.jvp(lambda y: y, [et.ones(3)], [et.ones(3)]), "Expected primals to be a tuple"),
    (lambda: efunc.jvp(lambda y: y * 2, (et.ones(3),), (et.ones(2),)), "Tensor is of size \\[3\\] while the given"),
    (lambda: efunc.jvp(lambda y: et.ones(2), (et.ones(3),), (et.ones(3),), strict=True), "independent of the inputs"),
    (lambda: efunc.jacfwd(lambda y: y * et.rand(3))(et.ones(3)), "randomness error mode"),
]


@pytest.mark.parametrize("case", range(len(TRANSFORM_ERRORS)))
def test_transform_errors(case):
    call, message = TRANSFORM_ERRORS[case]
    with pytest.raises(RuntimeError, match=message):
        call()

