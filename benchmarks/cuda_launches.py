"""How many kernels one training step launches on CUDA, ember beside PyTorch: the MNIST
conv net and the MLP of `benchmarks.cuda_ops` (SGD with momentum, and the MLP with Adam;
batch 64).

At a few microseconds of host time per launch, a small model's step is bounded by its
launch count rather than by the GPU: the count says what a multi-tensor launch (one
kernel for every parameter's update) or a captured graph (one launch for the whole step)
would save. ember's launches are counted at Numba's kernel launch (`_Kernel.launch` on a
GPU, the simulated kernel's call under the simulator), its cuBLAS calls at
`_backends.cuda.blas.gemm`; PyTorch's with its profiler's CUDA kernel events.

Run: ``python -m benchmarks.cuda_launches`` (``--quick``: the tiny models, e.g. under
NUMBA_ENABLE_CUDASIM=1; launch counts do not depend on the sizes).
"""
import argparse
import contextlib
import importlib.util
import json

from . import cuda_ops

__all__ = ["count_ember_launches", "count_torch_launches", "main"]


@contextlib.contextmanager
def _counting():
    """Count ember's kernel launches and cuBLAS calls made inside the block."""
    from numba.core import config
    from ember_tensor._backends.cuda import blas
    counts = {"kernels": 0, "cublas": 0}
    if config.ENABLE_CUDASIM:
        from numba.cuda.simulator.kernel import FakeCUDAKernel as owner
        name = "__call__"
    else:
        from numba.cuda.dispatcher import _Kernel as owner
        name = "launch"
    original, original_gemm = getattr(owner, name), blas.gemm

    def launch(self, *args, **kwargs):
        if not getattr(self, "_device", False):  # (the simulator's device functions are calls)
            counts["kernels"] += 1
        return original(self, *args, **kwargs)

    def gemm(*args, **kwargs):
        done = original_gemm(*args, **kwargs)
        counts["cublas"] += bool(done)
        return done

    setattr(owner, name, launch)
    blas.gemm = gemm
    try:
        yield counts
    finally:
        setattr(owner, name, original)
        blas.gemm = original_gemm


def count_ember_launches(step):
    """(kernel launches, cuBLAS calls) of one call of `step`, after a warm-up call."""
    step()
    with _counting() as counts:
        step()
    return counts["kernels"], counts["cublas"]


def count_torch_launches(step):
    """CUDA kernels PyTorch's profiler sees in one call of `step`, after a warm-up call."""
    import torch
    step()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        step()
    return sum(1 for e in prof.events() if str(e.device_type).endswith("CUDA"))


def main(argv=None):
    """Print one row per training step: ember's launches and cuBLAS calls, PyTorch's kernels."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.cuda_launches")
    parser.add_argument("--quick", action="store_true", help="tiny models (the counts are the same)")
    parser.add_argument("--no-torch", action="store_true", help="count ember only")
    parser.add_argument("--json", help="also write the rows to this JSON file")
    args = parser.parse_args(argv)
    torch_ok = not args.no_torch and importlib.util.find_spec("torch") is not None
    if torch_ok:
        import torch
        torch_ok = torch.cuda.is_available()
    print("# kernel launches per training step")
    print("| step | ember kernels | ember cuBLAS calls | torch kernels (profiler) |")
    print("|---|---|---|---|")
    rows = []
    for workload in cuda_ops._training_workloads(args.quick):
        kernels, cublas = count_ember_launches(workload.setup("ember"))
        theirs = count_torch_launches(workload.setup("torch")) if torch_ok else None
        rows.append({"name": workload.name, "ember_kernels": kernels, "ember_cublas": cublas, "torch_kernels": theirs})
        print(f"| {workload.name} | {kernels} | {cublas} | {'–' if theirs is None else theirs} |", flush=True)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"title": "kernel launches per training step", "rows": rows}, fh, indent=1)


if __name__ == "__main__":
    main()
