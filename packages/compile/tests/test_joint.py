"""Ahead-of-time backward (`ember_compile.joint`): a training call of a compiled graph is
one ``CompiledFunctionBackward`` node whose backward applies ember's derivative rules ahead
of time; results and gradients equal eager ember's bit for bit; graphs it cannot lower
take the captured graph's path; guards, no_grad, retain_graph, in-place checks and double
backward behave as eagerly."""
import copy

import pytest

import ember_autograd
import ember_nn as nn
import ember_nn.functional as F
import ember_tensor as torch
from ember_compile import compile
from ember_compile.joint import JointCompiled, JointPlan


def _holder(compiled):
    return compiled._compiled_function if isinstance(compiled, nn.Module) else compiled._ember_compiled_function


def _plans(compiled):
    """Every plan or refusal reason of the compiled callable, over its graphs."""
    return [p for joint in _holder(compiled).joints if joint is not None for p in joint.plans.values()]


def _mlp():
    torch.manual_seed(0)
    return nn.Sequential(nn.Flatten(), nn.Linear(12, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 3))


def _grads(model):
    return [None if p.grad is None else p.grad.clone() for p in model.parameters()]


def _train_step(run, model, x, target):
    model.zero_grad()
    loss = F.cross_entropy(run(x), target)
    loss.backward()
    return loss, _grads(model)


def _assert_equal(a, b):
    assert len(a) == len(b)
    for u, v in zip(a, b):
        assert (u is None) == (v is None)
        assert u is None or u.shape == v.shape and torch.equal(u, v), (u, v)


def test_mlp_training_step_is_one_node_and_equals_eager_bit_for_bit():
    model = _mlp()
    compiled = compile(model)
    x, target = torch.randn(5, 3, 4), torch.tensor([0, 2, 1, 1, 0])
    for _ in range(2):  # the second call runs the cached plan
        loss, grads = _train_step(compiled, model, x, target)
        eager_loss, eager_grads = _train_step(model, model, x, target)
        assert torch.equal(loss, eager_loss)
        _assert_equal(grads, eager_grads)
    out = compiled(x)
    assert out.grad_fn.name() == "CompiledFunctionBackward"
    # Its edges go straight to the parameters' accumulators: no per-op nodes.
    assert all(fn is None or fn.name() == "torch::autograd::AccumulateGrad" for fn, _ in out.grad_fn.next_functions)
    (plan,) = _plans(compiled)
    assert isinstance(plan, JointPlan)
    assert [s.op.name for s in plan.backward_steps] == ["linear", "relu", "linear", "relu", "linear"]


def test_input_gradients_and_an_input_that_needs_none():
    model = _mlp()
    compiled = compile(model)
    x = torch.randn(4, 12, requires_grad=True)
    gx = ember_autograd.grad(compiled(x).pow(2).sum(), x)[0]
    ex = ember_autograd.grad(model(x).pow(2).sum(), x)[0]
    assert torch.equal(gx, ex)


def test_conv_net_gradients_equal_eager():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(1, 4, 3, padding=1)
            self.fc = nn.Linear(4 * 3 * 3, 5)

        def forward(self, x):
            h = F.max_pool2d(F.relu(self.conv(x)), 2)
            return F.log_softmax(self.fc(torch.flatten(h, 1)), dim=1)

    torch.manual_seed(2)
    model = Net()
    compiled = compile(model)
    x, target = torch.randn(2, 1, 6, 6), torch.tensor([1, 4])
    loss, grads = _train_step(lambda x: compiled(x), model, x, target)
    eager_loss, eager_grads = _train_step(model, model, x, target)
    assert torch.equal(loss, eager_loss)
    _assert_equal(grads, eager_grads)
    assert isinstance(_plans(compiled)[0], JointPlan)


def broadcasting(x, b, w):
    h = torch.tanh(x * b + 1.0)                 # b (3,) broadcast over x (4, 3)
    s = h.sum(1, keepdim=True) - x.mean()      # reductions
    return (s * w).exp().sum(0), torch.max(h, dim=1).values


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_broadcasting_reductions_and_two_outputs_equal_eager(dtype):
    torch.manual_seed(3)
    x = torch.randn(4, 3, dtype=dtype, requires_grad=True)
    b = torch.randn(3, dtype=dtype, requires_grad=True)
    w = torch.randn(1, 2, dtype=dtype, requires_grad=True)
    f = compile(broadcasting)
    out, mx = f(x, b, w)
    eout, emx = broadcasting(x, b, w)
    assert torch.equal(out, eout) and torch.equal(mx, emx)
    got = ember_autograd.grad(out.sum() + mx.sum(), [x, b, w])
    want = ember_autograd.grad(eout.sum() + emx.sum(), [x, b, w])
    _assert_equal(got, want)
    assert got[1].shape == (3,) and got[2].shape == (1, 2)  # un-broadcast to the inputs' shapes
    assert isinstance(_plans(f)[0], JointPlan)


