"""The fused recurrent layers (LSTM, GRU, RNN tanh/relu) against PyTorch and against
ember's own composition of ops: outputs, final states, and the gradients of the input,
the initial states and every weight and bias, over layers, directions, batch_first,
sequence length 1, batch 1, float32/float64, with and without initial states; plus one
autograd node per layer call, the fallbacks (packed sequences, proj_size) and double
backward through the composition."""
import numpy as np
import pytest

import ember_autograd
import ember_nn as nn
import ember_tensor as et
from ember_nn.modules import _recurrence

torch = pytest.importorskip("torch")
TOL = {np.float32: 5e-5, np.float64: 1e-10}

# (mode, num_layers, bidirectional, batch_first, T, N, dtype, with initial state, bias)
CASES = [
    ("LSTM", 1, False, False, 5, 3, np.float64, False, True),
    ("LSTM", 2, True, True, 4, 2, np.float64, True, True),
    ("LSTM", 2, False, True, 1, 1, np.float32, True, True),
    ("LSTM", 1, True, False, 3, 1, np.float32, False, True),
    ("LSTM", 2, True, False, 6, 3, np.float32, True, False),
    ("GRU", 2, True, True, 4, 3, np.float64, True, True),
    ("GRU", 1, False, False, 1, 2, np.float32, False, False),
    ("RNN_TANH", 2, True, False, 4, 2, np.float64, True, True),
    ("RNN_RELU", 1, False, True, 5, 3, np.float32, True, True),
]
SIZES = (3, 4)  # input, hidden


def _modules(mode, layers, bidirectional, batch_first, bias, dtype, **extra):
    kwargs = dict(num_layers=layers, bidirectional=bidirectional, batch_first=batch_first, bias=bias, **extra)
    if mode.startswith("RNN"):
        kwargs["nonlinearity"] = "tanh" if mode == "RNN_TANH" else "relu"
    name = {"LSTM": "LSTM", "GRU": "GRU"}.get(mode, "RNN")
    ours = getattr(nn, name)(*SIZES, **kwargs)
    theirs = getattr(torch.nn, name)(*SIZES, **kwargs)
    if dtype == np.float64:
        ours, theirs = ours.double(), theirs.double()
    with torch.no_grad():
        for (name, p), q in zip(ours.named_parameters(), theirs.parameters()):
            q.copy_(torch.from_numpy(p.detach().numpy().copy()))
    return ours, theirs


def _inputs(mode, layers, bidirectional, batch_first, steps, batch, dtype, with_state, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, steps, SIZES[0]) if batch_first else (steps, batch, SIZES[0])).astype(dtype)
    state_shape = (layers * (2 if bidirectional else 1), batch, SIZES[1])
    states = [rng.standard_normal(state_shape).astype(dtype) for _ in range(2 if mode == "LSTM" else 1)]
    return x, (states if with_state else None)


def _run(lib, module, x, states):
    """Forward, then backward of a random weighting of every result; returns the results
    and the gradients of x, the initial states and every parameter, as NumPy arrays."""
    leaf = (lambda a: et.tensor(a, requires_grad=True)) if lib is et else \
        (lambda a: torch.tensor(a, requires_grad=True))
    xt = leaf(x)
    st = None if states is None else [leaf(s) for s in states]
    hx = None if st is None else (tuple(st) if len(st) == 2 else st[0])
    out, h = module(xt, hx)
    results = [out] + (list(h) if isinstance(h, tuple) else [h])
    rng = np.random.default_rng(1)
    loss = sum((r * lib.tensor(rng.standard_normal(tuple(r.shape)).astype(x.dtype))).sum() for r in results)
    loss.backward()
    grads = [xt.grad] + ([] if st is None else [s.grad for s in st]) + [p.grad for p in module.parameters()]
    return [r.detach().numpy() for r in results], [g.detach().numpy() for g in grads]


def _assert_all_close(got, expected, tol):
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=tol, atol=tol)


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(map(str, (c[0], c[1], c[2], c[3], c[4], c[5],
                                                                          np.dtype(c[6]).name, c[7], c[8]))))
def test_values_and_every_gradient_match_pytorch(case):
    mode, layers, bidirectional, batch_first, steps, batch, dtype, with_state, bias = case
    ours, theirs = _modules(mode, layers, bidirectional, batch_first, bias, dtype)
    x, states = _inputs(mode, layers, bidirectional, batch_first, steps, batch, dtype, with_state)
    got, got_grads = _run(et, ours, x, states)
    expected, expected_grads = _run(torch, theirs, x, states)
    _assert_all_close(got, expected, TOL[dtype])
    _assert_all_close(got_grads, expected_grads, TOL[dtype])


@pytest.mark.parametrize("case", [CASES[1], CASES[5], CASES[7]], ids=["LSTM", "GRU", "RNN"])
def test_fused_equals_the_composition(case, monkeypatch):
    mode, layers, bidirectional, batch_first, steps, batch, dtype, with_state, bias = case
    ours, _ = _modules(mode, layers, bidirectional, batch_first, bias, dtype)
    x, states = _inputs(mode, layers, bidirectional, batch_first, steps, batch, dtype, with_state)
    fused, fused_grads = _run(et, ours, x, states)
    ours.zero_grad()
    monkeypatch.setattr(_recurrence, "can_fuse", lambda *args: False)
    composed, composed_grads = _run(et, ours, x, states)
    _assert_all_close(fused, composed, 1e-12)
    _assert_all_close(fused_grads, composed_grads, 1e-12)


