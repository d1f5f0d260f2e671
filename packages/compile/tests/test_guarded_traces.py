"""Guarded traces: calls with Python control flow on tensor values are replayed from
recorded traces, and never take the wrong branch (see ember_compile.guarded); the
straight-line pieces around a break run compiled (ember_compile.guarded.pieces): their
elementwise chains fused, eager ember's results and gradients bit for bit."""
import math
import warnings

import pytest

import ember_autograd
import ember_compile
import ember_nn as nn
import ember_tensor as torch
from ember_compile import Unsupported, compile, explain


@pytest.fixture(autouse=True)
def guarded_traces(monkeypatch):
    """The replay is opt-in (config.guarded_traces): these tests switch it on."""
    monkeypatch.setattr(ember_compile.config, "guarded_traces", True)


def _entry(compiled):
    (entry,) = compiled._ember_compiled_function.guarded
    return entry


class ThresholdMLP(nn.Module):
    """A small MLP whose forward branches on its loss's value."""

    def __init__(self, threshold):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(4, 8), nn.Linear(8, 1)
        self.threshold = threshold

    def forward(self, x, y):
        loss = ((self.fc2(torch.relu(self.fc1(x))) - y) ** 2).mean()
        if loss > self.threshold:
            loss = loss * 0.5 + self.fc1.weight.abs().sum() * 1e-3
        return loss


def _grads(model):
    return [p.grad.clone() for p in model.parameters()]


def test_both_branches_on_alternate_calls_give_eagers_results_and_gradients():
    torch.manual_seed(0)
    model = ThresholdMLP(threshold=1.0)
    compiled = compile(model)
    x = torch.randn(16, 4)
    small, big = torch.zeros(16, 1), torch.full((16, 1), 3.0)
    for y in (small, big, small, big, big, small):
        model.zero_grad()
        expected = model(x, y)
        expected.backward()
        eager_grads = _grads(model)
        model.zero_grad()
        got = compiled(x, y)
        got.backward()
        assert torch.equal(got, expected)
        assert all(torch.equal(a, b) for a, b in zip(_grads(model), eager_grads))
    (entry,) = compiled._compiled_function.guarded
    assert entry.tree.patterns == 2 and entry.replays == 4 and entry.refusal is None


def test_a_check_that_flips_mid_way_runs_eagerly_once_with_no_double_side_effect():
    runs = []
    w = torch.ones(3, requires_grad=True)

    def f(x, w):
        runs.append(1)  # a Python side effect: happens once per eager run, never on a replay
        h = x * w
        if h.sum() > 0:      # passes for both inputs below
            h = h + 1
            if h.max() > 5:  # flips
                return h * 2
        return h - 1

    cf = compile(f)
    a, b = torch.tensor([1.0, 2.0, 3.0]), torch.tensor([1.0, 2.0, 9.0])
    cf(a, w)
    assert len(runs) == 2  # fx's capture ran the Python code once, then the recording run
    out = cf(a, w)  # replayed
    assert len(runs) == 2 and torch.equal(out, f(a, w))
    runs.clear()
    out = cf(b, w)  # the second check differs: abandoned, one eager (recording) run
    assert len(runs) == 1 and torch.equal(out, (b * w + 1) * 2)
    w.grad = None
    out.sum().backward()  # the abandoned replay's partial graph adds nothing
    assert torch.equal(w.grad, (b * 2))
    assert _entry(cf).tree.patterns == 2 and _entry(cf).abandoned == 1


def test_a_nan_checked_value_fails_the_check_and_runs_eagerly():
    def f(x):
        v = x.sum().item()
        if v > 0:
            return x * 2
        return x * 3

    cf = compile(f)
    assert torch.equal(cf(torch.ones(2)), torch.full((2,), 2.0))
    nan = torch.tensor([math.nan, 1.0])
    for _ in range(2):  # NaN > 0 is False in Python: the eager branch, every time
        out = cf(nan)
        assert out[1].item() == 3.0 and math.isnan(out[0].item())
    entry = _entry(cf)
    assert entry.tree.patterns == 1 and entry.abandoned == 2  # a NaN pattern is never kept
    assert torch.equal(cf(torch.ones(2)), torch.full((2,), 2.0)) and entry.replays == 1


