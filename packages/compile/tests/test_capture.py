"""Capture under guards: a compiled call equals the eager one (results and gradients), a
guard change recompiles, what cannot be captured runs eagerly (never the wrong branch),
fullgraph raises, explain reports, a callable backend gets a GraphModule. Training loops
with an optimizer (ember-optim, a sibling this package's suite does not install) are in
packages/ember/tests/test_compile_training.py."""
import warnings

import pytest

import ember_autograd
import ember_compile
import ember_fx
import ember_nn as nn
import ember_tensor as torch
from ember_compile import Unsupported, compile, config, explain


class Block(nn.Module):
    """A small model with a traced-through submodule, dropout and a training-mode branch."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 8)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(8, 3)
        self.scale = 0.5

    def forward(self, x):
        h = self.act(self.fc1(x))
        if self.training:
            h = h * 2.0
        return torch.tanh(self.fc2(h)) * self.scale + h.sum(-1, keepdim=True)


def _counting_backend():
    seen = []

    def backend(gm, example_inputs):
        seen.append((gm, example_inputs))
        return gm.forward

    return backend, seen


def _grads(model):
    return [p.grad.clone() for p in model.parameters()]


def test_module_results_and_gradients_equal_eager():
    torch.manual_seed(0)
    model = Block()
    compiled = compile(model)
    x = torch.randn(5, 6)
    out = compiled(x)
    out.pow(2).sum().backward()
    compiled_grads = _grads(model)
    model.zero_grad()
    expected = model(x)
    expected.pow(2).sum().backward()
    assert torch.equal(out, expected)
    for got, want in zip(compiled_grads, _grads(model)):
        assert torch.allclose(got, want, rtol=1e-6, atol=1e-7)


def test_guards_recompile_on_shape_dtype_training_grad_mode_and_values():
    backend, seen = _counting_backend()

    def f(x, n):
        return x * n + 1

    cf = compile(f, backend=backend)
    x = torch.randn(3)
    assert torch.equal(cf(x, 2), x * 2 + 1) and len(seen) == 1
    cf(torch.randn(3), 2)
    assert len(seen) == 1  # same guards: the cached graph
    cf(torch.randn(4), 2)  # shape
    cf(torch.randn(4, dtype=torch.float64), 2)  # dtype
    assert torch.equal(cf(x, 3), x * 3 + 1)  # a captured Python value
    cf(torch.randn(3, requires_grad=True), 2)  # requires_grad
    with ember_autograd.no_grad():
        cf(x, 2)  # grad mode
    assert len(seen) == 6
    # dynamic=True: one graph for every shape
    dyn_backend, dyn_seen = _counting_backend()
    dyn = compile(f, backend=dyn_backend, dynamic=True)
    dyn(torch.randn(3), 2)
    dyn(torch.randn(7), 2)
    assert len(dyn_seen) == 1

    model = Block()
    mbackend, mseen = _counting_backend()
    compiled = compile(model, backend=mbackend)
    x = torch.randn(2, 6)
    assert torch.equal(compiled(x), model(x)) and len(mseen) == 1
    compiled.eval()
    assert torch.equal(compiled(x), model(x)) and len(mseen) == 2  # the training branch is not taken
    model.scale = 3.0
    assert torch.equal(compiled(x), model(x)) and len(mseen) == 3


def test_a_global_flag_read_by_the_traced_code_is_guarded():
    global _FLAG
    _FLAG = True

    def f(x):
        return x + 1 if _FLAG else x - 1

    cf = compile(f)
    x = torch.zeros(2)
    assert cf(x).tolist() == [1.0, 1.0]
    _FLAG = False
    assert cf(x).tolist() == [-1.0, -1.0]


_FLAG = True


def test_data_dependent_control_flow_falls_back_and_never_takes_the_wrong_branch():
    def f(x):
        if x.sum() > 0:
            return x + 1
        return x - 1

    cf = compile(f)
    pos, neg = torch.ones(3), -torch.ones(3)
    assert cf(pos).tolist() == [2.0] * 3
    assert cf(neg).tolist() == [-2.0] * 3  # same guards as `pos`: eager both times (guarded traces: opt-in)
    assert cf(pos).tolist() == [2.0] * 3
    with pytest.raises(Unsupported, match="data-dependent control flow"):
        compile(f, fullgraph=True)(pos)
    out = explain(f)(pos)
    # PyTorch's counts (explain records guarded traces): sum and gt, the break, then add
    assert out.graph_count == 2 and out.graph_break_count == 1
    assert "control flow" in out.break_reasons[0].reason
    assert "Graph Break Count: 1" in str(out)


def test_explain_counts_a_captured_graph_and_its_ops():
    out = explain(lambda x, y: torch.relu(x @ y) + 1)(torch.randn(2, 2), torch.randn(2, 2))
    assert out.graph_count == 1 and out.graph_break_count == 0 and out.op_count == 3
    assert isinstance(out.graphs[0], ember_fx.GraphModule)


def test_a_callable_backend_gets_a_graph_module_and_its_result_is_used():
    calls = []

    def backend(gm, example_inputs):
        assert isinstance(gm, ember_fx.GraphModule)
        assert [n.op for n in gm.graph.nodes].count("placeholder") == len(example_inputs) == 2

        def run(*args):
            calls.append(len(args))
            return gm.forward(*args)

        return run

    cf = compile(lambda x, y, k=2.0: x * y * k, backend=backend)
    x, y = torch.randn(3), torch.randn(3)
    assert torch.equal(cf(x, y), x * y * 2.0) and torch.equal(cf(x, y, k=2.0), x * y * 2.0)
    assert calls == [2, 2]


def test_recompile_limit_runs_eagerly_with_a_warning(monkeypatch):
    monkeypatch.setattr(config, "cache_size_limit", 2)
    backend, seen = _counting_backend()
    cf = compile(lambda x: x * 2, backend=backend)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for n in range(1, 5):
            assert cf(torch.ones(n)).tolist() == [2.0] * n
    assert len(seen) == 2
    assert sum("cache_size_limit" in str(w.message) for w in caught) == 1


def test_reset_drops_graphs():
    backend, seen = _counting_backend()
    cf = compile(lambda x: x + 1, backend=backend)
    cf(torch.ones(1))
    ember_compile.compiler.reset()
    cf(torch.ones(1))
    assert len(seen) == 2


def test_a_random_draw_breaks_the_graph():
    def noisy(x):
        return x + torch.randn(3)

    out = explain(noisy)(torch.zeros(3))
    assert out.graph_break_count == 1 and "random op" in out.break_reasons[0].reason


def _with_grad_mode_blocks(x, w):
    with ember_autograd.no_grad():
        scale = x * 2 + w          # constants for the gradient, as eagerly
    y = (x * scale).relu() * w
    with ember_autograd.set_grad_enabled(False):
        y.mul(3)                   # no effect, no record
        with ember_autograd.enable_grad():
            z = y * x              # recorded again inside the inner block
    return (z + y).sum()


@pytest.mark.parametrize("backend", ["inductor", "aot_eager", "eager"])
def test_grad_mode_blocks_inside_compiled_code_are_part_of_the_graph(backend):
    """no_grad / set_grad_enabled / enable_grad blocks inside the function: the compiled
    call's gradients are eager's (the no_grad value is a constant), on every backend."""
    def leaves():
        return (torch.tensor([1.5, -2.0, 0.5], requires_grad=True), torch.tensor([0.25, 1.0, -3.0],
                                                                                requires_grad=True))
    x, w = leaves()
    _with_grad_mode_blocks(x, w).backward()
    cx, cw = leaves()
    compiled = compile(_with_grad_mode_blocks, backend=backend)
    for _ in range(2):  # the capture's call, then the graph's
        cx.grad = cw.grad = None
        out = compiled(cx, cw)
        assert out.requires_grad and ember_autograd.is_grad_enabled()
        out.backward()
        assert cx.grad.tolist() == x.grad.tolist() and cw.grad.tolist() == w.grad.tolist()
    code = compiled._ember_compiled_function.graph_modules[0].code
    assert code.count("set_grad_mode(False)") == 2 and code.count("set_grad_mode(True)") == 2, code
    with ember_autograd.no_grad():  # under an outer no_grad the inner enable_grad still records
        assert compiled(cx, cw).requires_grad == _with_grad_mode_blocks(x, w).requires_grad


def test_a_plain_set_grad_enabled_call_leaves_the_mode_as_eagerly():
    """``set_grad_enabled(False)`` as a plain call inside the function: the ops after it are
    not recorded and the mode stays off after the call, as eagerly."""
    def switch_off(x):
        y = x * 2
        ember_autograd.set_grad_enabled(False)
        return y + 1, y
    compiled = compile(switch_off)
    try:
        for _ in range(2):
            ember_autograd.set_grad_enabled(True)
            out, y = compiled(torch.ones(2, requires_grad=True))
            assert not ember_autograd.is_grad_enabled()
            assert y.requires_grad and not out.requires_grad
    finally:
        ember_autograd.set_grad_enabled(True)
