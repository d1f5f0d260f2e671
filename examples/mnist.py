"""The classic PyTorch MNIST example (the slides' Net, Adadelta, StepLR), written for ember.

It runs under real PyTorch by changing one line: `import ember as torch` -> `import torch`
(everything else is reached through `torch.`). With `--data DIR` holding the MNIST IDX
files (train-images-idx3-ubyte[.gz], ...) it trains on MNIST; otherwise on the 8x8
handwritten digits that ship with ember-data (upscaled to 28x28), and says which.

Run: python examples/mnist.py [--epochs 8] [--batch-size 16] [--lr 1.0] [--seed 1]
                              [--data DIR] [--device cpu] [--save-model] [--plot curves.png]
"""
import argparse
import gzip
import os
import sys
import time

import numpy as np

import ember as torch

nn, F = torch.nn, torch.nn.functional
StepLR = torch.optim.lr_scheduler.StepLR
DataLoader, TensorDataset = torch.utils.data.DataLoader, torch.utils.data.TensorDataset

MEAN, STD = 0.1307, 0.3081


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 10, kernel_size=5)
        self.conv2 = nn.Conv2d(10, 20, kernel_size=5)
        self.conv2_drop = nn.Dropout2d()
        self.fc1 = nn.Linear(320, 50)
        self.fc2 = nn.Linear(50, 10)

    def forward(self, x):
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(F.max_pool2d(self.conv2_drop(self.conv2(x)), 2))
        x = x.view(-1, 320)
        x = F.relu(self.fc1(x))
        x = F.dropout(x, training=self.training)
        x = self.fc2(x)
        return F.log_softmax(x, dim=1)


# --- data ----------------------------------------------------------------------------------

def _read_idx(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    ndim = data[3]
    shape = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(shape)


def _find(directory, stem):
    for name in (stem, stem + ".gz", stem.replace("-idx", ".idx"), stem.replace("-idx", ".idx") + ".gz"):
        for folder in (directory, os.path.join(directory, "MNIST", "raw")):
            path = os.path.join(folder, name)
            if os.path.exists(path):
                return path
    return None


def load_mnist(directory):
    """(train images, train labels, test images, test labels) from IDX files, or None."""
    stems = ["train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"]
    paths = [_find(directory, s) for s in stems]
    if directory is None or None in paths:
        return None
    arrays = [_read_idx(p) for p in paths]
    return arrays[0] / 255.0, arrays[1], arrays[2] / 255.0, arrays[3]


def load_digits():
    """The 8x8 digits shipped with ember-data, upscaled (x3, nearest) and padded to 28x28."""
    from ember_data.datasets import load_digits_arrays

    images, labels = load_digits_arrays()
    images = np.kron(images / 16.0, np.ones((3, 3)))          # 24x24
    images = np.pad(images, ((0, 0), (2, 2), (2, 2)))         # 28x28, like MNIST's margin
    # The file is ordered by writer: a fixed shuffle puts every writer on both sides.
    order = np.random.RandomState(0).permutation(len(images))
    train, test = order[:1500], order[1500:]
    return images[train], labels[train], images[test], labels[test]


def datasets(directory):
    found = load_mnist(directory) if directory else None
    name = "MNIST" if found is not None else "the 8x8 digits shipped with ember-data (no MNIST files given)"
    train_x, train_y, test_x, test_y = found if found is not None else load_digits()

    def tensors(x, y):
        x = ((x - MEAN) / STD).astype(np.float32)[:, None]
        return TensorDataset(torch.from_numpy(np.ascontiguousarray(x)), torch.from_numpy(y.astype(np.int64)))
    return name, tensors(train_x, train_y), tensors(test_x, test_y)


# --- training ------------------------------------------------------------------------------

def _progress(epoch, done, total, loss, start):
    elapsed = time.perf_counter() - start
    rate = done / elapsed if elapsed > 0 else 0.0
    eta = (total - done) / rate if rate > 0 else 0.0
    width = 24
    filled = int(width * done / total)
    sys.stdout.write(f"\rEpoch {epoch} [{'=' * filled}{'.' * (width - filled)}] {done}/{total}  "
                     f"loss {loss:.4f}  {rate:.0f} samples/s  ETA {eta:.0f}s ")
    sys.stdout.flush()


def train(args, model, device, loader, optimizer, epoch):
    model.train()
    start, done, total = time.perf_counter(), 0, len(loader.dataset)
    losses = []
    for batch_idx, (data, target) in enumerate(loader):
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
        done += len(data)
        losses.append(loss.item())
        if batch_idx % args.log_interval == 0 or done == total:
            _progress(epoch, done, total, losses[-1], start)
    print()
    return sum(losses) / len(losses), done / (time.perf_counter() - start)


def test(model, device, loader):
    model.eval()
    test_loss, correct = 0.0, 0
    with torch.no_grad():
        for data, target in loader:
            data, target = data.to(device), target.to(device)
            output = model(data)
            test_loss += F.nll_loss(output, target, reduction="sum").item()
            correct += output.argmax(dim=1, keepdim=True).eq(target.view_as(output.argmax(dim=1, keepdim=True))).sum().item()
    test_loss /= len(loader.dataset)
    accuracy = correct / len(loader.dataset)
    print(f"Test set: Average loss: {test_loss:.4f}, Accuracy: {correct}/{len(loader.dataset)} ({100 * accuracy:.1f}%)")
    return test_loss, accuracy


def plot(path, history):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"--plot needs matplotlib (pip install matplotlib); {path} not written")
        return
    epochs = [h[0] for h in history]
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.5))
    left.plot(epochs, [h[1] for h in history], label="train loss")
    left.plot(epochs, [h[2] for h in history], label="test loss")
    left.set_xlabel("epoch")
    left.legend()
    right.plot(epochs, [100 * h[3] for h in history], color="green")
    right.set_xlabel("epoch")
    right.set_ylabel("test accuracy (%)")
    fig.tight_layout()
    fig.savefig(path)
    print(f"curves written to {path}")


