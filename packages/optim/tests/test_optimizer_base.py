"""The Optimizer contract: parameter groups, validation messages, zero_grad, hooks and
state_dict round trips (continuing training identically after a reload)."""
import copy
import pickle

import numpy as np
import pytest

import ember_tensor as et
import ember_optim as optim


def _param(*values):
    return et.tensor(list(values) or [1.0, 2.0], requires_grad=True)


@pytest.mark.parametrize("build, error, message", [
    (lambda: optim.SGD(_param(), lr=0.1), TypeError,
     "params argument given to the optimizer should be an iterable of Tensors or dicts, but got torch.FloatTensor"),
    (lambda: optim.SGD([], lr=0.1), ValueError, "optimizer got an empty parameter list"),
    (lambda: optim.SGD([{"params": {_param()}}], lr=0.1), TypeError, "ordering of tensors in sets will change"),
    (lambda: optim.SGD([1.0], lr=0.1), TypeError, "optimizer can only optimize Tensors, but one of the params is float"),
    (lambda: optim.SGD([_param() * 2], lr=0.1), ValueError, "can't optimize a non-leaf Tensor"),
    (lambda: optim.SGD([_param()], lr=-1), ValueError, "Invalid learning rate: -1"),
    (lambda: optim.SGD([_param()], momentum=-0.5), ValueError, "Invalid momentum value: -0.5"),
    (lambda: optim.SGD([_param()], weight_decay=-1e-3), ValueError, "Invalid weight_decay value: -0.001"),
    (lambda: optim.SGD([_param()], nesterov=True), ValueError, "Nesterov momentum requires a momentum and zero dampening"),
    (lambda: optim.Adam([_param()], eps=-1.0), ValueError, "Invalid epsilon value: -1.0"),
    (lambda: optim.Adam([_param()], betas=(1.0, 0.9)), ValueError, "Invalid beta parameter at index 0: 1.0"),
    (lambda: optim.AdamW([_param()], betas=(0.9, -0.1)), ValueError, "Invalid beta parameter at index 1: -0.1"),
    (lambda: optim.Adadelta([_param()], rho=1.5), ValueError, "Invalid rho value: 1.5"),
    (lambda: optim.Rprop([_param()], etas=(1.5, 1.2)), ValueError, "Invalid eta values: 1.5, 1.2"),
    (lambda: optim.RMSprop([_param()], alpha=-0.1), ValueError, "Invalid alpha value: -0.1"),
    (lambda: optim.LBFGS([{"params": [_param()]}, {"params": [_param()]}]), ValueError,
     "LBFGS doesn't support per-parameter options (parameter groups)"),
])
def test_bad_arguments_raise_pytorch_errors(build, error, message):
    with pytest.raises(error) as info:
        build()
    assert message in str(info.value)


def test_param_groups_take_defaults_and_overrides():
    a, b = _param(), _param()
    opt = optim.SGD([{"params": [a]}, {"params": b, "lr": 0.5}], lr=0.1, momentum=0.9)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.5]
    assert opt.param_groups[1]["params"] == [b] and opt.param_groups[1]["momentum"] == 0.9
    assert opt.defaults["lr"] == 0.1


def test_add_param_group_rejects_a_parameter_already_optimized():
    a = _param()
    opt = optim.Adam([a])
    with pytest.raises(ValueError, match="some parameters appear in more than one parameter group"):
        opt.add_param_group({"params": [a]})
    with pytest.warns(UserWarning, match="duplicate parameters"):
        optim.Adam([_param()] * 2)
    c = _param()
    opt.add_param_group({"params": [c], "lr": 0.5})
    assert opt.param_groups[1]["lr"] == 0.5 and opt.param_groups[1]["betas"] == (0.9, 0.999)


@pytest.mark.parametrize("set_to_none", [True, False])
def test_zero_grad(set_to_none):
    a = _param()
    a.grad = et.tensor([3.0, 4.0])
    optim.SGD([a], lr=0.1).zero_grad(set_to_none=set_to_none)
    assert (a.grad is None) if set_to_none else a.grad.tolist() == [0.0, 0.0]


def test_step_with_closure_returns_its_loss_and_uses_its_gradient():
    w = _param(3.0)
    opt = optim.SGD([w], lr=0.25)

    def closure():
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    loss = opt.step(closure)
    assert loss.item() == 9.0
    assert w.tolist() == [3.0 - 0.25 * 6.0]


