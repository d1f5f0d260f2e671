"""A DistributedDataParallel training step of the slides' MNIST net on 2 processes (batch 64
per process, SGD): ember (MPI) against PyTorch (gloo), median step time of rank 0.

Run alone: ``python -m benchmarks.distributed_ddp``.
"""
import socket
import subprocess
import sys

STEPS = 12

_BODY = r"""
import statistics, sys, time
nn, F = torch.nn, torch.nn.functional

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 10, kernel_size=5)
        self.conv2 = nn.Conv2d(10, 20, kernel_size=5)
        self.fc1 = nn.Linear(320, 50)
        self.fc2 = nn.Linear(50, 10)

    def forward(self, x):
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(F.max_pool2d(self.conv2(x), 2))
        x = F.relu(self.fc1(x.view(-1, 320)))
        return F.log_softmax(self.fc2(x), dim=1)

torch.manual_seed(0)
model = nn.parallel.DistributedDataParallel(Net())
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(64, 1, 28, 28), torch.randint(0, 10, (64,))
times = []
for step in range({steps}):
    t = time.perf_counter()
    optimizer.zero_grad()
    F.nll_loss(model(x), y).backward()
    optimizer.step()
    times.append(time.perf_counter() - t)
if dist.get_rank() == 0:
    print(statistics.median(times[2:]), flush=True)
"""

_EMBER = "import ember as torch\nimport ember.distributed as dist\ndist.init_process_group('mpi')\n" + _BODY
_TORCH = ("import sys, torch\nimport torch.distributed as dist\n"
          "dist.init_process_group('gloo', init_method='tcp://127.0.0.1:' + sys.argv[2], rank=int(sys.argv[1]), "
          "world_size=2)\n" + _BODY)


def _ember():
    from ember_distributed.run import mpiexec_command

    command = [mpiexec_command(), "-n", "2", sys.executable, "-c", _EMBER.replace("{steps}", str(STEPS))]
    return float(subprocess.run(command, check=True, capture_output=True, text=True, timeout=600).stdout.split()[0])


def _torch():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = str(s.getsockname()[1])
    code = _TORCH.replace("{steps}", str(STEPS))
    processes = [subprocess.Popen([sys.executable, "-c", code, str(rank), port], stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True) for rank in (0, 1)]
    outputs = [p.communicate(timeout=600)[0] for p in processes]
    return float(outputs[0].split()[0])


def measure(libs):
    return {"DDP step, MNIST net, batch 64 x 2 processes": {
        lib: fn() for lib, fn in (("ember", _ember), ("torch", _torch)) if lib in libs}}


if __name__ == "__main__":
    import importlib.util

    libs = ["ember"] + (["torch"] if importlib.util.find_spec("torch") else [])
    for name, row in measure(libs).items():
        print(name, {k: f"{v * 1e3:.1f} ms" for k, v in row.items()})
