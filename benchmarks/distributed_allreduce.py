"""all_reduce bandwidth between 2 local processes: ember on MPI vs PyTorch's gloo.

Each side runs as its own job (``mpiexec -n 2`` for ember, two processes joined by
gloo's TCP rendezvous for PyTorch) and reports the median time of an all_reduce of
float32 tensors; bandwidth is bytes / time (the algorithm bandwidth, as nccl-tests and
PyTorch's benchmarks report it).

Run alone: ``python -m benchmarks.distributed_allreduce``.
"""
import socket
import subprocess
import sys

SIZES = {"1 MB": 1 << 20, "64 MB": 64 << 20}
REPEATS = 20

_EMBER = r"""
import sys, time, statistics
import ember_tensor as et, ember_distributed as dist
dist.init_process_group("mpi")
for nbytes in map(int, sys.argv[1:]):
    x = et.ones(nbytes // 4)
    dist.all_reduce(x)
    times = []
    for _ in range({repeats}):
        dist.barrier()
        t = time.perf_counter(); dist.all_reduce(x); times.append(time.perf_counter() - t)
    if dist.get_rank() == 0:
        print(nbytes, statistics.median(times), flush=True)
"""

_TORCH = r"""
import os, sys, time, statistics
import torch, torch.distributed as dist
rank = int(sys.argv[1])
dist.init_process_group("gloo", init_method="tcp://127.0.0.1:" + sys.argv[2], rank=rank, world_size=2)
for nbytes in map(int, sys.argv[3:]):
    x = torch.ones(nbytes // 4)
    dist.all_reduce(x)
    times = []
    for _ in range({repeats}):
        dist.barrier()
        t = time.perf_counter(); dist.all_reduce(x); times.append(time.perf_counter() - t)
    if rank == 0:
        print(nbytes, statistics.median(times), flush=True)
"""


def _parse(output):
    return {int(n): float(t) for n, t in (line.split() for line in output.splitlines() if line.strip())}


def _ember(sizes):
    from ember_distributed.run import mpiexec_command

    command = [mpiexec_command(), "-n", "2", sys.executable, "-c", _EMBER.format(repeats=REPEATS), *map(str, sizes)]
    return _parse(subprocess.run(command, check=True, capture_output=True, text=True, timeout=300).stdout)


def _torch(sizes):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = str(s.getsockname()[1])
    code = _TORCH.format(repeats=REPEATS)
    processes = [subprocess.Popen([sys.executable, "-c", code, str(rank), port, *map(str, sizes)],
                                  stdout=subprocess.PIPE, text=True) for rank in (0, 1)]
    outputs = [p.communicate(timeout=300)[0] for p in processes]
    return _parse(outputs[0])


def measure(libs):
    """{"all_reduce 1 MB": {lib: seconds}, ...} for the libraries in ``libs``."""
    sizes = list(SIZES.values())
    runs = {}
    if "ember" in libs:
        runs["ember"] = _ember(sizes)
    if "torch" in libs:
        runs["torch"] = _torch(sizes)
    return {f"all_reduce {name}": {lib: result[nbytes] for lib, result in runs.items()}
            for name, nbytes in SIZES.items()}


def main():
    import importlib.util

    libs = ["ember"] + (["torch"] if importlib.util.find_spec("torch") else [])
    print("| workload | ember | torch (gloo) | ember/torch | ember GB/s | torch GB/s |")
    print("|---|---|---|---|---|---|")
    for name, result in measure(libs).items():
        nbytes = SIZES[name.split(" ", 1)[1]]
        e, t = result.get("ember"), result.get("torch")
        print(f"| {name} | {e * 1e3:.2f} ms | {t * 1e3 if t else float('nan'):.2f} ms | "
              f"{e / t if t else float('nan'):.2f} | {nbytes / e / 1e9:.2f} | "
              f"{nbytes / t / 1e9 if t else float('nan'):.2f} |")


if __name__ == "__main__":
    main()
