"""Sequence layers: Embedding/EmbeddingBag, RNN/LSTM/GRU (+cells), packing utilities,
attention and transformers — against NumPy references, PyTorch's parameter names, and
gradient checks; PyTorch itself as an optional oracle."""
import numpy as np
import pytest

import ember_autograd
import ember_nn as nn
import ember_nn.functional as F
import ember_tensor as et
from ember_nn.utils.rnn import (
    pack_padded_sequence, pack_sequence, pad_packed_sequence, pad_sequence, unpack_sequence,
)


def _np(t):
    return t.detach().numpy()


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def numpy_lstm(x, params, hidden, layer=0, suffix=""):
    """One direction of one LSTM layer, step by step (x: (L, N, I))."""
    w_ih, w_hh = params[f"weight_ih_l{layer}{suffix}"], params[f"weight_hh_l{layer}{suffix}"]
    b = params[f"bias_ih_l{layer}{suffix}"] + params[f"bias_hh_l{layer}{suffix}"]
    h = np.zeros((x.shape[1], hidden))
    c = np.zeros_like(h)
    steps = range(x.shape[0] - 1, -1, -1) if suffix else range(x.shape[0])
    out = np.zeros((x.shape[0], x.shape[1], hidden))
    for t in steps:
        gates = x[t] @ w_ih.T + h @ w_hh.T + b
        i, f, g, o = np.split(gates, 4, axis=1)
        c = _sigmoid(f) * c + _sigmoid(i) * np.tanh(g)
        h = _sigmoid(o) * np.tanh(c)
        out[t] = h
    return out, h, c


def numpy_gru(x, params, hidden):
    w_ih, w_hh, b_ih, b_hh = (params[k] for k in ("weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"))
    h = np.zeros((x.shape[1], hidden))
    out = []
    for t in range(x.shape[0]):
        xr, xz, xn = np.split(x[t] @ w_ih.T + b_ih, 3, axis=1)
        hr, hz, hn = np.split(h @ w_hh.T + b_hh, 3, axis=1)
        r, z = _sigmoid(xr + hr), _sigmoid(xz + hz)
        n = np.tanh(xn + r * hn)
        h = (1 - z) * n + z * h
        out.append(h)
    return np.stack(out), h


def _params(module):
    return {k: _np(v).astype(np.float64) for k, v in module.state_dict().items()}


def test_lstm_matches_numpy_step_by_step_both_directions():
    et.manual_seed(0)
    lstm = nn.LSTM(3, 4, bidirectional=True).double()
    x = np.random.default_rng(0).standard_normal((5, 2, 3))
    out, (h, c) = lstm(et.from_numpy(x))
    p = _params(lstm)
    fwd, hf, cf = numpy_lstm(x, p, 4)
    bwd, hb, cb = numpy_lstm(x, p, 4, suffix="_reverse")
    np.testing.assert_allclose(_np(out), np.concatenate([fwd, bwd], axis=2), rtol=1e-10)
    np.testing.assert_allclose(_np(h), np.stack([hf, hb]), rtol=1e-10)
    np.testing.assert_allclose(_np(c), np.stack([cf, cb]), rtol=1e-10)


def test_gru_matches_numpy_and_batch_first_and_unbatched():
    et.manual_seed(1)
    gru = nn.GRU(3, 4).double()
    x = np.random.default_rng(1).standard_normal((5, 2, 3))
    out, h = gru(et.from_numpy(x))
    ref_out, ref_h = numpy_gru(x, _params(gru), 4)
    np.testing.assert_allclose(_np(out), ref_out, rtol=1e-10)
    np.testing.assert_allclose(_np(h)[0], ref_h, rtol=1e-10)
    gru.batch_first = True
    out_bf, _ = gru(et.from_numpy(x.transpose(1, 0, 2).copy()))
    np.testing.assert_allclose(_np(out_bf).transpose(1, 0, 2), ref_out, rtol=1e-10)
    gru.batch_first = False
    out_1, h_1 = gru(et.from_numpy(x[:, 0]))  # unbatched (L, H_in)
    np.testing.assert_allclose(_np(out_1), ref_out[:, 0], rtol=1e-10)
    assert h_1.shape == (1, 4)


