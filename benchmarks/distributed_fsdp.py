"""An FSDP training step of a 4-layer MLP (1024 wide, 3.2M parameters) on 2 processes, batch 64
per process, SGD: ember (MPI) against PyTorch (gloo, CPU), median step time of rank 0.

Two APIs, each with every Linear as its own unit and the root as the last:
``FullyShardedDataParallel(model, auto_wrap_policy=ModuleWrapPolicy({nn.Linear}))`` and
``fully_shard`` on each Linear then on the model (1-D CPU mesh). PyTorch 2.13's wrapper
refuses a CPU-only machine unless given ``device_id=torch.device("cpu")`` ("FSDP needs a
non-CPU accelerator device"), so both sides are given it; ``fully_shard`` runs on a CPU
mesh over gloo as is.

Run alone: ``python -m benchmarks.distributed_fsdp``.
"""
import socket
import subprocess
import sys

STEPS = 12
APIS = {"wrapper": "FSDP step (FullyShardedDataParallel, a unit per Linear), 4-layer MLP 1024 wide, batch 64 x 2 "
                   "processes",
        "fully_shard": "FSDP step (fully_shard per Linear + root), 4-layer MLP 1024 wide, batch 64 x 2 processes"}

# Shared by both sides once `torch`, `dist` and the FSDP names are bound (each side imports them
# from its own package: a `from torch.x import` here would load PyTorch on ember's side too);
# argv[-1] names the API.
_BODY = r"""
import statistics, time
nn, F = torch.nn, torch.nn.functional

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(),
                      nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 10))
if sys.argv[-1] == "wrapper":
    model = FullyShardedDataParallel(model, auto_wrap_policy=ModuleWrapPolicy({nn.Linear}),
                                     device_id=torch.device("cpu"))
else:
    mesh = init_device_mesh("cpu", (dist.get_world_size(),))
    for layer in model:
        if isinstance(layer, nn.Linear):
            fully_shard(layer, mesh=mesh)
    fully_shard(model, mesh=mesh)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
torch.manual_seed(1 + dist.get_rank())
x, y = torch.randn(64, 1024), torch.randint(0, 10, (64,))
times = []
for step in range(STEPS):
    dist.barrier()
    t = time.perf_counter()
    optimizer.zero_grad()
    F.cross_entropy(model(x), y).backward()
    optimizer.step()
    times.append(time.perf_counter() - t)
if dist.get_rank() == 0:
    print(statistics.median(times[2:]), flush=True)
"""

_EMBER = r"""
import sys
import ember as torch
import ember.distributed as dist
from ember.distributed.fsdp import FullyShardedDataParallel, fully_shard
from ember.distributed.fsdp.wrap import ModuleWrapPolicy
from ember.distributed.device_mesh import init_device_mesh
dist.init_process_group("mpi")
STEPS = int(sys.argv[1])
""" + _BODY

_TORCH = r"""
import sys
import torch
import torch.distributed as dist
from torch.distributed.fsdp import FullyShardedDataParallel, fully_shard
from torch.distributed.fsdp.wrap import ModuleWrapPolicy
from torch.distributed.device_mesh import init_device_mesh
dist.init_process_group("gloo", init_method="tcp://127.0.0.1:" + sys.argv[2], rank=int(sys.argv[1]), world_size=2)
STEPS = int(sys.argv[3])
""" + _BODY


def _ember(api):
    from ember_distributed.run import mpiexec_command

    command = [mpiexec_command(), "-n", "2", sys.executable, "-c", _EMBER, str(STEPS), api]
    return float(subprocess.run(command, check=True, capture_output=True, text=True, timeout=600).stdout.split()[0])


def _torch(api):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = str(s.getsockname()[1])
    processes = [subprocess.Popen([sys.executable, "-c", _TORCH, str(rank), port, str(STEPS), api],
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True) for rank in (0, 1)]
    outputs = [p.communicate(timeout=600)[0] for p in processes]
    return float(outputs[0].split()[0])


def measure(libs, order=("ember", "torch")):
    """{workload: {lib: seconds}} for both FSDP APIs; ``order`` is which job runs first."""
    runners = {"ember": _ember, "torch": _torch}
    return {name: {lib: runners[lib](api) for lib in order if lib in libs} for api, name in APIS.items()}


if __name__ == "__main__":
    import importlib.util

    libs = ["ember"] + (["torch"] if importlib.util.find_spec("torch") else [])
    for name, row in measure(libs).items():
        ratio = f", ember/torch {row['ember'] / row['torch']:.2f}" if "torch" in row else ""
        print(name, {k: f"{v * 1e3:.1f} ms" for k, v in row.items()}, ratio)
