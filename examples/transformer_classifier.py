"""A small transformer classifier on synthetic sequences, trained with AdamW.

Task: a sequence of tokens is class 1 when token 7 appears before token 3 in it, class 0
otherwise — order matters, so attention (and positions) are needed. Runs under PyTorch by
changing the import to `import torch`.

Run: python examples/transformer_classifier.py [--steps 150] [--seq-len 16]
"""
import argparse

import ember as torch
import ember.nn as nn

VOCAB = 12


def make_batch(batch_size, seq_len, generator):
    x = torch.randint(0, VOCAB, (batch_size, seq_len), generator=generator)
    first7 = torch.where(x == 7, torch.arange(seq_len), seq_len).amin(1)
    first3 = torch.where(x == 3, torch.arange(seq_len), seq_len).amin(1)
    return x, (first7 < first3).long()


class Classifier(nn.Module):
    def __init__(self, seq_len, d_model=32, heads=4, layers=2):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, d_model)
        self.position = nn.Parameter(torch.randn(1, seq_len, d_model) * 0.1)
        layer = nn.TransformerEncoderLayer(d_model, heads, dim_feedforward=64, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers)
        self.head = nn.Linear(d_model, 2)

    def forward(self, x):
        h = self.encoder(self.embed(x) + self.position)
        return self.head(h.mean(1))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=150)
    parser.add_argument("--seq-len", type=int, default=16)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=3e-3)
    args = parser.parse_args(argv)
    torch.manual_seed(0)
    generator = torch.Generator().manual_seed(0)
    model = Classifier(args.seq_len)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    loss_fn = nn.CrossEntropyLoss()
    losses = []
    for step in range(args.steps):
        x, y = make_batch(args.batch_size, args.seq_len, generator)
        loss = loss_fn(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        if step % max(1, args.steps // 5) == 0:
            print(f"step {step:4d}  loss {losses[-1]:.3f}")
    model.eval()
    with torch.no_grad():
        x, y = make_batch(512, args.seq_len, generator)
        accuracy = (model(x).argmax(1) == y).float().mean().item()
    head, tail = sum(losses[:10]) / 10, sum(losses[-10:]) / 10
    print(f"mean loss of the first 10 steps {head:.3f} -> last 10 {tail:.3f}; held-out accuracy {accuracy:.1%}")
    if not tail < head:
        raise SystemExit("the loss did not fall")


if __name__ == "__main__":
    main()
