"""The seeds' data-parallel training loop (0.2 release notes) under the launcher:
DistributedDataParallel from ember.nn.parallel, a DistributedSampler with set_epoch, and
the replicas ending identical."""
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent('''
    import ember as torch
    import ember.distributed as dist
    import ember.nn as nn
    import ember.nn.functional as F
    from ember.utils.data import DataLoader, TensorDataset
    from ember.utils.data.distributed import DistributedSampler

    dist.init_process_group("gloo")
    print('Hello from process {} (out of {})!'.format(dist.get_rank(), dist.get_world_size()))
    torch.manual_seed(dist.get_rank())        # different starts: DDP broadcasts rank 0's
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
    model = nn.parallel.DistributedDataParallel(model)
    g = torch.Generator().manual_seed(0)
    train_dataset = TensorDataset(torch.randn(96, 8, generator=g), torch.randint(0, 3, (96,), generator=g))
    train_sampler = DistributedSampler(train_dataset)
    train_loader = DataLoader(train_dataset, batch_size=16, sampler=train_sampler)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(2):
        train_sampler.set_epoch(epoch)
        for x, y in train_loader:
            optimizer.zero_grad()
            F.cross_entropy(model(x), y).backward()
            optimizer.step()
    flat = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
    copies = [torch.zeros_like(flat) for _ in range(dist.get_world_size())]
    dist.all_gather(copies, flat)
    assert all(torch.equal(c, copies[0]) for c in copies), "replicas diverged"
    print(f"rank {dist.get_rank()}: replicas identical after {2 * len(train_loader)} steps")
''')


def test_seed_ddp_training_loop_under_the_launcher(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    result = subprocess.run([sys.executable, "-m", "ember_distributed.run", "--nproc-per-node", "2", str(script)],
                            capture_output=True, text=True, timeout=600)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "Hello from process 1 (out of 2)!" in output
    assert "rank 0: replicas identical after 6 steps" in output and "rank 1: replicas identical" in output
