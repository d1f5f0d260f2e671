"""torch.multiprocessing with the whole stack: pytorch/examples' Hogwild pattern (a model
whose parameters are shared, trained by several processes at once with their own
optimizers) trains the parent's model; autograd's rule for sending tensors holds."""
import pytest

import ember as torch
import ember.multiprocessing as mp
import ember.nn as nn
import ember.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 16)
        self.fc2 = nn.Linear(16, 2)

    def forward(self, x):
        return F.log_softmax(self.fc2(F.relu(self.fc1(x))), dim=1)


def _data(seed):
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(256, 4, generator=generator)
    return x, (x[:, 0] + x[:, 1] > 0).long()  # a separable problem


def _train(rank, model, steps):
    torch.manual_seed(rank)
    x, y = _data(rank)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.5)  # its own state, in this process
    for step in range(steps):
        batch = slice(32 * (step % 8), 32 * (step % 8 + 1))
        optimizer.zero_grad()
        F.nll_loss(model(x[batch]), y[batch]).backward()
        optimizer.step()


def _accuracy(model):
    x, y = _data(1234)
    with torch.no_grad():
        return (model(x).argmax(1) == y).float().mean().item()


@pytest.mark.parametrize("method", ["spawn", "fork"])
def test_hogwild_trains_the_parents_model(method):
    torch.manual_seed(0)
    model = Net()
    model.share_memory()  # gradients are made lazily in each process and are not shared
    before = [p.detach().clone() for p in model.parameters()]
    context = mp.get_context(method)
    processes = [context.Process(target=_train, args=(rank, model, 60)) for rank in range(2)]
    for process in processes:
        process.start()
    for process in processes:
        process.join(120)
        assert process.exitcode == 0
    assert all(not torch.equal(b, p) for b, p in zip(before, model.parameters()))
    assert _accuracy(model) > 0.9


def test_a_non_leaf_that_requires_grad_is_refused():
    x = torch.ones(2, requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="^Cowardly refusing to serialize non-leaf tensor which requires_grad"):
        mp.get_context("fork").SimpleQueue().put(x)
    queue = mp.get_context("fork").SimpleQueue()
    queue.put(x.detach())  # the data alone goes
    assert queue.get().tolist() == [2.0, 2.0]