def test_parameter_names_and_shapes_match_pytorch():
    lstm = nn.LSTM(10, 20, num_layers=2, bidirectional=True, proj_size=5)
    shapes = {k: tuple(v.shape) for k, v in lstm.state_dict().items()}
    assert list(shapes)[:5] == ["weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0", "weight_hr_l0"]
    assert shapes["weight_ih_l1_reverse"] == (80, 10) and shapes["weight_hh_l0"] == (80, 5)
    assert shapes["weight_hr_l1_reverse"] == (5, 20)
    assert list(nn.GRUCell(3, 4).state_dict()) == ["weight_ih", "weight_hh", "bias_ih", "bias_hh"]
    bound = 1 / np.sqrt(20)
    assert all(np.abs(_np(p)).max() <= bound for p in lstm.parameters())
    assert repr(nn.LSTM(10, 20, num_layers=2, batch_first=True)) == "LSTM(10, 20, num_layers=2, batch_first=True)"


def test_constructor_and_hidden_state_errors_are_pytorchs():
    with pytest.raises(ValueError, match="proj_size has to be smaller than hidden_size"):
        nn.LSTM(3, 4, proj_size=4)
    with pytest.raises(ValueError, match="proj_size argument is only supported for LSTM"):
        nn.GRU(3, 4, proj_size=2)
    with pytest.raises(ValueError, match="Unknown nonlinearity 'sigmoid'"):
        nn.RNN(3, 4, nonlinearity="sigmoid")
    with pytest.raises(RuntimeError, match=r"Expected hidden size \(1, 2, 4\), got \(1, 3, 4\)"):
        nn.GRU(3, 4)(et.zeros(5, 2, 3), et.zeros(1, 3, 4))


def test_lstm_proj_size_shapes():
    out, (h, c) = nn.LSTM(3, 6, proj_size=2, num_layers=2)(et.randn(4, 5, 3))
    assert out.shape == (4, 5, 2) and h.shape == (2, 5, 2) and c.shape == (2, 5, 6)


def test_packed_input_equals_each_sequence_run_alone():
    et.manual_seed(2)
    lstm = nn.LSTM(3, 4, num_layers=2, bidirectional=True).double()
    rng = np.random.default_rng(2)
    sequences = [et.from_numpy(rng.standard_normal((n, 3))) for n in (3, 5, 2)]
    packed = pack_sequence(sequences, enforce_sorted=False)
    out, (h, _) = lstm(packed)
    padded, lengths = pad_packed_sequence(out)
    assert lengths.tolist() == [3, 5, 2]
    for i, seq in enumerate(sequences):
        alone, (h_alone, _) = lstm(seq.unsqueeze(1))
        np.testing.assert_allclose(_np(padded[:len(seq), i]), _np(alone[:, 0]), rtol=1e-10)
        np.testing.assert_allclose(_np(h[:, i]), _np(h_alone[:, 0]), rtol=1e-10)
        assert np.all(_np(padded[len(seq):, i]) == 0)


def test_packing_utilities_round_trip_and_errors():
    a, b = et.tensor([1.0, 2.0, 3.0]), et.tensor([4.0])
    padded = pad_sequence([a, b], batch_first=True, padding_value=-1)
    assert padded.tolist() == [[1.0, 2.0, 3.0], [4.0, -1.0, -1.0]]
    packed = pack_padded_sequence(padded, [3, 1], batch_first=True)
    assert packed.data.tolist() == [1.0, 4.0, 2.0, 3.0] and packed.batch_sizes.tolist() == [2, 1, 1]
    assert [s.tolist() for s in unpack_sequence(packed)] == [[1.0, 2.0, 3.0], [4.0]]
    with pytest.raises(RuntimeError, match="must be sorted in decreasing order"):
        pack_padded_sequence(padded, [1, 3], batch_first=True)
    again, lengths = pad_packed_sequence(packed, batch_first=True, total_length=4)
    assert again.shape == (2, 4) and lengths.tolist() == [3, 1]


def test_cells_match_one_step_of_the_layers():
    et.manual_seed(3)
    cell, layer = nn.LSTMCell(3, 4).double(), nn.LSTM(3, 4).double()
    layer.load_state_dict({f"{k}_l0": v for k, v in cell.state_dict().items()})
    x = et.randn(2, 3, dtype=et.float64)
    h, c = cell(x)
    out, (h2, c2) = layer(x.unsqueeze(0))
    np.testing.assert_allclose(_np(h), _np(h2[0]), rtol=1e-12)
    np.testing.assert_allclose(_np(c), _np(c2[0]), rtol=1e-12)
    assert nn.RNNCell(3, 4, nonlinearity="relu")(et.randn(3)).min().item() >= 0


