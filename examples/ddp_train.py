"""Data-parallel training with DistributedDataParallel and a DistributedSampler.

Run with the launcher (2 processes on this machine):
    python -m ember_distributed.run --nproc-per-node 2 examples/ddp_train.py [--epochs 3]
(PyTorch: `torchrun --nproc-per-node 2 ...` with `import torch` and backend "gloo".)
"""
import argparse

import ember as torch

dist, nn, F = torch.distributed, torch.nn, torch.nn.functional


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=3)
    args = parser.parse_args(argv)
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    x = torch.randn(512, 10, generator=g)
    y = (x[:, :3].sum(1) > 0).long()                    # a learnable rule
    dataset = torch.utils.data.TensorDataset(x, y)
    sampler = torch.utils.data.distributed.DistributedSampler(dataset)
    loader = torch.utils.data.DataLoader(dataset, batch_size=32, sampler=sampler)
    model = nn.parallel.DistributedDataParallel(nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 2)))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        total = torch.zeros(2)
        for inputs, targets in loader:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(inputs), targets)
            loss.backward()
            optimizer.step()
            total += torch.tensor([loss.item() * len(inputs), float(len(inputs))])
        dist.all_reduce(total)                           # every rank's share of the epoch
        if rank == 0:
            print(f"epoch {epoch}: mean loss {total[0].item() / total[1].item():.4f} over {world} processes")
    with torch.no_grad():
        accuracy = (model(x).argmax(1) == y).float().mean().item()
    if rank == 0:
        print(f"training accuracy {accuracy:.1%}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
