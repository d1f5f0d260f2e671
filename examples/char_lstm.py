"""A character-level language model: embedding -> 2-layer LSTM -> linear, trained with Adam.

The text is synthetic (a repeated pangram with small variations), so the loss falls
quickly; the model then samples a few characters. Runs under PyTorch by changing the
import to `import torch`.

Run: python examples/char_lstm.py [--steps 200] [--seq-len 32] [--batch-size 32]
"""
import argparse
import random

import ember as torch
import ember.nn as nn

TEXT = " ".join(random.Random(0).choice(["the quick brown fox jumps over the lazy dog",
                                         "the lazy dog sleeps while the quick fox runs"]) for _ in range(200))


class CharLM(nn.Module):
    def __init__(self, vocab, embed=32, hidden=128, layers=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, embed)
        self.lstm = nn.LSTM(embed, hidden, num_layers=layers, batch_first=True)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, x, state=None):
        out, state = self.lstm(self.embed(x), state)
        return self.head(out), state


def batches(ids, seq_len, batch_size, generator):
    """Random windows of the text: inputs and the next characters."""
    while True:
        starts = torch.randint(0, len(ids) - seq_len - 1, (batch_size,), generator=generator).tolist()
        x = torch.stack([ids[s:s + seq_len] for s in starts])
        y = torch.stack([ids[s + 1:s + seq_len + 1] for s in starts])
        yield x, y


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--seq-len", type=int, default=32)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=0.01)
    args = parser.parse_args(argv)
    torch.manual_seed(0)
    chars = sorted(set(TEXT))
    ids = torch.tensor([chars.index(c) for c in TEXT])
    model = CharLM(len(chars))
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    loss_fn = nn.CrossEntropyLoss()
    data = batches(ids, args.seq_len, args.batch_size, torch.Generator().manual_seed(0))
    first = last = None
    for step in range(args.steps):
        x, y = next(data)
        logits, _ = model(x)
        loss = loss_fn(logits.reshape(-1, len(chars)), y.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        first = loss.item() if first is None else first
        last = loss.item()
        if step % max(1, args.steps // 5) == 0:
            print(f"step {step:4d}  loss {last:.3f}")
    model.eval()
    with torch.no_grad():
        x, state, text = ids[:1].reshape(1, 1), None, chars[ids[0].item()]
        for _ in range(40):
            logits, state = model(x, state)
            x = logits[:, -1].argmax(-1, keepdim=True)
            text += chars[x.item()]
    print(f"loss {first:.3f} -> {last:.3f}; sample: {text!r}")
    if not last < first:
        raise SystemExit("the loss did not fall")


if __name__ == "__main__":
    main()