def test_float_checks_compare_exactly():
    def f(x):
        return x * float(x.max())

    cf = compile(f)
    for v in (0.5, 0.5, -0.0, 0.0, 0.5 + 2 ** -40):
        x = torch.tensor([v], dtype=torch.float64)
        assert torch.equal(cf(x), f(x))
    assert _entry(cf).tree.patterns == 4  # 0.5, -0.0, 0.0 and the near-0.5 value differ


@pytest.mark.parametrize("use_item", [True, False])
def test_item_driven_loops_with_varying_trip_counts(use_item):
    def f(x):
        n = 0
        while (x.norm().item() if use_item else x.norm()) > 1:
            x = x / 2
            n += 1
        for _ in range(int(x.abs().max() * 4)):
            x = x + 1
        return x, n

    cf = compile(f)
    for k in (1.0, 10.0, 100.0, 10.0, 1.0, 100.0, 0.1):
        x = torch.full((3,), k)
        got, expected = cf(x), f(x)
        assert torch.equal(got[0], expected[0]) and got[1] == expected[1]
    entry = _entry(cf)
    assert entry.tree.patterns == 4 and entry.replays == 3


def test_a_data_dependent_shape_is_checked():
    def f(x):
        y = x[x > 0]
        if y.shape[0] > 1:
            return y * 2
        return y - 1

    cf = compile(f)
    for x in (torch.tensor([1.0, -1.0, 2.0]), torch.tensor([1.0, -1.0, -2.0]), torch.tensor([3.0, 1.0, 2.0]),
              torch.tensor([1.0, -1.0, 2.0])):
        got = cf(x)
        assert got.shape == f(x).shape and torch.equal(got, f(x))


def test_grad_mode_inside_the_call_and_requires_grad_are_as_eager():
    w = torch.ones(2, requires_grad=True)

    def f(x, w):
        with ember_autograd.no_grad():
            s = (x * w).sum()
        if s > 0:
            return x * w
        return x * w * s

    cf = compile(f)
    for x in (torch.ones(2), -torch.ones(2), torch.ones(2)):
        got, expected = cf(x, w), f(x, w)
        assert got.requires_grad and torch.equal(got, expected)
        assert ember_autograd.is_grad_enabled()
    with ember_autograd.no_grad():
        assert not cf(torch.ones(2), w).requires_grad  # another guard key


@pytest.mark.parametrize("case", ["inplace_parameter", "random"])
def test_refused_recordings_keep_the_whole_call_eager(case):
    torch.manual_seed(1)
    lin = nn.Linear(2, 2)

    def f(x):
        y = lin(x)
        if y.sum() > 0:
            y = y * 2
        if case == "inplace_parameter":
            with ember_autograd.no_grad():
                lin.bias.add_(1.0)
        else:
            y = y + torch.randn(2)
        return y

    cf = compile(f)
    bias = lin.bias.detach().clone()
    x = torch.ones(2)
    torch.manual_seed(5)
    cf(x)
    cf(x)
    entry = _entry(cf)
    assert entry.refusal is not None and entry.tree.root is None
    assert ("in-place" if case == "inplace_parameter" else "random") in entry.refusal
    if case == "inplace_parameter":
        assert torch.equal(lin.bias, bias + 2.0)  # once per call, never twice
    else:
        torch.manual_seed(5)
        expected = f(x)
        torch.manual_seed(5)
        assert torch.equal(cf(x), expected)


def test_a_factory_tensor_is_refused_rather_than_frozen():
    def f(x):
        acc = torch.zeros(2)
        if x.sum() > 0:
            acc = acc + x
        return acc

    cf = compile(f)
    assert torch.equal(cf(torch.ones(2)), torch.ones(2))
    assert "factory" in _entry(cf).refusal
    assert torch.equal(cf(-torch.ones(2)), torch.zeros(2))