def test_recurrent_layers_pass_gradcheck():
    et.manual_seed(4)
    gru = nn.GRU(2, 3, bidirectional=True).double()
    x = et.randn(3, 2, 2, dtype=et.float64, requires_grad=True)
    assert ember_autograd.gradcheck(lambda inp: gru(inp)[0], (x,), eps=1e-6, atol=1e-5)
    lstm = nn.LSTM(2, 3).double()
    assert ember_autograd.gradcheck(lambda inp: lstm(inp)[1][1], (x,), eps=1e-6, atol=1e-5)


def test_embedding_padding_idx_from_pretrained_and_max_norm():
    emb = nn.Embedding(5, 3, padding_idx=1)
    assert emb.weight[1].tolist() == [0.0, 0.0, 0.0]
    out = emb(et.tensor([[1, 2], [4, 1]]))
    out.backward(et.ones_like(out))
    assert emb.weight.grad[1].tolist() == [0.0, 0.0, 0.0] and emb.weight.grad[4].tolist() == [1.0, 1.0, 1.0]
    frozen = nn.Embedding.from_pretrained(et.tensor([[1.0, 2.0], [3.0, 4.0]]))
    assert not frozen.weight.requires_grad and frozen(et.tensor([1])).tolist() == [[3.0, 4.0]]
    assert repr(nn.Embedding(10, 3, padding_idx=0)) == "Embedding(10, 3, padding_idx=0)"


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_matches_numpy(mode):
    weight = np.random.default_rng(5).standard_normal((10, 3))
    bag = nn.EmbeddingBag.from_pretrained(et.from_numpy(weight), mode=mode, freeze=False, padding_idx=0)
    indices = np.array([1, 2, 0, 4, 5, 4, 7])
    offsets = np.array([0, 3, 3, 6])       # bag 1 is empty; 0 is padding
    got = bag(et.from_numpy(indices), et.from_numpy(offsets))
    reduce = {"sum": np.sum, "mean": np.mean, "max": np.max}[mode]
    ends = list(offsets[1:]) + [len(indices)]
    expected = []
    for start, end in zip(offsets, ends):
        rows = [weight[i] for i in indices[start:end] if i != 0]
        expected.append(reduce(rows, axis=0) if rows else np.zeros(3))
    np.testing.assert_allclose(_np(got), np.array(expected), rtol=1e-12)
    got.backward(et.ones_like(got))
    assert bag.weight.grad[0].tolist() == [0.0, 0.0, 0.0]


def test_embedding_bag_2d_input_and_per_sample_weights():
    weight = et.arange(12.0).reshape(4, 3)
    out = F.embedding_bag(et.tensor([[0, 1], [2, 3]]), weight, mode="sum",
                          per_sample_weights=et.tensor([[1.0, 2.0], [0.5, 0.0]]))
    assert out.tolist() == [[6.0, 9.0, 12.0], [3.0, 3.5, 4.0]]
    with pytest.raises(NotImplementedError, match="per_sample_weights is only supported for mode='sum'"):
        F.embedding_bag(et.tensor([[0, 1]]), weight, mode="mean", per_sample_weights=et.ones(1, 2))


def _numpy_attention(q, k, v, mask=None):
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    return weights @ v


def test_scaled_dot_product_attention_masks_and_causal():
    rng = np.random.default_rng(6)
    q, k, v = (rng.standard_normal((2, 3, 4, 5)) for _ in range(3))
    got = F.scaled_dot_product_attention(*(et.from_numpy(a) for a in (q, k, v)), is_causal=True)
    np.testing.assert_allclose(_np(got), _numpy_attention(q, k, v, np.tril(np.ones((4, 4), bool))), rtol=1e-10)
    mask = rng.random((4, 4)) > 0.3
    mask[:, 0] = True
    got = F.scaled_dot_product_attention(*(et.from_numpy(a) for a in (q, k, v)), attn_mask=et.from_numpy(mask))
    np.testing.assert_allclose(_np(got), _numpy_attention(q, k, v, mask), rtol=1e-10)


