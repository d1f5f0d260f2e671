"""The collectives FSDP is built on, between 2 local processes: ember on MPI vs PyTorch's gloo.

``reduce_scatter_tensor`` (each rank's float32 input of SIZE bytes summed, rank i keeping
block i) and ``all_gather_into_tensor`` (each rank's SIZE / 2 bytes gathered into an
output of SIZE bytes). SIZE is the larger buffer, as nccl-tests count it, so the
bandwidth reported is SIZE / time (algorithm bandwidth). Both tensor forms run on gloo in
PyTorch 2.13 (which marks them deprecated in favour of ``reduce_scatter_single`` and
``all_gather_single``; the warning is silenced here). Each side runs as its own job, as in
distributed_allreduce.py, and reports rank 0's median time.

Run alone: ``python -m benchmarks.distributed_sharding``.
"""
import socket
import subprocess
import sys

SIZES = {"1 MB": 1 << 20, "64 MB": 64 << 20}
OPS = ("reduce_scatter_tensor", "all_gather_into_tensor")
REPEATS = 20

# Shared by both sides once `torch` and `dist` are bound: times every op at every size.
_BODY = r"""
import statistics, time, warnings
warnings.simplefilter("ignore", FutureWarning)
world = dist.get_world_size()
for nbytes in SIZES:
    big, small = torch.ones(nbytes // 4), torch.empty(nbytes // 4 // world)
    calls = {"reduce_scatter_tensor": lambda: dist.reduce_scatter_tensor(small, big),
             "all_gather_into_tensor": lambda: dist.all_gather_into_tensor(big, small)}
    for name, call in calls.items():
        call()
        times = []
        for _ in range(REPEATS):
            dist.barrier()
            t = time.perf_counter(); call(); times.append(time.perf_counter() - t)
        if dist.get_rank() == 0:
            print(name, nbytes, statistics.median(times), flush=True)
"""

_EMBER = r"""
import sys
import ember_tensor as torch, ember_distributed as dist
dist.init_process_group("mpi")
SIZES, REPEATS = list(map(int, sys.argv[2:])), int(sys.argv[1])
""" + _BODY

_TORCH = r"""
import sys
import torch, torch.distributed as dist
dist.init_process_group("gloo", init_method="tcp://127.0.0.1:" + sys.argv[2], rank=int(sys.argv[1]), world_size=2)
SIZES, REPEATS = list(map(int, sys.argv[4:])), int(sys.argv[3])
""" + _BODY


def _parse(output):
    return {(op, int(n)): float(t) for op, n, t in (line.split() for line in output.splitlines() if line.strip())}


def _ember(sizes):
    from ember_distributed.run import mpiexec_command

    command = [mpiexec_command(), "-n", "2", sys.executable, "-c", _EMBER, str(REPEATS), *map(str, sizes)]
    return _parse(subprocess.run(command, check=True, capture_output=True, text=True, timeout=300).stdout)


def _torch(sizes):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = str(s.getsockname()[1])
    processes = [subprocess.Popen([sys.executable, "-c", _TORCH, str(rank), port, str(REPEATS), *map(str, sizes)],
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True) for rank in (0, 1)]
    outputs = [p.communicate(timeout=300)[0] for p in processes]
    return _parse(outputs[0])


def measure(libs, order=("ember", "torch")):
    """{"reduce_scatter_tensor 1 MB": {lib: seconds}, ...} for the libraries in ``libs``.

    ``order`` is which job runs first; alternate it between rounds on a shared machine.
    """
    sizes = list(SIZES.values())
    runners = {"ember": _ember, "torch": _torch}
    runs = {lib: runners[lib](sizes) for lib in order if lib in libs}
    return {f"{op} {name}": {lib: result[(op, nbytes)] for lib, result in runs.items()}
            for op in OPS for name, nbytes in SIZES.items()}


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
