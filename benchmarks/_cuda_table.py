"""The side-by-side table the CUDA benchmark scripts print (cuda_ops, cuda_nn_rows,
cuda_sort_scan): one row per workload with ember's and PyTorch's medians, their time
ratio and rates (bytes moved against the device's peak bandwidth, or FLOP/s); and the
two pieces their workload setups share (`tensor_lib`, `synced`)."""
import argparse
import importlib.util

from ._harness import fmt_time, run

__all__ = ["main", "peak_bandwidth", "synced", "tensor_lib"]


def tensor_lib(name):
    """The tensor module a workload runs on: ember_tensor for "ember", torch for "torch"."""
    if name == "ember":
        import ember_tensor
        return ember_tensor
    import torch
    return torch


def synced(fn, lib):
    """`fn` then `lib.cuda.synchronize()`: a timed call lasts until the GPU is done."""
    synchronize = lib.cuda.synchronize

    def timed():
        fn()
        synchronize()
    return timed


def peak_bandwidth():
    """The device's theoretical memory bandwidth in bytes/s (DDR: 2 transfers a clock)."""
    from numba import cuda
    dev = cuda.get_current_device()
    try:
        return 2.0 * dev.MEMORY_CLOCK_RATE * 1e3 * dev.GLOBAL_MEMORY_BUS_WIDTH / 8
    except Exception:  # the simulator has no such attributes
        return 0.0


def _rate(result, workload, peak):
    """A median as a rate: TFLOP/s for arithmetic, GB/s (and share of peak) for bytes."""
    if not result or not workload.unit:
        return "–"
    value = workload.work / result[0]
    if workload.unit == "FLOP":
        return f"{value / 1e12:.1f} TFLOP/s"
    share = f" ({value / peak:.0%} of peak)" if peak else ""
    return f"{value / 1e9:.0f} GB/s{share}"


def main(prog, title, workloads, argv=None):
    """Parse `--quick` / `--no-torch`, time `workloads(quick)` on ember (and PyTorch's CUDA
    build when present) and print the table headed `# {title} on {device}`."""
    parser = argparse.ArgumentParser(prog=prog)
    parser.add_argument("--quick", action="store_true", help="tiny sizes: check the script")
    parser.add_argument("--no-torch", action="store_true", help="time ember only")
    args = parser.parse_args(argv)
    import ember_tensor
    if not ember_tensor.cuda.is_available():
        raise SystemExit("no CUDA device (set NUMBA_ENABLE_CUDASIM=1 with --quick to smoke-test)")
    available = ["ember"]
    if not args.no_torch and importlib.util.find_spec("torch"):
        import torch
        if torch.cuda.is_available():
            available.append("torch")
    peak = peak_bandwidth()
    print(f"# {title} on {ember_tensor.cuda.get_device_name()}, peak memory bandwidth {peak / 1e9:.0f} GB/s")
    print("| workload | ember | torch | ember/torch time | ember rate | torch rate |")
    print("|---|---|---|---|---|---|")
    for w in workloads(args.quick):
        if args.quick:  # one call: --quick checks that the script runs, it times nothing
            w.repeats, w.number = 1, 1
        res = run(w, available)
        e, tch = res.get("ember"), res.get("torch")
        ratio = f"{e[0] / tch[0]:.2f}" if e and tch else "–"
        print(f"| {w.name} | {fmt_time(e[0])} | {fmt_time(tch[0]) if tch else '–'} | {ratio} | "
              f"{_rate(e, w, peak)} | {_rate(tch, w, peak)} |", flush=True)