def test_step_hooks_run_in_order_and_can_be_removed():
    w = _param()
    w.grad = et.ones(2)
    opt = optim.SGD([w], lr=0.1)
    calls = []
    pre = opt.register_step_pre_hook(lambda o, args, kwargs: calls.append(("pre", o is opt)))
    post = opt.register_step_post_hook(lambda o, args, kwargs: calls.append(("post", o is opt)))
    glob = optim.optimizer.register_optimizer_step_pre_hook(lambda o, a, k: calls.append(("global", True)))
    opt.step()
    assert calls == [("global", True), ("pre", True), ("post", True)]
    pre.remove(), post.remove(), glob.remove()
    opt.step()
    assert len(calls) == 3


def test_pre_hook_must_return_none_or_args_kwargs():
    w = _param()
    w.grad = et.ones(2)
    opt = optim.SGD([w], lr=0.1)
    opt.register_step_pre_hook(lambda o, a, k: 5)
    with pytest.raises(RuntimeError, match=r"must return None or a tuple of \(new_args, new_kwargs\), but got 5"):
        opt.step()


def _train(opt, params, grads):
    for g_step in grads:
        for p, g in zip(params, g_step):
            p.grad = et.tensor(g)
        opt.step()


@pytest.mark.parametrize("name, kwargs", [
    ("SGD", dict(lr=0.1, momentum=0.9)), ("Adam", dict(lr=0.01, amsgrad=True)), ("AdamW", dict(lr=0.01)),
    ("NAdam", dict(lr=0.01)), ("RMSprop", dict(lr=0.01, centered=True, momentum=0.5)),
    ("Adagrad", dict(lr=0.1)), ("Rprop", dict(lr=0.01)), ("ASGD", dict(lr=0.01)),
    ("Adadelta", dict()), ("Adamax", dict(lr=0.01)), ("RAdam", dict(lr=0.01)),
])
def test_state_dict_round_trip_continues_identically(name, kwargs):
    rng = np.random.default_rng(0)
    init = [rng.standard_normal((2, 3)), rng.standard_normal(4)]
    grads = [[rng.standard_normal(a.shape) for a in init] for _ in range(6)]

    params = [et.tensor(a, requires_grad=True) for a in init]
    opt = getattr(optim, name)(params, **kwargs)
    _train(opt, params, grads[:3])
    saved = pickle.loads(pickle.dumps(opt.state_dict()))
    saved_params = [np.array(p.detach().numpy()) for p in params]
    _train(opt, params, grads[3:])

    resumed = [et.tensor(a, requires_grad=True) for a in saved_params]
    opt2 = getattr(optim, name)(resumed, **kwargs)
    opt2.load_state_dict(saved)
    _train(opt2, resumed, grads[3:])
    for p, q in zip(params, resumed):
        if name in ("NAdam", "ASGD"):
            # Their float32 scalar state (mu_product; eta, mu) is cast to the parameter's
            # float64 on load, as PyTorch does, so later products round differently.
            np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-9)
        else:
            np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())


def test_state_dict_refers_to_params_by_index():
    a, b = _param(), _param()
    opt = optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1, momentum=0.9)
    a.grad = b.grad = et.ones(2)
    opt.step()
    sd = opt.state_dict()
    assert [g["params"] for g in sd["param_groups"]] == [[0], [1]]
    assert sorted(sd["state"]) == [0, 1] and "momentum_buffer" in sd["state"][0]
    assert sd["param_groups"][1]["lr"] == 0.5


def test_load_state_dict_moves_state_to_the_param_dtype_and_keeps_step():
    a = et.tensor([1.0, 2.0], dtype=et.float64, requires_grad=True)
    a.grad = et.ones(2, dtype=et.float64)
    opt = optim.Adam([a])
    opt.step()
    sd = copy.deepcopy(opt.state_dict())
    b = et.tensor([1.0, 2.0], dtype=et.float32, requires_grad=True)
    opt2 = optim.Adam([b])
    opt2.load_state_dict(sd)
    assert opt2.state[b]["exp_avg"].dtype is et.float32
    assert opt2.state[b]["step"].dtype is et.float32 and opt2.state[b]["step"].item() == 1.0


@pytest.mark.parametrize("groups, message", [
    ([{"params": [0]}, {"params": [1]}], "loaded state dict has a different number of parameter groups"),
    ([{"params": [0, 1]}], "loaded state dict contains a parameter group that doesn't match the size of optimizer's group"),
])
def test_load_state_dict_checks_group_sizes(groups, message):
    opt = optim.SGD([_param()], lr=0.1)
    for g in groups:
        g.update(lr=0.1, momentum=0, dampening=0, weight_decay=0, nesterov=False, maximize=False)
    with pytest.raises(ValueError, match=message):
        opt.load_state_dict({"state": {}, "param_groups": groups})


def test_repr_lists_groups():
    text = repr(optim.SGD([_param()], lr=0.1))
    assert text.startswith("SGD (\nParameter Group 0\n") and "    lr: 0.1" in text
