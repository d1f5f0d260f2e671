"""Run the benchmark suite: ``python -m benchmarks [--group G] [--no-torch] [--quick]``.

Each workload runs for ember and PyTorch (when installed) alternately in one process,
and the table reports medians, min-max, the ember/PyTorch time ratio (< 1: ember is
faster) and, for bandwidth- or FLOP-bound work, the fraction of this machine's limit.
"""
import argparse
import datetime
import importlib.util

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
    args = parser.parse_args(argv)

    available = ["ember"]
    if not args.no_torch and importlib.util.find_spec("torch") is not None:
        available.append("torch")
    bandwidth, gemm = machine.memory_bandwidth(), machine.gemm_peak()
    print(f"# ember benchmarks, {datetime.date.today()}, {machine.describe()}")
    print(f"# machine limits: copy bandwidth {bandwidth / 1e9:.1f} GB/s, "
          f"NumPy BLAS sgemm {gemm / 1e9:.0f} GFLOP/s")
    print("| workload | ember | torch | ember/torch | ember % of limit |")
    print("|---|---|---|---|---|")
    for suite in SUITES.values():
        for w in suite:
            if args.group and w.group not in args.group:
                continue
            res = run(w, available)
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


if __name__ == "__main__":
    main()