def test_multihead_attention_matches_numpy_with_padding_mask():
    et.manual_seed(7)
    mha = nn.MultiheadAttention(4, 2).double()
    rng = np.random.default_rng(7)
    query, key = rng.standard_normal((3, 2, 4)), rng.standard_normal((5, 2, 4))
    padding = np.array([[False] * 4 + [True], [False] * 5])
    out, weights = mha(et.from_numpy(query), et.from_numpy(key), et.from_numpy(key),
                       key_padding_mask=et.from_numpy(padding))
    p = _params(mha)
    wq, wk, wv = np.split(p["in_proj_weight"], 3)
    bq, bk, bv = np.split(p["in_proj_bias"], 3)
    expected = np.zeros((3, 2, 4))
    for n in range(2):
        heads = []
        for h in range(2):
            cols = slice(2 * h, 2 * h + 2)
            qh = (query[:, n] @ wq.T + bq)[:, cols]
            kh = (key[:, n] @ wk.T + bk)[:, cols]
            vh = (key[:, n] @ wv.T + bv)[:, cols]
            heads.append(_numpy_attention(qh, kh, vh, ~padding[n][None, :].repeat(3, 0)))
        expected[:, n] = np.concatenate(heads, axis=1) @ p["out_proj.weight"].T + p["out_proj.bias"]
    np.testing.assert_allclose(_np(out), expected, rtol=1e-10)
    assert weights.shape == (2, 3, 5) and np.allclose(_np(weights)[0, :, 4], 0)


def test_multihead_attention_options_keep_shapes():
    mha = nn.MultiheadAttention(6, 3, kdim=4, vdim=5, add_bias_kv=True, add_zero_attn=True, batch_first=True)
    out, weights = mha(et.randn(2, 3, 6), et.randn(2, 7, 4), et.randn(2, 7, 5), average_attn_weights=False)
    assert out.shape == (2, 3, 6) and weights.shape == (2, 3, 3, 9)
    assert "q_proj_weight" in mha.state_dict() and "in_proj_weight" not in mha.state_dict()


def test_transformer_shapes_masks_and_norm_first():
    model = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=1, dim_feedforward=16,
                           dropout=0.0, batch_first=True, norm_first=True)
    mask = nn.Transformer.generate_square_subsequent_mask(4)
    assert mask[0, 1].item() == float("-inf") and mask[1, 0].item() == 0.0
    out = model(et.randn(2, 5, 8), et.randn(2, 4, 8), tgt_mask=mask)
    assert out.shape == (2, 4, 8)
    keys = list(model.state_dict())
    assert "encoder.layers.1.self_attn.in_proj_weight" in keys and "decoder.layers.0.multihead_attn.out_proj.bias" in keys
    assert "encoder.norm.weight" in keys


