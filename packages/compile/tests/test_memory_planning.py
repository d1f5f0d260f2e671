"""Memory planning: a fused group consuming a BLAS product (matmul, linear, conv2d) writes
into the product's buffer, and a group consuming a dead intermediate writes into that,
only when no autograd node records the group; results equal eager ember's bit for bit
and PyTorch's to rounding; a value read elsewhere (a second user, a graph output, a view,
a hook, a saved tensor) is never overwritten."""
import pytest

import ember_autograd
import ember_nn as nn
import ember_nn.functional as F
import ember_tensor as torch
from ember_compile import compile
from ember_compile.fusion import FusedGroup


def _groups(compiled):
    holder = compiled._compiled_function if isinstance(compiled, nn.Module) else compiled._ember_compiled_function
    gm = holder.graph_modules[-1]
    return [n.target for n in gm.graph.nodes if isinstance(n.target, FusedGroup)]


def _in_place_calls(compiled):
    return sum(g.in_place_calls for g in _groups(compiled))


def _torch(t):
    real = pytest.importorskip("torch")
    return real.from_numpy(t.numpy().copy())


def relu_linear(x, w, b):
    return torch.relu(x @ w.t() + b)


def tanh_addmm(x, w, b):
    return torch.tanh(torch.addmm(b, x, w.t())) * 2.0


def sigmoid_linear(x, w, b):
    return F.linear(x, w, b).sigmoid() - 0.5


def sigmoid_mm(x, w, b):
    return torch.mm(x, w.t()).sigmoid()   # a group of one op on the product


# (function, its PyTorch twin)
EPILOGUES = [
    (relu_linear, lambda t, x, w, b: t.relu(x @ w.t() + b)),
    (tanh_addmm, lambda t, x, w, b: t.tanh(t.addmm(b, x, w.t())) * 2.0),
    (sigmoid_linear, lambda t, x, w, b: t.nn.functional.linear(x, w, b).sigmoid() - 0.5),
    (sigmoid_mm, lambda t, x, w, b: t.mm(x, w.t()).sigmoid()),
]


def _operands(dtype, bias_shape=(6,), transposed_x=False):
    torch.manual_seed(3)
    x = torch.randn(5, 4, dtype=dtype).t() if transposed_x else torch.randn(4, 5, dtype=dtype)
    return x, torch.randn(6, 5, dtype=dtype), torch.randn(bias_shape, dtype=dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("bias_shape", [(6,), (1, 6), (4, 6)])
@pytest.mark.parametrize("transposed_x", [False, True])
@pytest.mark.parametrize("fn, twin", EPILOGUES, ids=[f.__name__ for f, _ in EPILOGUES])
def test_epilogue_runs_in_place_and_equals_eager_bit_for_bit(fn, twin, dtype, bias_shape, transposed_x):
    compiled = compile(fn)
    args = _operands(dtype, bias_shape, transposed_x)
    expected = fn(*args)
    for _ in range(2):
        assert torch.equal(compiled(*args), expected)
    assert _in_place_calls(compiled) == 2
    real = pytest.importorskip("torch")
    tol = 1e-5 if dtype is torch.float32 else 1e-12
    assert real.allclose(_torch(expected), twin(real, *map(_torch, args)), rtol=tol, atol=tol)


def test_inference_mlp_under_no_grad_runs_its_activations_in_place():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Flatten(), nn.Linear(784, 512), nn.Tanh(), nn.Linear(512, 512), nn.Sigmoid(),
                          nn.Linear(512, 10))
    compiled = compile(model)
    x = torch.randn(8, 1, 28, 28)
    with ember_autograd.no_grad():
        expected = model(x)
        assert torch.equal(compiled(x), expected)
    assert _in_place_calls(compiled) == 2
    assert [g.reuse.epilogue for g in _groups(compiled)] == [True, True]


def test_module_epilogue_tanh_times_two():
    torch.manual_seed(0)
    fc = nn.Linear(5, 3)
    compiled = compile(lambda x: torch.tanh(fc(x)) * 2)
    x = torch.randn(4, 5)
    with ember_autograd.no_grad():
        assert torch.equal(compiled(x), torch.tanh(fc(x)) * 2)
    assert _in_place_calls(compiled) == 1


