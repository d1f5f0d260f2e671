"""Sequence-model training steps side by side with PyTorch (issue 7's targets):

- an LSTM and a GRU (input 64, hidden 128, seq 32, batch 32) step with Adam (target: within 2x);
- a transformer encoder layer (d_model 128, 4 heads, seq 64, batch 16) step with AdamW
  (target: within 1.5x);
- EmbeddingBag(mode='sum') against Embedding followed by a per-bag sum, on 512 bags of
  1 to 64 indices (the seed's claim: much faster for variable-length bags).
"""
import random

from ._harness import Workload


def _libs(name):
    if name == "ember":
        import ember as torch
    else:
        import torch
    return torch


def _recurrent_step(lib, layer):
    torch = _libs(lib)
    torch.manual_seed(0)
    rnn, head = getattr(torch.nn, layer)(64, 128, batch_first=True), torch.nn.Linear(128, 10)
    params = list(rnn.parameters()) + list(head.parameters())
    optimizer = torch.optim.Adam(params, lr=1e-3)
    x, y = torch.randn(32, 32, 64), torch.randint(0, 10, (32,))

    def step():
        out, _ = rnn(x)
        loss = torch.nn.functional.cross_entropy(head(out[:, -1]), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return step


def _lstm_step(lib):
    return _recurrent_step(lib, "LSTM")


def _gru_step(lib):
    return _recurrent_step(lib, "GRU")


def _transformer_step(lib):
    torch = _libs(lib)
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(128, 4, dim_feedforward=256, dropout=0.0, batch_first=True)
    optimizer = torch.optim.AdamW(layer.parameters(), lr=1e-3)
    x = torch.randn(16, 64, 128)

    def step():
        loss = layer(x).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return step


def _bags():
    rng = random.Random(0)
    lengths = [rng.randint(1, 64) for _ in range(512)]
    offsets = [0]
    for n in lengths[:-1]:
        offsets.append(offsets[-1] + n)
    indices = [rng.randrange(10000) for _ in range(sum(lengths))]
    return indices, offsets, lengths


def _embedding_bag(lib):
    torch = _libs(lib)
    torch.manual_seed(0)
    indices, offsets, _ = _bags()
    bag = torch.nn.EmbeddingBag(10000, 64, mode="sum")
    i, o = torch.tensor(indices), torch.tensor(offsets)
    return lambda: bag(i, o)


def _embedding_then_sum(lib):
    torch = _libs(lib)
    torch.manual_seed(0)
    indices, offsets, lengths = _bags()
    emb = torch.nn.Embedding(10000, 64)
    i = torch.tensor(indices)

    def run():
        rows = emb(i)
        return torch.stack([rows[s:s + n].sum(0) for s, n in zip(offsets, lengths)])
    return run


WORKLOADS = [
    Workload("LSTM 64->128 seq 32 batch 32: train step (Adam)", _lstm_step, group="sequence", repeats=5),
    Workload("GRU 64->128 seq 32 batch 32: train step (Adam)", _gru_step, group="sequence", repeats=5),
    Workload("TransformerEncoderLayer d128 h4 seq 64 batch 16: train step (AdamW)", _transformer_step,
             group="sequence", repeats=5),
    Workload("EmbeddingBag sum, 512 bags of 1-64", _embedding_bag, group="sequence"),
    Workload("Embedding + per-bag sum, 512 bags of 1-64", _embedding_then_sum, group="sequence"),
]
