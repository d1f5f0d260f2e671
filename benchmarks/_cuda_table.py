"""The side-by-side table the CUDA benchmark scripts print (cuda_ops, cuda_nn_rows,
cuda_sort_scan): one row per workload with ember's and PyTorch's medians, their time
ratio and rates (bytes moved against the device's peak bandwidth, or FLOP/s); and the
two pieces their workload setups share (`tensor_lib`, `synced`)."""
import argparse
import importlib.util
import json
import traceback

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


def _rate(result, workload, peak, peak_name):
    """A median as a rate: TFLOP/s for arithmetic, GB/s (and share of `peak`) for bytes."""
    if not result or not workload.unit:
        return "–"
    value = workload.work / result[0]
    if workload.unit == "FLOP":
        return f"{value / 1e12:.1f} TFLOP/s"
    share = f" ({value / peak:.0%} of {peak_name})" if peak else ""
    return f"{value / 1e9:.0f} GB/s{share}"


def _row(workload):
    """A timed workload as a JSON-ready dict (medians/min/max in seconds per library)."""
    return {"name": workload.name, "work": workload.work, "unit": workload.unit,
            **{lib: list(times) for lib, times in workload.results.items()}}


def main(prog, title, workloads, argv=None):
    """Parse `--quick` / `--no-torch` / `--bandwidth` / `--json`, time `workloads(quick)` on
    ember (and PyTorch's CUDA build when present) and print the table headed
    `# {title} on {device}` (and write its rows as JSON)."""
    parser = argparse.ArgumentParser(prog=prog)
    parser.add_argument("--quick", action="store_true", help="tiny sizes: check the script")
    parser.add_argument("--no-torch", action="store_true", help="time ember only")
    parser.add_argument("--bandwidth", type=float, default=0.0,
                        help="a measured copy bandwidth in GB/s to rate bytes against (default: the "
                             "device's theoretical peak)")
    parser.add_argument("--json", help="also write the rows (times in seconds) to this JSON file")
    args = parser.parse_args(argv)
    import ember_tensor
    if not ember_tensor.cuda.is_available():
        raise SystemExit("no CUDA device (set NUMBA_ENABLE_CUDASIM=1 with --quick to smoke-test)")
    available = ["ember"]
    if not args.no_torch and importlib.util.find_spec("torch"):
        import torch
        if torch.cuda.is_available():
            available.append("torch")
    peak, peak_name = (args.bandwidth * 1e9, "copy") if args.bandwidth else (peak_bandwidth(), "peak")
    print(f"# {title} on {ember_tensor.cuda.get_device_name()}, {peak_name} memory bandwidth {peak / 1e9:.0f} GB/s")
    print("| workload | ember | torch | ember/torch time | ember rate | torch rate |")
    print("|---|---|---|---|---|---|")
    rows, failed = [], []
    for w in workloads(args.quick):
        if args.quick:  # one call: --quick checks that the script runs, it times nothing
            w.repeats, w.number = 1, 1
        try:
            res = run(w, available)
        except Exception as error:  # one broken workload must not lose the other rows
            traceback.print_exc()
            failed.append(w.name)
            print(f"| {w.name} | error: {type(error).__name__}: {str(error)[:120]} | | | | |", flush=True)
            rows.append({"name": w.name, "error": f"{type(error).__name__}: {error}"})
        else:
            e, tch = res.get("ember"), res.get("torch")
            ratio = f"{e[0] / tch[0]:.2f}" if e and tch else "–"
            print(f"| {w.name} | {fmt_time(e[0])} | {fmt_time(tch[0]) if tch else '–'} | {ratio} | "
                  f"{_rate(e, w, peak, peak_name)} | {_rate(tch, w, peak, peak_name)} |", flush=True)
            rows.append(_row(w))
        if args.json:  # after every row: a run cut short keeps what it measured
            with open(args.json, "w") as fh:
                json.dump({"title": title, "device": ember_tensor.cuda.get_device_name(), "rows": rows}, fh, indent=1)
    if failed:
        raise SystemExit(f"{len(failed)} workload(s) failed: {', '.join(failed)}")
