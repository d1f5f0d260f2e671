"""The straight-line pieces of guarded traces run compiled (ember_compile.guarded.pieces):
the elementwise chains on either side of a graph break are fused, and a replay gives eager
ember's results and gradients bit for bit."""
import pytest

import ember_autograd
import ember_compile
import ember_tensor as torch
from ember_compile import compile


@pytest.fixture(autouse=True)
def guarded_traces(monkeypatch):
    """The replay is opt-in (config.guarded_traces): these tests switch it on."""
    monkeypatch.setattr(ember_compile.config, "guarded_traces", True)


def _entry(compiled):
    (entry,) = compiled._ember_compiled_function.guarded
    return entry


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