def test_fullgraph_still_raises():
    def f(x):
        return x + 1 if x.sum() > 0 else x - 1

    with pytest.raises(Unsupported, match="data-dependent control flow"):
        compile(f, fullgraph=True)(torch.ones(2))


def test_the_number_of_patterns_is_limited(monkeypatch):
    monkeypatch.setattr(ember_compile.config, "cache_size_limit", 2)

    def f(x):
        return x * int(x.sum())

    cf = compile(f)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for v in (1.0, 2.0, 3.0, 4.0, 1.0):
            x = torch.full((1,), v)
            assert torch.equal(cf(x), f(x))
    assert _entry(cf).tree.patterns == 2 and _entry(cf).replays == 1
    assert sum("cache_size_limit" in str(w.message) for w in caught) == 1


def test_switched_off_the_call_runs_eagerly(monkeypatch):
    monkeypatch.setattr(ember_compile.config, "guarded_traces", False)
    cf = compile(lambda x: x + 1 if x.sum() > 0 else x - 1)
    assert torch.equal(cf(torch.ones(1)), torch.full((1,), 2.0))
    assert cf._ember_compiled_function.guarded == [] and len(cf._ember_compiled_function.breaks) == 1


def test_explain_counts_pieces_and_checks_as_pytorch():
    def f(x):
        if x.sum() > 0:
            return x + 1
        return x - 1

    out = explain(f)(torch.ones(3))
    assert (out.graph_count, out.graph_break_count) == (2, 1)
    assert "Tensor.__bool__" in out.break_reasons[0].reason
    torch_ = pytest.importorskip("torch")
    theirs = torch_._dynamo.explain(f)(torch_.ones(3))
    assert (theirs.graph_count, theirs.graph_break_count) == (out.graph_count, out.graph_break_count)


def test_a_module_with_a_hook_runs_eagerly_so_the_hook_runs_every_call():
    torch.manual_seed(0)
    model = ThresholdMLP(threshold=1.0)
    compiled = compile(model)
    x, y = torch.randn(4, 4), torch.zeros(4, 1)
    compiled(x, y)
    compiled(x, y)
    seen = []
    handle = model.fc1.register_forward_hook(lambda m, i, o: seen.append(1))
    compiled(x, y)
    compiled(x, y)
    assert len(seen) == 2
    handle.remove()
    (entry,) = compiled._compiled_function.guarded
    before = entry.replays
    compiled(x, y)
    assert entry.replays == before + 1


# --- the compiled pieces around a break ------------------------------------------------

def _nodes(entry):
    found, stack = [], [entry.tree.root]
    while stack:
        node = stack.pop()
        found.append(node)
        stack.extend(node.children.values())
    return found


def _fused_calls(entry):
    return sum(group.calls for node in _nodes(entry) if hasattr(node.piece, "groups")
               for group in node.piece.groups)


def _break_in_the_middle(x, w):
    h = torch.relu(x * w + 0.5) - 0.25       # a chain before the break
    if (h + x).sum() > 0:                     # the break: Python reads a tensor's value
        return torch.sigmoid(h * 2.0 - 1.0)   # a chain after it
    return torch.tanh(h * 3.0) + 1.0


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_both_sides_of_a_break_run_fused_with_eagers_results_and_gradients(dtype):
    torch.manual_seed(0)
    w = torch.randn(64, dtype=dtype, requires_grad=True)
    compiled = compile(_break_in_the_middle)
    inputs = [torch.randn(64, dtype=dtype) + shift for shift in (3.0, -3.0, 3.0, -3.0, 3.0)]
    for x in inputs:
        expected = _break_in_the_middle(x, w)
        (eager_grad,) = ember_autograd.grad(expected.sum(), [w])
        got = compiled(x, w)
        (got_grad,) = ember_autograd.grad(got.sum(), [w])
        assert torch.equal(got, expected) and torch.equal(got_grad, eager_grad)
    entry = _entry(compiled)
    assert entry.tree.patterns == 2 and entry.replays == 3 and entry.abandoned == 1
    pieces = [node.piece for node in _nodes(entry)]
    assert len(pieces) == 3 and all(hasattr(p, "groups") for p in pieces)  # before the break, both branches
    assert _fused_calls(entry) >= 4  # each replay ran a fused group on both sides of the break