def test_no_grad_calls_take_the_graph_path_and_equal_eager():
    model = _mlp()
    compiled = compile(model)
    x = torch.randn(2, 12)
    with ember_autograd.no_grad():
        out = compiled(x)
    assert out.grad_fn is None and not out.requires_grad
    assert torch.equal(out, model(x).detach())
    assert _holder(compiled).joints == [None]  # grad mode off is a guard: no training path built


def test_a_graph_with_an_op_it_cannot_lower_takes_the_graph_path():
    def with_inplace(x, w):
        y = x * w
        y.add_(1.0)
        return (y * y).sum()

    x, w = torch.randn(3), torch.randn(3, requires_grad=True)
    f = compile(with_inplace)
    got = ember_autograd.grad(f(x, w), w)[0]
    assert torch.equal(got, ember_autograd.grad(with_inplace(x, w), w)[0])
    (reason,) = _plans(f)
    assert "in-place" in reason


def test_dropout_in_training_is_lowered_and_draws_as_eager():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 6), nn.Dropout(0.5), nn.ReLU(), nn.Linear(6, 2))
    twin = copy.deepcopy(model)
    compiled = compile(model)
    x = torch.randn(4, 6)
    for seed in (7, 8):  # the first call lowers: that run's draws are undone
        torch.manual_seed(seed)
        out = compiled(x)
        out.pow(2).sum().backward()
        torch.manual_seed(seed)
        eager = twin(x)
        eager.pow(2).sum().backward()
        assert torch.equal(out, eager)
        _assert_equal(_grads(model), _grads(twin))
    assert isinstance(_plans(compiled)[0], JointPlan) and _plans(compiled)[0].random
    torch.manual_seed(1)
    compiled(x)
    after_compiled = torch.rand(2)
    torch.manual_seed(1)
    twin(x)
    assert torch.equal(after_compiled, torch.rand(2))  # the call drew as much as an eager call


def test_double_backward_through_dropout_replays_the_forwards_draws():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 6), nn.Dropout(0.5), nn.Tanh(), nn.Linear(6, 1))
    twin = copy.deepcopy(model)
    compiled = compile(model)
    x = torch.randn(4, 6, requires_grad=True)

    def penalty(run, m):
        torch.manual_seed(3)
        (gx,) = ember_autograd.grad(run(x).sum(), x, create_graph=True)
        torch.rand(5)  # draws between forward and double backward must not matter
        m.zero_grad()
        gx.pow(2).sum().backward()
        return [gx] + _grads(m)

    _assert_equal(penalty(compiled, model), penalty(twin, twin))
    assert isinstance(_plans(compiled)[0], JointPlan)


def test_a_random_op_with_its_own_generator_is_not_lowered():
    # (capture breaks on a Generator argument first; the lowering refuses one too)
    gen = torch.Generator().manual_seed(0)
    joint = JointCompiled(nn.Module(), lambda p: torch.bernoulli(p, generator=gen) * p)
    assert joint([torch.full((4,), 0.5, requires_grad=True)]) is None
    (reason,) = joint.plans.values()
    assert "generator" in reason


def test_backward_twice_needs_retain_graph_as_eagerly():
    model = _mlp()
    compiled = compile(model)
    x = torch.randn(3, 12)
    loss = compiled(x).sum()
    loss.backward(retain_graph=True)
    loss.backward()
    twice = _grads(model)
    model.zero_grad()
    eager = model(x).sum()
    eager.backward(retain_graph=True)
    eager.backward()
    _assert_equal(twice, _grads(model))
    loss = compiled(x).sum()
    loss.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        loss.backward()


