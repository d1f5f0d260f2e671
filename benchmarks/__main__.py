"""Run the benchmark suite: ``python -m benchmarks [--group G] [--no-torch] [--isolated]``.

Each workload runs for ember and PyTorch (when installed) alternately in one process,
and the table reports medians, min-max, the ember/PyTorch time ratio (< 1: ember is
faster) and, for bandwidth- or FLOP-bound work, the fraction of this machine's limit.

With more than one thread, libraries in one process share the cores with each other's
thread pools (PyTorch's OpenMP threads, ember's workers, Numba's OpenMP pool), which
slows PyTorch's multi-threaded rows most (a Transformer step 24.7 ms against 10.9 ms in
a process of its own, 2 threads, 2026-11-28). ``--isolated`` times each library in a
process of its own (the workload table only) and prints the same table from both.
"""
import argparse
import datetime
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

from . import (amp_training, autograd_ops, cold_start, compile_steps, custom_kernels, distributions_ops, fft_ops,
               machine, nn_ops, nn_training, optim_steps, sequence_training, sparse_ops, tensor_index, tensor_linalg,
               tensor_ops, vision_models)
from ._harness import fmt_time, run

SUITES = {"tensor": tensor_ops.WORKLOADS, "custom": custom_kernels.WORKLOADS, "linalg": tensor_linalg.WORKLOADS,
          "autograd": autograd_ops.WORKLOADS, "index": tensor_index.WORKLOADS,
          "sequence": sequence_training.WORKLOADS, "nn": nn_ops.WORKLOADS, "training": nn_training.WORKLOADS,
          "optim": optim_steps.WORKLOADS, "sparse": sparse_ops.WORKLOADS,
          "distributions": distributions_ops.WORKLOADS, "vision": vision_models.WORKLOADS,
          "amp": amp_training.WORKLOADS, "compile": compile_steps.WORKLOADS, "fft": fft_ops.WORKLOADS}


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.splitlines()[0])
    parser.add_argument("--group", action="append", help="only workloads of this group (repeatable)")
    parser.add_argument("--no-torch", action="store_true", help="time ember only")
    parser.add_argument("--no-cold-start", action="store_true", help="skip the fresh-process timings")
    parser.add_argument("--isolated", action="store_true",
                        help="time each library's workloads in a process of its own (multi-threaded rows)")
    parser.add_argument("--lib", help=argparse.SUPPRESS)   # --isolated's child: this library only
    parser.add_argument("--json", help=argparse.SUPPRESS)  # --isolated's child: results to this file
    args = parser.parse_args(argv)
    if args.lib:
        _time_one_library(args.lib, args.group, args.json)
        return

    available = ["ember"]
    if not args.no_torch and importlib.util.find_spec("torch") is not None:
        available.append("torch")
    bandwidth, gemm = machine.memory_bandwidth(), machine.gemm_peak()
    print(f"# ember benchmarks, {datetime.date.today()}, {machine.describe()}")
    print(f"# machine limits: copy bandwidth {bandwidth / 1e9:.1f} GB/s, "
          f"NumPy BLAS sgemm {gemm / 1e9:.0f} GFLOP/s")
    print("| workload | ember | torch | ember/torch | ember % of limit |")
    print("|---|---|---|---|---|")
    isolated = _time_isolated(available, args.group) if args.isolated else None
    for suite in SUITES.values():
        for w in suite:
            if args.group and w.group not in args.group:
                continue
            res = run(w, available) if isolated is None else {lib: isolated[lib].get(w.name) for lib in available}
            e = res.get("ember")
            tch = res.get("torch")
            cells = [f"{fmt_time(r[0])} ({fmt_time(r[1])}–{fmt_time(r[2])})" if r else "–" for r in (e, tch)]
            ratio = f"{e[0] / tch[0]:.2f}" if e and tch else "–"
            limit = {"B": bandwidth, "FLOP": gemm}.get(w.unit)
            frac = f"{w.work / e[0] / limit:.0%}" if e and limit else "–"
            print(f"| {w.name} | {cells[0]} | {cells[1]} | {ratio} | {frac} |", flush=True)
    if args.group and "distributed" in args.group and importlib.util.find_spec("ember_distributed"):
        # Separate jobs of 2 processes each, so only when asked for: --group distributed.
        from . import distributed_allreduce, distributed_ddp, distributed_fsdp, distributed_sharding

        measured = {**distributed_allreduce.measure(available), **distributed_sharding.measure(available),
                    **distributed_ddp.measure(available), **distributed_fsdp.measure(available)}
        for name, res in measured.items():
            e, tch = res.get("ember"), res.get("torch")
            ratio = f"{e / tch:.2f}" if e and tch else "–"
            print(f"| {name} (2 processes; torch: gloo) | {fmt_time(e)} | {fmt_time(tch) if tch else '–'} | "
                  f"{ratio} | – |", flush=True)
    if args.group and "data" in args.group:
        from . import data_loader

        results = data_loader.measure(available)
        for workers in (0, 2):
            e, tch = results[("ember", workers)], results.get(("torch", workers))
            ratio = f"{e / tch:.2f}" if tch else "–"
            print(f"| DataLoader epoch, {workers} workers | {fmt_time(e)} | {fmt_time(tch) if tch else '–'} | "
                  f"{ratio} | – |", flush=True)
    if args.group and "export" in args.group:
        from . import export_onnx

        for model, row in export_onnx.measure(available).items():
            for column, seconds in row.items():
                print(f"| {model}: {column} | {fmt_time(seconds)} | | | – |", flush=True)
    if not args.no_cold_start and (not args.group or "cold" in args.group):
        for name, res in cold_start.measure(available).items():
            e, tch = res.get("ember"), res.get("torch")
            ratio = f"{e / tch:.2f}" if e and tch else "–"
            print(f"| cold start: {name} | {fmt_time(e) if e else '–'} | "
                  f"{fmt_time(tch) if tch else '–'} | {ratio} | – |", flush=True)


def _chosen(groups):
    return [w for suite in SUITES.values() for w in suite if not groups or w.group in groups]


def _time_one_library(lib, groups, path):
    """`run` every chosen workload for `lib` alone; results (seconds) to the JSON file `path`."""
    with open(path, "w") as fh:
        json.dump({w.name: list(run(w, [lib])[lib]) for w in _chosen(groups)}, fh)


def _time_isolated(available, groups):
    """{lib: {workload name: (median, min, max)}}, each library timed in a child process."""
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for lib in available:
            path = os.path.join(tmp, lib + ".json")
            command = [sys.executable, "-m", "benchmarks", "--lib", lib, "--json", path]
            for group in groups or ():
                command += ["--group", group]
            subprocess.run(command, check=True)
            with open(path) as fh:
                results[lib] = {name: tuple(r) for name, r in json.load(fh).items()}
    return results


if __name__ == "__main__":
    main()