def test_conv2d_epilogue():
    torch.manual_seed(0)
    conv = nn.Conv2d(2, 3, 3, padding=1)
    compiled = compile(lambda x: torch.relu(conv(x)) + 1.0)
    x = torch.randn(2, 2, 5, 5)
    with ember_autograd.no_grad():
        expected = torch.relu(conv(x)) + 1.0
        assert torch.equal(compiled(x), expected)
    assert _in_place_calls(compiled) == 1


def test_relu_of_a_product_alone_stays_the_eager_op():
    # In place it would store the product's own element back (a masked store, slower).
    fc = nn.Linear(5, 3)
    for fn in (lambda x: torch.relu(fc(x)), lambda x: nn.functional.relu(x @ fc.weight.t())):
        compiled = compile(fn)
        x = torch.randn(4, 5)
        with ember_autograd.no_grad():
            assert torch.equal(compiled(x), fn(x))
        assert _groups(compiled) == []


def test_a_forward_hook_keeps_the_product():
    fc = nn.Linear(5, 3)
    kept = []
    compiled = compile(lambda x: torch.tanh(fc(x)))
    x = torch.randn(4, 5)
    with ember_autograd.no_grad():
        compiled(x)
        assert _in_place_calls(compiled) == 1
        fc.register_forward_hook(lambda m, i, o: kept.append(o))
        compiled(x)
    assert _in_place_calls(compiled) == 1   # not overwritten: the hook holds the product
    assert torch.equal(kept[-1], fc(x))


def product_and_output(x, w, b):
    p = x @ w
    return torch.relu(p + b), p


def product_with_two_users(x, w, b):
    p = x @ w
    return torch.relu(p + b) * p.sum()


def product_and_view(x, w, b):
    p = x @ w
    v = p.view(-1)
    return torch.relu(p + b), v


def transposed_product(x, w, b):
    return torch.relu((x @ w).t() + 1.0)


def input_chain(x, w, b):
    return torch.relu(x * 2.0 + b)


@pytest.mark.parametrize("fn", [product_and_output, product_with_two_users, product_and_view, transposed_product,
                                input_chain])
def test_values_read_elsewhere_are_not_overwritten(fn):
    torch.manual_seed(0)
    x, w, b = torch.randn(4, 5), torch.randn(5, 5), torch.randn(5)
    before = [t.clone() for t in (x, w, b)]
    compiled = compile(fn)
    result, expected = compiled(x, w, b), fn(x, w, b)
    for r, e in zip(result if isinstance(result, tuple) else [result],
                    expected if isinstance(expected, tuple) else [expected]):
        assert torch.equal(r, e)
    assert all(torch.equal(a, c) for a, c in zip((x, w, b), before))
    assert all(g.reuse is None for g in _groups(compiled)) and _in_place_calls(compiled) == 0


@pytest.mark.parametrize("case", ["broadcast enlarges", "dtype promotes"])
def test_falls_back_to_a_new_tensor_when_the_buffer_does_not_fit(case):
    torch.manual_seed(0)
    x, w = torch.randn(1, 5), torch.randn(5, 6)
    other = torch.randn(4, 6) if case == "broadcast enlarges" else torch.randn(6, dtype=torch.float64)

    def fn(x, w, other):
        return torch.relu(x @ w + other)
    compiled = compile(fn)
    result = compiled(x, w, other)
    assert torch.equal(result, fn(x, w, other)) and result.dtype == fn(x, w, other).dtype
    assert _in_place_calls(compiled) == 0


def test_dead_softmax_gives_its_buffer_to_the_group():
    def fn(x, mask):
        return torch.softmax(x, -1) * mask + 1.0
    compiled = compile(fn)
    x, mask = torch.randn(3, 7, dtype=torch.float64), torch.randn(7, dtype=torch.float64)
    assert torch.equal(compiled(x, mask), fn(x, mask))
    (group,) = _groups(compiled)
    assert group.reuse is not None and not group.reuse.epilogue and group.in_place_calls == 1


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_grad_mode_with_trainable_parameters_never_overwrites(dtype):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 3), nn.Tanh()).to(dtype)
    reference = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 3), nn.Tanh()).to(dtype)
    reference.load_state_dict(model.state_dict())
    compiled = compile(model)
    x = torch.randn(4, 5, dtype=dtype)
    out, expected = compiled(x), reference(x)
    assert torch.equal(out, expected)
    out.sum().backward()
    expected.sum().backward()
    for p, q in zip(model.parameters(), reference.parameters()):
        assert torch.equal(p.grad, q.grad)
    assert _in_place_calls(compiled) == 0