def test_a_saved_parameter_modified_in_place_raises_as_eagerly():
    model = _mlp()
    compiled = compile(model)
    x = torch.randn(3, 12)
    loss = compiled(x).sum()
    with ember_autograd.no_grad():
        model[3].weight.mul_(2.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


def test_requires_grad_of_a_parameter_is_a_guard():
    model = _mlp()
    compiled = compile(model)
    x = torch.randn(3, 12)
    compiled(x).sum().backward()
    model.zero_grad()
    model[1].weight.requires_grad_(False)
    compiled(x).sum().backward()
    assert model[1].weight.grad is None
    got = _grads(nn.Sequential(*list(model)[3:]))
    model.zero_grad()
    model(x).sum().backward()
    _assert_equal(got, _grads(nn.Sequential(*list(model)[3:])))
    assert len(_plans(compiled)) == 2


def test_double_backward_falls_back_to_eager():
    torch.manual_seed(4)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    compiled = compile(model)
    x = torch.randn(5, 3, requires_grad=True)

    def grad_penalty(run):
        (gx,) = ember_autograd.grad(run(x).sum(), x, create_graph=True)
        model.zero_grad()
        gx.pow(2).sum().backward()
        return gx, _grads(model)

    gx, grads = grad_penalty(compiled)
    assert gx.grad_fn is not None and isinstance(_plans(compiled)[0], JointPlan)
    egx, egrads = grad_penalty(model)
    assert torch.equal(gx, egx)
    _assert_equal(grads, egrads)


def test_modules_with_hooks_take_the_graph_path():
    model = _mlp()
    compiled = compile(model)
    calls = []
    model[1].register_forward_hook(lambda m, i, o: calls.append(1))
    compiled(torch.randn(2, 12)).sum().backward()
    compiled(torch.randn(2, 12)).sum().backward()
    assert len(calls) == 2 and _plans(compiled) == []


def test_dynamic_shapes_keep_a_plan_per_shape_and_the_aot_eager_backend_lowers_too():
    model = _mlp()
    for compiled in (compile(model, dynamic=True), compile(model, backend="aot_eager")):
        for batch in (3, 5):
            x = torch.randn(batch, 12)
            model.zero_grad()
            compiled(x).sum().backward()
            got = _grads(model)
            model.zero_grad()
            model(x).sum().backward()
            _assert_equal(got, _grads(model))
        assert all(isinstance(p, JointPlan) for p in _plans(compiled))


def _swallowing(x):
    try:
        bool(x.sum() > 0)
    except Exception:  # the refusal is remembered even if the program swallows it
        pass
    return x * 2.0


def test_a_graph_value_read_into_python_is_not_lowered():
    for program in (lambda x: x * float(x.sum()), _swallowing):
        joint = JointCompiled(nn.Module(), program)
        assert joint([torch.randn(3, requires_grad=True)]) is None
        (reason,) = joint.plans.values()
        assert "Python value" in reason


def test_the_switch_turns_the_ahead_of_time_backward_off(monkeypatch):
    from ember_compile import config
    monkeypatch.setattr(config, "ahead_of_time_backward", False)
    model = _mlp()
    compiled = compile(model)
    out = compiled(torch.randn(2, 12))
    assert out.grad_fn.name() != "CompiledFunctionBackward" and _holder(compiled).joints == [None]


def test_cuda_training_call_is_lowered_and_equals_eager_on_the_device():
    model = _mlp().cuda()
    compiled = compile(model)
    x = torch.randn(3, 12).cuda()
    out = compiled(x)
    assert out.device == x.device and out.grad_fn.name() == "CompiledFunctionBackward"
    out.sum().backward()
    got = _grads(model)
    model.zero_grad()
    eager = model(x)
    assert torch.equal(out, eager)
    eager.sum().backward()
    _assert_equal(got, _grads(model))


def test_batchnorm_training_is_lowered_with_its_buffer_updates_applied_once_per_call():
    torch.manual_seed(5)
    model = nn.Sequential(nn.Conv2d(1, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(), nn.Linear(64, 3))
    twin = copy.deepcopy(model)
    compiled = compile(model)
    x, target = torch.randn(5, 1, 6, 6), torch.tensor([0, 1, 2, 1, 0])
    for _ in range(2):
        _, grads = _train_step(compiled, model, x, target)
        _, eager_grads = _train_step(twin, twin, x, target)
        _assert_equal(grads, eager_grads)
        # running_mean, running_var, num_batches_tracked: the lowering run's update was undone
        _assert_equal(list(model.buffers()), list(twin.buffers()))
    assert isinstance(_plans(compiled)[0], JointPlan)


class _WritesBuffer(nn.Module):
    def __init__(self, differentiable_update):
        super().__init__()
        self.w = nn.Parameter(torch.ones(3))
        self.register_buffer("seen", torch.zeros(3))
        self.differentiable_update = differentiable_update

    def forward(self, x):
        if self.differentiable_update:
            self.seen.add_(x * self.w)  # the buffer gets a history eagerly
            return (x * self.w).sum()
        y = (x * self.seen * self.w).sum()  # an op with a derivative reads the buffer ...
        self.seen.add_(x)  # ... before it is written (the plan would save the later value)
        return y


def test_a_write_through_a_view_is_not_lowered():
    def through_view(x, w):
        h = x * 2.0
        h[0].normal_()  # a draw into a row of h: h itself changes
        return (h * w).sum()

    joint = JointCompiled(nn.Module(), through_view)
    assert joint([torch.randn(2, 3), torch.ones(3, requires_grad=True)]) is None
    (reason,) = joint.plans.values()
    assert "shares memory" in reason


@pytest.mark.parametrize("differentiable_update, reason", [(True, "requires grad"), (False, "written in place later")])
def test_buffer_writes_the_plan_cannot_replay_take_the_graph_path(differentiable_update, reason):
    module, twin = _WritesBuffer(differentiable_update), _WritesBuffer(differentiable_update)
    # aot_eager: the graph's path without fusion (a fused group saves all its inputs, the
    # buffer too, so that path would fail the version check that eager ember passes)
    compiled = compile(module, backend="aot_eager")
    x = torch.tensor([1.0, 2.0, 3.0])
    compiled(x).backward()
    twin(x).backward()
    assert torch.equal(module.w.grad, twin.w.grad) and torch.equal(module.seen.detach(), twin.seen.detach())
    (refusal,) = _plans(compiled)
    assert reason in refusal


def test_statistics_given_as_arguments_are_updated_once_per_call():
    def norm(x, mean, var, w):
        return F.batch_norm(x, mean, var, w, None, training=True, momentum=0.5).sum()

    torch.manual_seed(6)
    x, w = torch.randn(4, 3), torch.ones(3, requires_grad=True)
    mean, var = torch.zeros(3), torch.ones(3)
    twin_mean, twin_var = mean.clone(), var.clone()
    f = compile(norm)
    f(x, mean, var, w).backward()
    norm(x, twin_mean, twin_var, w)
    assert torch.equal(mean, twin_mean) and torch.equal(var, twin_var)
    assert isinstance(_plans(f)[0], JointPlan)


def test_the_lowering_run_leaves_the_calls_tensors_versions_alone():
    # An eager graph that saved x before the compiled call's first (lowering) run still
    # backpropagates: the lowering restores the call's tensors only where it changed them.
    model = _mlp()
    compiled = compile(model)
    x, target = torch.randn(5, 3, 4), torch.tensor([0, 2, 1, 1, 0])
    eager_loss = F.cross_entropy(model(x), target)
    loss, grads = _train_step(compiled, model, x, target)
    assert isinstance(_plans(compiled)[0], JointPlan)
    model.zero_grad()
    eager_loss.backward()
    assert torch.equal(loss, eager_loss)
    _assert_equal(grads, _grads(model))


class _PositiveRows(nn.Module):
    """Rows picked by their values: a data-dependent shape inside a lowered graph."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)

    def forward(self, x):
        return self.fc(x[x[:, 0] > 0]).sum()


def test_a_data_dependent_shape_takes_the_graph_path_and_equals_eager():
    """The plan's fitted gradients hold the lowering's shapes: a call whose op returns
    another shape runs the captured graph op by op instead (never misfitted gradients)."""
    torch.manual_seed(0)
    model = _PositiveRows()
    compiled = compile(model)
    for _ in range(5):
        x = torch.randn(6, 3)
        model.zero_grad()
        expected = model(x)
        expected.backward()
        grads = [p.grad.clone() for p in model.parameters()]
        model.zero_grad()
        got = compiled(x)
        got.backward()
        assert torch.equal(got, expected)
        for p, g in zip(model.parameters(), grads):
            assert torch.equal(p.grad, g)
    (joint,) = [j for j in compiled._compiled_function.joints if j is not None]
    assert joint.shape_changes >= 1 and any(isinstance(p, JointPlan) for p in joint.plans.values())
