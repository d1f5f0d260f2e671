"""Every optimizer against its published update rule (NumPy, float64) over several steps,
on a matrix, a non-contiguous view and a 0-d parameter; fused kernels against the plain-op
form; PyTorch as an optional oracle."""
import numpy as np
import pytest

import ember_tensor as et
import ember_optim as optim

import _numpy_rules as rules

STEPS = 6
SHAPES = [(3, 4), (5,), ()]

# (optimizer, its kwargs, the NumPy rule, the rule's kwargs where they differ)
CASES = [
    ("SGD", dict(lr=0.1), rules.sgd),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.1, weight_decay=0.01), rules.sgd),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, maximize=True), rules.sgd),
    ("Adam", dict(lr=0.01), rules.adam),
    ("Adam", dict(lr=0.01, amsgrad=True, weight_decay=0.1, maximize=True), rules.adam),
    ("Adam", dict(lr=0.01, betas=(0.3, 0.9)), rules.adam),  # lerp weight 0.7: the other formula
    ("AdamW", dict(lr=0.01), rules.adamw),
    ("AdamW", dict(lr=0.01, amsgrad=True, weight_decay=0.05), rules.adamw),
    ("Adamax", dict(lr=0.01, weight_decay=0.1), rules.adamax),
    ("NAdam", dict(lr=0.01, weight_decay=0.1), rules.nadam),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True), rules.nadam),
    ("RAdam", dict(lr=0.01), rules.radam),
    ("RAdam", dict(lr=0.01, betas=(0.9, 0.5), weight_decay=0.1, decoupled_weight_decay=True), rules.radam),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, weight_decay=0.1, initial_accumulator_value=0.1), rules.adagrad),
    ("Adadelta", dict(lr=1.0, weight_decay=0.1), rules.adadelta),
    ("RMSprop", dict(lr=0.01), rules.rmsprop),
    ("RMSprop", dict(lr=0.01, centered=True, momentum=0.9, weight_decay=0.1), rules.rmsprop),
    ("Rprop", dict(lr=0.01), rules.rprop),
    ("ASGD", dict(lr=0.01, t0=2, weight_decay=0.1), rules.asgd),
]
IDS = [f"{name}-{'-'.join(kw)}" for name, kw, _ in CASES]


def _problem(seed=0):
    rng = np.random.default_rng(seed)
    init = [rng.standard_normal(s) for s in SHAPES]
    # Gradients of both signs and a repeated step, so sign-based rules see flips and keeps.
    grads = [[rng.standard_normal(s) for s in SHAPES] for _ in range(STEPS - 1)]
    grads.append(grads[-1])
    return init, grads


def _ember_params(init, non_contiguous):
    params = []
    for a in init:
        if non_contiguous and a.ndim == 2:
            # A transposed leaf: its memory is not in row-major order.
            p = et.tensor(np.ascontiguousarray(a.T)).t().requires_grad_()
            assert not p.is_contiguous()
        else:
            p = et.tensor(a, requires_grad=True)
        params.append(p)
    return params


def _run_ember(name, kwargs, init, grads, non_contiguous=False):
    params = _ember_params(init, non_contiguous)
    opt = getattr(optim, name)(params, **kwargs)
    for step_grads in grads:
        for p, g in zip(params, step_grads):
            p.grad = et.tensor(g).t().contiguous().t() if (non_contiguous and g.ndim == 2) else et.tensor(g)
        opt.step()
    return [np.array(p.detach().numpy()) for p in params], opt


@pytest.mark.parametrize("name, kwargs, rule", CASES, ids=IDS)
@pytest.mark.parametrize("non_contiguous", [False, True], ids=["contiguous", "transposed"])
def test_matches_numpy_rule(name, kwargs, rule, non_contiguous):
    init, grads = _problem()
    got, _ = _run_ember(name, kwargs, init, grads, non_contiguous)
    for p0, result in zip(init, got):
        p, state = p0.copy(), {}
        for t, step_grads in enumerate(grads, 1):
            g = step_grads[[a.shape for a in init].index(p0.shape)]
            p = rule(p, g, state, t, **kwargs)
        assert result.shape == p0.shape
        np.testing.assert_allclose(result, p, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name, kwargs, rule", [c for c in CASES if c[0] in ("SGD", "Adam", "AdamW")],
                         ids=[i for i, c in zip(IDS, CASES) if c[0] in ("SGD", "Adam", "AdamW")])
