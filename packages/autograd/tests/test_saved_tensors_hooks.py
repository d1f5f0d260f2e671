"""torch.autograd.graph.saved_tensors_hooks, save_on_cpu and disable_saved_tensors_hooks:
every tensor saved for backward inside the block goes through the pack hook, backward
through the unpack hook; pairs nest; errors are PyTorch's."""
import threading

import pytest

import ember_autograd
import ember_tensor as et
from ember_autograd.graph import disable_saved_tensors_hooks, save_on_cpu, saved_tensors_hooks


def test_pack_sees_each_saved_tensor_and_unpack_gives_them_back():
    x = et.tensor([1.0, 2.0, 3.0], requires_grad=True)
    packed, unpacked = [], []

    def pack(t):
        packed.append(t)
        return len(packed) - 1

    def unpack(i):
        unpacked.append(i)
        return packed[i]
    with saved_tensors_hooks(pack, unpack):
        y = (x * x).exp().sum()  # mul saves x twice, exp saves its result
    assert len(packed) == 3 and unpacked == []
    y.backward()
    assert sorted(unpacked) == [0, 1, 2]
    et.testing.assert_close(x.grad, 2 * x.detach() * (x.detach() ** 2).exp())


def test_unpack_result_is_what_backward_uses():
    x = et.tensor([1.0, 2.0], requires_grad=True)
    with saved_tensors_hooks(lambda t: t, lambda t: t * 10):
        y = (x * 3).mul(x).sum()  # mul saves (x * 3) and x
    y.backward()
    # (3x) * x: the direct path gives 10 * 3x, the path through 3x gives 3 * 10x (PyTorch's too)
    et.testing.assert_close(x.grad, et.tensor([60.0, 120.0]))


def test_custom_function_saves_go_through_the_hooks():
    class Square(ember_autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * a

        @staticmethod
        def backward(ctx, grad):
            (a,) = ctx.saved_tensors
            return 2 * a * grad
    x = et.tensor([3.0], requires_grad=True)
    seen = []
    with saved_tensors_hooks(lambda t: seen.append(t) or t, lambda t: t):
        Square.apply(x).sum().backward()
    assert len(seen) == 1 and x.grad.item() == 6.0


def test_pairs_nest_and_the_innermost_applies():
    x = et.ones(2, requires_grad=True)
    outer, inner = [], []
    with saved_tensors_hooks(lambda t: outer.append(t) or t, lambda t: t):
        a = x.exp()
        with saved_tensors_hooks(lambda t: inner.append(t) or t, lambda t: t):
            b = x.sin()
        c = x.cos()
    assert len(outer) == 2 and len(inner) == 1
    (a + b + c).sum().backward()


def test_unpack_must_return_a_tensor():
    x = et.ones(2, requires_grad=True)
    with saved_tensors_hooks(lambda t: 5, lambda p: "bad"):
        y = (x * x).sum()
    with pytest.raises(TypeError, match="expected to be a Tensor but got result of type str"):
        y.backward()


def test_double_backward_through_hooked_outputs():
    x = et.tensor([0.5, 1.5], requires_grad=True)
    with saved_tensors_hooks(lambda t: t, lambda t: t):
        y = x.exp().sum()
    (g,) = ember_autograd.grad(y, x, create_graph=True)
    g.sum().backward()
    et.testing.assert_close(x.grad, x.detach().exp())


def test_save_on_cpu_gives_the_same_gradients():
    x = et.randn(3, 4, requires_grad=True)
    with save_on_cpu(pin_memory=True):
        (x.tanh() * x).sum().backward()
    expected = x.detach().tanh() + x.detach() * (1 - x.detach().tanh() ** 2)
    et.testing.assert_close(x.grad, expected)


def test_disable_saved_tensors_hooks_refuses_new_pairs():
    with disable_saved_tensors_hooks("no hooks here"):
        with pytest.raises(RuntimeError, match="no hooks here"):
            with saved_tensors_hooks(lambda t: t, lambda t: t):
                pass
    with saved_tensors_hooks(lambda t: t, lambda t: t):  # enabled again after the block
        pass


def test_hooks_are_per_thread():
    seen = []
    x = et.ones(2, requires_grad=True)
    results = []

    def other_thread():
        results.append((x * x).sum())
    with saved_tensors_hooks(lambda t: seen.append(t) or t, lambda t: t):
        worker = threading.Thread(target=other_thread)
        worker.start()
        worker.join()
    assert seen == []
    results[0].backward()


def test_matches_pytorch_where_both_save_the_same_tensors():
    """mul saves its two operands in both frameworks: a pack hook that doubles them
    doubles both gradients, in ember as in PyTorch."""
    torch = pytest.importorskip("torch")
    a_values, b_values = [0.3, -1.2, 0.7], [1.1, 0.4, -0.5]
    results = []
    for lib, graph in ((et, ember_autograd.graph), (torch, torch.autograd.graph)):
        a = lib.tensor(a_values, requires_grad=True)
        b = lib.tensor(b_values, requires_grad=True)
        with graph.saved_tensors_hooks(lambda p: p * 2, lambda p: p):
            (a * b).sum().backward()
        results.append(a.grad.tolist() + b.grad.tolist())
    assert results[0] == pytest.approx(results[1], rel=1e-6)
    assert results[0] == pytest.approx([2 * v for v in b_values + a_values], rel=1e-6)