@pytest.mark.parametrize("ahead_of_time_backward", [False, True])
def test_fused_group_under_autograd_keeps_its_saved_inputs(ahead_of_time_backward, monkeypatch):
    from ember_compile import config
    monkeypatch.setattr(config, "ahead_of_time_backward", ahead_of_time_backward)
    torch.manual_seed(0)
    x, w = torch.randn(4, 5, dtype=torch.float64), torch.randn(6, 5, dtype=torch.float64, requires_grad=True)
    b = torch.randn(6, dtype=torch.float64, requires_grad=True)
    compiled = compile(sigmoid_linear)
    out = compiled(x, w, b)
    gw, gb = ember_autograd.grad(out.sum(), [w, b])
    ew, eb = ember_autograd.grad(sigmoid_linear(x, w, b).sum(), [w, b])
    assert torch.equal(gw, ew) and torch.equal(gb, eb)
    assert _in_place_calls(compiled) == 0


def test_the_fusion_log_says_which_groups_run_in_place(capfd):
    compile(relu_linear, options={"trace.fusion": True})(*_operands(torch.float32))
    err = capfd.readouterr().err
    assert "fused_0: in place, epilogue of" in err and "a BLAS product" in err


def test_a_group_of_one_under_autograd_is_the_eager_op(monkeypatch):
    from ember_compile import config
    monkeypatch.setattr(config, "ahead_of_time_backward", False)   # the captured graph, op by op
    x, w, b = torch.randn(4, 5), torch.randn(6, 5, requires_grad=True), torch.randn(6)
    compiled = compile(sigmoid_mm)
    out, expected = compiled(x, w, b), sigmoid_mm(x, w, b)
    assert torch.equal(out, expected) and type(out.grad_fn) is type(expected.grad_fn)
    assert torch.equal(ember_autograd.grad(out.sum(), w)[0], ember_autograd.grad(expected.sum(), w)[0])
    assert _groups(compiled)[0].calls == 0 and _in_place_calls(compiled) == 0


def test_config_switch_turns_planning_off(monkeypatch):
    from ember_compile import config
    monkeypatch.setattr(config, "memory_planning", False)
    compiled = compile(relu_linear)
    args = _operands(torch.float32)
    assert torch.equal(compiled(*args), relu_linear(*args))
    assert [g.reuse for g in _groups(compiled)] == [None] and _in_place_calls(compiled) == 0


def fma_relu(x, y, z):
    return torch.relu(x * y + z)


@pytest.mark.parametrize("planning", [True, False])
def test_a_dropped_result_gives_its_memory_to_the_next_call(planning, monkeypatch):
    # Across calls (`FusedElementwise`'s recycle): a result past malloc's heap would
    # otherwise be fresh memory, faulted in page by page, every call.
    from ember_compile import config
    monkeypatch.setattr(config, "memory_planning", planning)
    torch.manual_seed(0)
    x, y, z = (torch.randn(512, 1024) for _ in range(3))
    compiled = compile(fma_relu)
    first = compiled(x, y, z)
    pointer = first.data_ptr()
    kept = compiled(x, y, z)   # the first is alive: new memory
    assert kept.data_ptr() != pointer
    del kept
    (group,) = _groups(compiled)
    assert group.recycle == planning and len(group.program._spares) == planning
    # The spare holds the memory until a call takes it: malloc cannot have handed it out.
    spare = group.program._spares[0].array.ctypes.data if planning else None
    again = compiled(x, y, z)
    assert again.data_ptr() == spare if planning else again.data_ptr() not in (pointer, None)
    assert torch.equal(again, fma_relu(x, y, z)) and torch.equal(first, again)


def test_a_result_an_autograd_node_saved_keeps_its_memory():
    torch.manual_seed(0)
    x, y, z = (torch.randn(512, 1024) for _ in range(3))
    compiled = compile(fma_relu)
    first = compiled(x, y, z)
    pointer, values = first.data_ptr(), first.clone()
    w = torch.ones(first.shape, requires_grad=True)
    loss = (first * w).sum()   # mul's node saves `first` for w's gradient
    del first
    second = compiled(x, y, z)
    assert second.data_ptr() != pointer and torch.equal(second, values)
    second.fill_(-1.0)
    loss.backward()
    assert torch.equal(w.grad, values)