@pytest.mark.parametrize("dtype", [et.float32, et.float64])
def test_fused_kernel_equals_plain_ops(name, kwargs, rule, dtype):
    # ember-tensor's own tests run the kernels' parallel variants (test_fused_optim.py).
    rng = np.random.default_rng(1)
    shapes = [(20, 20), (7,), ()]
    init = [rng.standard_normal(s) for s in shapes]
    results = {}
    for fused in (True, False):
        params = [et.tensor(a, dtype=dtype, requires_grad=True) for a in init]
        opt = getattr(optim, name)(params, fused=fused, **kwargs)
        for step in range(4):
            for p in params:
                p.grad = et.tensor(rng.standard_normal(p.shape) if step < 3 else np.ones(p.shape), dtype=dtype)
            opt.step()
        results[fused] = [np.array(p.detach().numpy()) for p in params]
        rng = np.random.default_rng(1)
        [rng.standard_normal(s) for s in shapes]
    tol = dict(rtol=1e-5, atol=1e-6) if dtype is et.float32 else dict(rtol=1e-12, atol=1e-14)
    for a, b in zip(results[True], results[False]):
        np.testing.assert_allclose(a, b, **tol)


def test_fused_true_refuses_tensors_it_cannot_update():
    p = et.zeros(3, dtype=et.int64)  # float16/bfloat16 are fused (in float32), as in PyTorch
    p.grad = et.ones(3, dtype=et.int64)
    with pytest.raises(RuntimeError, match="`fused=True` requires all the params to be floating point"):
        optim.Adam([p], fused=True).step()


@pytest.mark.parametrize("name, kwargs, rule", CASES, ids=IDS)
def test_matches_pytorch(name, kwargs, rule):
    torch = pytest.importorskip("torch")
    init, grads = _problem(seed=3)
    got, _ = _run_ember(name, kwargs, init, grads)
    params = [torch.tensor(a, requires_grad=True) for a in init]
    opt = getattr(torch.optim, name)(params, **kwargs)
    for step_grads in grads:
        for p, g in zip(params, step_grads):
            p.grad = torch.tensor(g)
        opt.step()
    for p, result in zip(params, got):
        np.testing.assert_allclose(result, p.detach().numpy(), rtol=1e-12, atol=1e-14)


def test_parameters_without_grad_are_left_alone():
    a = et.ones(2, requires_grad=True)
    b = et.ones(2, requires_grad=True)
    opt = optim.Adam([a, b], lr=0.1)
    a.grad = et.ones(2)
    opt.step()
    assert b.tolist() == [1.0, 1.0] and b not in opt.state
    assert a.tolist() != [1.0, 1.0]


def test_seed_snippet_adam_on_linear_model_with_backward():
    # The slides' loop: optimizer = torch.optim.Adam([W, b]) over (data, targets).
    et.manual_seed(0)
    data = et.randn(64, 5)
    true_w = et.tensor([[1.0], [-2.0], [0.5], [3.0], [0.0]])
    targets = data @ true_w + 0.7
    W = et.randn(5, 1, requires_grad=True)
    b = et.randn(1, requires_grad=True)
    optimizer = optim.Adam([W, b], lr=0.05)

    def model(x, W, b):
        return et.matmul(x, W) + b

    first = None
    for _ in range(150):
        optimizer.zero_grad()
        loss = ((model(data, W, b) - targets) ** 2).mean()
        loss.backward()
        optimizer.step()
        first = first if first is not None else loss.item()
    assert loss.item() < first * 0.05