def test_against_pytorch_when_installed():
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    pairs = [(torch.nn.LSTM(5, 7, num_layers=2, bidirectional=True, batch_first=True),
              nn.LSTM(5, 7, num_layers=2, bidirectional=True, batch_first=True)),
             (torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True),
              nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True))]
    x = np.random.default_rng(0).standard_normal((3, 4, 8)).astype(np.float32)
    for theirs, ours in pairs:
        assert list(theirs.state_dict()) == list(ours.state_dict())
        ours.load_state_dict({k: et.from_numpy(v.detach().numpy().copy()) for k, v in theirs.state_dict().items()})
        xi = x[..., :5] if isinstance(ours, nn.LSTM) else x
        want = theirs(torch.from_numpy(xi.copy()))
        got = ours(et.from_numpy(xi.copy()))
        want, got = (want[0], got[0]) if isinstance(want, tuple) else (want, got)
        np.testing.assert_allclose(_np(got), want.detach().numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("sharing", ["self", "key_is_value", "separate"])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("batch_first", [False, True])
def test_multihead_attention_projections_and_gradients_equal_pytorchs(sharing, bias, batch_first):
    # Self-attention projects q, k, v with one GEMM of the packed weight, key-is-value
    # attention k and v with one (batch_first too: its transposes keep shared inputs one
    # object): outputs and gradients as PyTorch's, in float64.
    torch = pytest.importorskip("torch")
    torch.manual_seed(1)
    theirs = torch.nn.MultiheadAttention(8, 2, bias=bias, batch_first=batch_first).double()
    ours = nn.MultiheadAttention(8, 2, bias=bias, batch_first=batch_first).double()
    ours.load_state_dict({k: et.from_numpy(v.detach().numpy().copy()) for k, v in theirs.state_dict().items()})
    rng = np.random.default_rng(2)
    q, kv, v = (rng.standard_normal((3, n, 8) if batch_first else (n, 3, 8)) for n in (4, 5, 5))
    results = []
    for lib, module in ((torch, theirs), (et, ours)):
        query = lib.tensor(q, requires_grad=True)
        key = query if sharing == "self" else lib.tensor(kv, requires_grad=True)
        value = key if sharing != "separate" else lib.tensor(v, requires_grad=True)
        out, weights = module(query, key, value)
        (out.sum() + (weights * weights).sum()).backward()
        grads = [p.grad.numpy() for p in module.parameters()] + [query.grad.numpy()]
        results.append([out.detach().numpy(), weights.detach().numpy()] + grads)
    for want, got in zip(*results):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    if sharing == "self":  # one packed in-projection (and the out-projection): two GEMM nodes
        query = et.tensor(q, requires_grad=True)
        assert _node_names(ours(query, query, query)[0]).count("LinearBackward0") == 2


def _node_names(t):
    """Names of the backward nodes reachable from `t`, each node once."""
    seen, stack = set(), [t.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        stack.extend(edge[0] for edge in node.next_functions)
    return [node.name() for node in seen]


# (module options, forward options) of the attention paths that reshape masks and keys:
# every mask kind, the extra key/value rows, unbatched input; each with both layouts.
_ATTENTION_OPTIONS = [
    ({}, {"attn_mask": "bool2d"}),
    ({}, {"attn_mask": "float3d", "key_padding_mask": "bool"}),
    ({}, {"key_padding_mask": "float", "average_attn_weights": False}),
    ({}, {"attn_mask": "causal", "is_causal": True}),
    ({"add_bias_kv": True}, {"attn_mask": "float2d", "key_padding_mask": "bool"}),
    ({"add_zero_attn": True}, {"attn_mask": "bool3d", "key_padding_mask": "bool"}),
    ({"add_bias_kv": True, "add_zero_attn": True}, {"average_attn_weights": False}),
    ({}, {"unbatched": True, "attn_mask": "float2d"}),
]


def _attention_masks(rng, options, n, heads, length):
    masks = {}
    shapes = {"2d": (length, length), "3d": (n * heads, length, length)}
    kind = options.get("attn_mask")
    if kind == "causal":
        masks["attn_mask"] = np.triu(np.ones((length, length), bool), 1)
    elif kind is not None:
        shape = shapes[kind[-2:]]
        if kind.startswith("bool"):
            mask = rng.random(shape) > 0.7
            mask[..., 0] = False  # every row attends somewhere
        else:
            mask = rng.standard_normal(shape)
        masks["attn_mask"] = mask
    padding = options.get("key_padding_mask")
    if padding is not None:
        mask = np.zeros((n, length), bool)
        mask[0, -2:] = True
        masks["key_padding_mask"] = mask if padding == "bool" else np.where(mask, -1e9, 0.0)
    return masks


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("module_options,options", _ATTENTION_OPTIONS)
def test_multihead_attention_options_equal_pytorchs(module_options, options, batch_first):
    # Masks and extra key rows meet the heads in either memory order (batch_first's
    # transposed input is projected in place): outputs, weights, gradients as PyTorch's.
    torch = pytest.importorskip("torch")
    torch.manual_seed(3)
    theirs = torch.nn.MultiheadAttention(8, 2, batch_first=batch_first, **module_options).double()
    ours = nn.MultiheadAttention(8, 2, batch_first=batch_first, **module_options).double()
    ours.load_state_dict({k: et.from_numpy(v.detach().numpy().copy()) for k, v in theirs.state_dict().items()})
    rng = np.random.default_rng(4)
    n, length = 3, 5
    unbatched = options.get("unbatched", False)
    x = rng.standard_normal((length, 8) if unbatched else (n, length, 8) if batch_first else (length, n, 8))
    masks = _attention_masks(rng, options, 1 if unbatched else n, 2, length)
    if unbatched:
        masks.pop("key_padding_mask", None)
    kwargs = {k: options[k] for k in ("is_causal", "average_attn_weights") if k in options}
    results = []
    for lib, module in ((torch, theirs), (et, ours)):
        query = lib.tensor(x, requires_grad=True)
        out, weights = module(query, query, query, **kwargs, **{k: lib.tensor(m) for k, m in masks.items()})
        (out.sum() + (weights * weights).sum()).backward()
        grads = [p.grad.numpy() for p in module.parameters()] + [query.grad.numpy()]
        results.append([out.detach().numpy(), weights.detach().numpy()] + grads)
    for want, got in zip(*results):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
