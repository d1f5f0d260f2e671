"""The Module contract's calls: forward, forward pre-hooks and hooks, full and deprecated
backward hooks, global module hooks, and a module used twice."""
import pytest

import ember_autograd
import ember_tensor as torch
import ember_nn as nn

from _module_fixtures import Leaf, Tree


# -- forward and hooks -------------------------------------------------------------------------

def test_forward_missing_raises():
    with pytest.raises(NotImplementedError, match=r'Module \[Module\] is missing the required "forward" function'):
        nn.Module()(torch.ones(1))


def test_init_rejects_arguments():
    with pytest.raises(TypeError, match="unexpected keyword argument 'foo'"):
        nn.Module(foo=1)


def test_forward_pre_hooks_and_hooks_replace_values_in_order():
    m = Leaf()
    calls = []
    m.register_forward_pre_hook(lambda mod, args: calls.append("pre") or (args[0] * 2,))
    m.register_forward_pre_hook(lambda mod, args: calls.append("first"), prepend=True)
    h = m.register_forward_hook(lambda mod, args, out: out + 1)
    m.register_forward_hook(lambda mod, args, kwargs, out: calls.append(("kw", kwargs)), with_kwargs=True)
    out = m(torch.ones(2))
    assert out.tolist() == [3.0, 3.0] and calls == ["first", "pre", ("kw", {})]
    h.remove()
    assert m(torch.ones(2)).tolist() == [2.0, 2.0]


def test_pre_hook_with_kwargs_replaces_args_and_kwargs():
    class Add(nn.Module):
        def forward(self, x, *, y):
            return x + y

    m = Add()
    m.register_forward_pre_hook(lambda mod, args, kwargs: ((args[0] * 10,), {"y": kwargs["y"] + 1}),
                                with_kwargs=True)
    assert m(torch.ones(1), y=torch.ones(1)).tolist() == [12.0]


def test_always_call_hook_runs_when_forward_raises():
    class Broken(nn.Module):
        def forward(self, x):
            raise ValueError("boom")

    m = Broken()
    seen = []
    m.register_forward_hook(lambda mod, args, out: seen.append(out), always_call=True)
    with pytest.raises(ValueError, match="boom"):
        m(torch.ones(1))
    assert seen == [None]


def test_handle_works_as_context_manager():
    m = Leaf()
    with m.register_forward_hook(lambda mod, args, out: out * 0):
        assert m(torch.ones(2)).tolist() == [0.0, 0.0]
    assert m(torch.ones(2)).tolist() == [1.0, 1.0]


def test_full_backward_hooks_see_and_replace_gradients():
    m = Leaf()
    seen = {}

    def pre_hook(module, grad_output):
        seen["pre"] = grad_output[0].tolist()
        return (grad_output[0] * 2,)

    def hook(module, grad_input, grad_output):
        seen["in"] = grad_input[0].tolist()
        seen["out"] = grad_output[0].tolist()
        return (grad_input[0] * 10,)

    m.register_full_backward_pre_hook(pre_hook)
    m.register_full_backward_hook(hook)
    with ember_autograd.no_grad():
        m.weight.fill_(3)
    x = torch.ones(2, requires_grad=True)
    m(x).sum().backward()
    assert seen == {"pre": [1.0, 1.0], "out": [2.0, 2.0], "in": [6.0, 6.0]}
    assert x.grad.tolist() == [60.0, 60.0]
    assert m.weight.grad.tolist() == [2.0, 2.0]


class TwoInTwoOut(nn.Module):
    def forward(self, a, b, scale):
        return a * b * scale, a + 1


def test_full_backward_hook_with_several_inputs_and_outputs_matches_pytorch():
    real = pytest.importorskip("torch")

    class Reference(real.nn.Module):
        def forward(self, a, b, scale):
            return a * b * scale, a + 1

    def run(module, lib):
        seen = []
        module.register_full_backward_hook(lambda m, gi, go: seen.append(
            ([None if g is None else g.tolist() for g in gi], [None if g is None else g.tolist() for g in go])))
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0, 4.0])  # needs no gradient: its grad_input is None
        first, second = module(a, b, 2.0)
        (first.sum() * 3).backward()  # the second output is unused: its grad_output is None
        return seen, a.grad.tolist()

    assert run(TwoInTwoOut(), torch) == run(Reference(), real)


def test_deprecated_backward_hook_sees_the_output_nodes_gradients():
    m = Leaf()
    seen = []
    m.register_backward_hook(lambda module, grad_input, grad_output: seen.append(len(grad_output)))
    with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks and full backward hooks"):
        m.register_full_backward_hook(lambda *a: None)
    m(torch.ones(2, requires_grad=True)).sum().backward()
    assert seen == [1]


def test_global_module_hooks_run_for_every_module():
    from ember_nn.modules.module import register_module_forward_hook, register_module_full_backward_hook
    seen = []
    forward = register_module_forward_hook(lambda module, args, out: seen.append(type(module).__name__))
    backward = register_module_full_backward_hook(
        lambda module, grad_input, grad_output: seen.append("grad " + type(module).__name__))
    try:
        Tree()(torch.ones(2, requires_grad=True)).sum().backward()
    finally:
        forward.remove()
        backward.remove()
    # Tree's hook runs last: it waits for the gradient with respect to Tree's input.
    assert seen == ["Leaf", "Leaf", "Tree", "grad Leaf", "grad Leaf", "grad Tree"]
    seen.clear()
    Tree()(torch.ones(2))
    assert seen == []


def test_module_used_twice_sums_gradients():
    m = Leaf()
    x = torch.tensor([1.0, 2.0])
    (m(x) + m(x)).sum().backward()
    assert m.weight.grad.tolist() == [2.0, 4.0]