def test_without_grad_the_pieces_run_fused_too():
    compiled = compile(_break_in_the_middle)
    w = torch.randn(32)
    with ember_autograd.no_grad():
        for shift in (2.0, 2.0, 2.0):
            x = torch.randn(32) + shift
            assert torch.equal(compiled(x, w), _break_in_the_middle(x, w))
    entry = _entry(compiled)
    assert entry.replays == 2 and _fused_calls(entry) >= 4


def test_a_value_a_later_pattern_reads_is_kept_when_the_tree_grows():
    # The first pattern reads nothing of `a` after the break, so the first piece fuses it
    # away; the second pattern reads it: the piece is compiled again, keeping `a`.
    def f(x):
        a = x * 2.0 + 1.0
        b = torch.relu(a * 3.0)
        if b.sum() > 10:
            return b + 1.0
        return a - 1.0

    compiled = compile(f)
    big, small = torch.full((4,), 5.0), torch.full((4,), -5.0)
    for x in (big, big, small, small, big, small):
        assert torch.equal(compiled(x), f(x))
    entry = _entry(compiled)
    assert entry.tree.patterns == 2 and entry.abandoned == 1 and entry.replays == 4


def test_a_data_dependent_shape_inside_a_compiled_piece_abandons_the_replay():
    def f(x):
        y = x[(x * 2.0 + 1.0) > 0] * 3.0 - 1.0
        if y.sum() > 0:
            return torch.exp(y * 0.5 + 1.0)
        return y

    compiled = compile(f)
    for x in (torch.tensor([1.0, -1.0, 2.0]), torch.tensor([1.0, -1.0, 2.0]), torch.tensor([1.0, 3.0, 2.0]),
              torch.tensor([1.0, -1.0, 2.0])):
        got, expected = compiled(x), f(x)
        assert got.shape == expected.shape and torch.equal(got, expected)
    entry = _entry(compiled)
    assert entry.abandoned >= 1 and entry.replays >= 2


def test_a_piece_that_switches_grad_mode_or_fuses_nothing_replays_its_ops():
    w = torch.ones(3, requires_grad=True)

    def switches(x, w):
        with ember_autograd.no_grad():
            s = (x * w + 1.0).sum()
        h = x * w * 2.0
        if s > 0:
            return h + s
        return h - s

    def nothing_to_fuse(x, w):
        s = (x @ w).sum()
        if s > 0:
            return x.sum() * s
        return x.mean()

    for f in (switches, nothing_to_fuse):
        compiled = compile(f)
        for x in (torch.ones(3), torch.ones(3), -torch.ones(3), -torch.ones(3)):
            got, expected = compiled(x, w), f(x, w)
            assert torch.equal(got, expected) and got.requires_grad == expected.requires_grad
        entry = _entry(compiled)
        assert entry.replays == 2 and entry.tree.root.piece is None


def test_a_piece_that_cannot_compile_replays_its_ops(monkeypatch):
    from ember_compile.guarded import traces

    def failing(steps, read_later):
        raise RuntimeError("no graph for these steps")
    monkeypatch.setattr(traces, "compile_piece", failing)
    compiled = compile(_break_in_the_middle)
    w = torch.randn(16)
    for x in (torch.ones(16), torch.ones(16), torch.ones(16)):
        assert torch.equal(compiled(x, w), _break_in_the_middle(x, w))
    entry = _entry(compiled)
    assert entry.replays == 2 and entry.abandoned == 0 and entry.tree.root.piece is None