def test_one_autograd_node_per_layer_and_direction():
    lstm = nn.LSTM(3, 4, num_layers=2)
    out, (h, c) = lstm(et.randn(5, 2, 3, requires_grad=True))
    assert type(out.grad_fn).__name__ == "_LSTMLayerBackward"
    below = [e[0] for e in out.grad_fn.next_functions if e[0] is not None]
    # Layer 2 reads layer 1's output (a node of the same kind) and its own h0/c0 selections.
    assert any(type(n).__name__ == "_LSTMLayerBackward" for n in below)


def test_unbatched_input_and_no_grad_use_the_fused_layer():
    ours, theirs = _modules("LSTM", 1, True, False, True, np.float64)
    x = np.random.default_rng(2).standard_normal((4, 3))
    with ember_autograd.no_grad():
        out, (h, c) = ours(et.tensor(x))
    t_out, (t_h, t_c) = theirs(torch.tensor(x))
    for a, b in ((out, t_out), (h, t_h), (c, t_c)):
        np.testing.assert_allclose(a.numpy(), b.detach().numpy(), rtol=1e-10, atol=1e-10)


def test_dropout_between_layers_runs_on_the_fused_path():
    ours, theirs = _modules("LSTM", 2, False, False, True, np.float64, dropout=0.5)
    x = np.random.default_rng(3).standard_normal((3, 2, 3))
    ours.eval(), theirs.eval()    # dropout off: PyTorch's values
    np.testing.assert_allclose(ours(et.tensor(x))[0].detach().numpy(), theirs(torch.tensor(x))[0].detach().numpy(),
                               rtol=1e-10, atol=1e-10)
    ours.train()
    out, _ = ours(et.tensor(x))
    out.sum().backward()
    assert all(np.isfinite(p.grad.numpy()).all() for p in ours.parameters())


def test_packed_sequences_and_projections_fall_back_to_the_composition():
    from ember_nn.utils.rnn import pack_padded_sequence
    ours, theirs = _modules("LSTM", 1, False, False, True, np.float64, proj_size=2)
    x = np.random.default_rng(4).standard_normal((4, 2, 3))
    got, expected = ours(et.tensor(x))[0], theirs(torch.tensor(x))[0]
    np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy(), rtol=1e-10, atol=1e-10)
    lstm = nn.LSTM(3, 4).double()
    packed = pack_padded_sequence(et.tensor(x), et.tensor([4, 2]))
    out, (h, _) = lstm(packed)
    alone, (h_alone, _) = lstm(et.tensor(x[:2, 1:]))
    np.testing.assert_allclose(h[0, 1].detach().numpy(), h_alone[0, 0].detach().numpy(), rtol=1e-12)


@pytest.mark.parametrize("mode", ["LSTM", "GRU", "RNN_TANH"])
def test_double_backward_goes_through_the_composition(mode):
    ours, theirs = _modules(mode, 1, True, False, True, np.float64)
    x = np.random.default_rng(5).standard_normal((3, 2, 3))
    results = []
    for lib, module in ((et, ours), (torch, theirs)):
        xt = lib.tensor(x, requires_grad=True)
        out, _ = module(xt)
        autograd = ember_autograd if lib is et else torch.autograd
        (gx,) = autograd.grad((out * out).sum(), xt, create_graph=True)
        (gx * gx).sum().backward()
        results.append([gx.detach().numpy(), xt.grad.numpy()] + [p.grad.numpy() for p in module.parameters()])
    _assert_all_close(results[0], results[1], 1e-9)


@pytest.mark.parametrize("kind", ["LSTMCell", "GRUCell", "RNNCell"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_cells_run_the_fused_one_step_layer_and_match_pytorch(kind, dtype):
    """A cell is a layer over one step: one fused node, PyTorch's values and gradients."""
    rng = np.random.default_rng(3)
    torch.manual_seed(0)
    theirs = getattr(torch.nn, kind)(3, 5).to(getattr(torch, dtype))
    ours = getattr(nn, kind)(3, 5).to(getattr(et, dtype))
    ours.load_state_dict({k: et.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    arrays = [rng.standard_normal(shape) for shape in ((4, 3), (4, 5), (4, 5))]
    t_in = [torch.tensor(a, dtype=getattr(torch, dtype), requires_grad=True) for a in arrays]
    e_in = [et.tensor(a, dtype=getattr(et, dtype), requires_grad=True) for a in arrays]
    if kind == "LSTMCell":
        t_out, e_out = theirs(t_in[0], (t_in[1], t_in[2])), ours(e_in[0], (e_in[1], e_in[2]))
        t_loss, e_loss = t_out[0].sum() * 2 + t_out[1].pow(2).sum(), e_out[0].sum() * 2 + e_out[1].pow(2).sum()
        node = e_out[0].grad_fn
    else:
        t_out, e_out = theirs(t_in[0], t_in[1]), ours(e_in[0], e_in[1])
        t_loss, e_loss = t_out.pow(2).sum(), e_out.pow(2).sum()
        node = e_out.grad_fn
        t_in, e_in = t_in[:2], e_in[:2]
    assert "Layer" in node.name()  # the fused layer's node, not a composition
    t_loss.backward()
    e_loss.backward()
    tol = 1e-5 if dtype == "float32" else 1e-10
    np.testing.assert_allclose(e_loss.item(), t_loss.item(), rtol=tol)
    for ours_t, theirs_t in zip(e_in + list(ours.parameters()), t_in + list(theirs.parameters())):
        np.testing.assert_allclose(ours_t.grad.numpy(), theirs_t.grad.numpy(), rtol=tol, atol=tol)