def main(argv=None):
    parser = argparse.ArgumentParser(description="MNIST (or the shipped digits) with the classic conv net")
    parser.add_argument("--batch-size", type=int, default=None,
                        help="input batch size for training (default: 64 on MNIST, 16 on the 40x smaller digits)")
    parser.add_argument("--test-batch-size", type=int, default=1000, help="input batch size for testing")
    parser.add_argument("--epochs", type=int, default=8, help="number of epochs to train (default: 8)")
    parser.add_argument("--lr", type=float, default=1.0, help="learning rate (default: 1.0)")
    parser.add_argument("--gamma", type=float, default=0.7, help="learning rate step gamma (default: 0.7)")
    parser.add_argument("--seed", type=int, default=1, help="random seed (default: 1)")
    parser.add_argument("--log-interval", type=int, default=5, help="batches between progress updates")
    parser.add_argument("--data", default=None, help="directory with the MNIST IDX files")
    parser.add_argument("--device", default="cpu", help="cpu or cuda")
    parser.add_argument("--save-model", action="store_true", help="save the trained model to mnist_cnn.pt")
    parser.add_argument("--plot", default=None, metavar="PNG", help="write loss/accuracy curves to this file")
    parser.add_argument("--min-accuracy", type=float, default=None, help="exit non-zero below this test accuracy")
    args = parser.parse_args(argv)

    torch.manual_seed(args.seed)
    device = torch.device(args.device)
    name, train_set, test_set = datasets(args.data)
    if args.batch_size is None:
        args.batch_size = 64 if name == "MNIST" else 16
    print(f"Training on {name}: {len(train_set)} train / {len(test_set)} test images, device {device}")
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True)
    test_loader = DataLoader(test_set, batch_size=args.test_batch_size)

    model = Net().to(device)
    optimizer = torch.optim.Adadelta(model.parameters(), lr=args.lr)
    scheduler = StepLR(optimizer, step_size=1, gamma=args.gamma)
    history, start = [], time.perf_counter()
    for epoch in range(1, args.epochs + 1):
        train_loss, rate = train(args, model, device, train_loader, optimizer, epoch)
        test_loss, accuracy = test(model, device, test_loader)
        history.append((epoch, train_loss, test_loss, accuracy, rate))
        scheduler.step()
    minutes, seconds = divmod(time.perf_counter() - start, 60)
    print(f"Done: {args.epochs} epochs in {int(minutes)}m{seconds:.0f}s, final test accuracy "
          f"{100 * history[-1][3]:.1f}%, {history[-1][4]:.0f} training samples/s in the last epoch")
    if args.save_model:
        torch.save(model.state_dict(), "mnist_cnn.pt")
        print("model saved to mnist_cnn.pt")
    if args.plot:
        plot(args.plot, history)
    if args.min_accuracy is not None and history[-1][3] < args.min_accuracy:
        raise SystemExit(f"test accuracy {history[-1][3]:.3f} is below --min-accuracy {args.min_accuracy}")


if __name__ == "__main__":
    main()
