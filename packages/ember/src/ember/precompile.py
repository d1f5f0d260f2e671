"""Fill ember's kernel cache ahead of time: ``python -m ember.precompile``.

A fresh process with an empty cache compiles every Numba kernel its first training step
runs (~8-10 s of CPU time for the MNIST example, against ~1 s once cached). This command
pays that once, at install time, by running small representative workloads — an
elementwise mix, reductions, the softmax family and losses, linear, convolution, pooling,
normalization, the random ops and the optimizers' steps, forward and backward — on the
CPU for each requested dtype. Each workload runs in a worker process of its own; the
kernels they compile land in ember's kernel cache (``$EMBER_CACHE_DIR``) and Numba's
(``$NUMBA_CACHE_DIR``, else next to ember's sources), where later processes load them.

Workloads rather than a list of kernels: a workload calls public ops, so it stays right
when an op changes which kernels it runs. Numba's compiler lock serialises compiles within
a process, which is why the split is over processes (``--jobs``, one per core by default).

Usage::

    python -m ember.precompile                    # float32, every workload, one job per core
    python -m ember.precompile --dtypes float32 float64 --jobs 2
    python -m ember.precompile --only conv pooling --list
"""
import argparse
import concurrent.futures
import math
import multiprocessing
import os
import sys
import time

import numpy as np

__all__ = ["WORKLOADS", "DTYPES", "precompile", "main"]

DTYPES = ("float32", "float64")


def _data(torch, dtype, *shape, requires_grad=False):
    # Inputs made by NumPy, so that a workload compiles only the kernels of its own ops
    # (randn would compile the normal sampler in every worker, and in the background).
    values = np.sin(np.arange(math.prod(shape), dtype=np.float64) * 0.7).reshape(shape) * 2.0
    return torch.tensor(values, dtype=dtype, requires_grad=requires_grad)


def _elementwise(torch, dtype):
    x = _data(torch, dtype, 8, 16, requires_grad=True)
    y = _data(torch, dtype, 8, 16).abs() + 0.5
    z = (x + y) * y - x / y + 2.0 * x - 1.0
    z = z.exp() + z.sigmoid() + z.tanh() + torch.relu(z) + z.abs().sqrt() + (y.log() ** 2)
    z = torch.where(x > 0, z, -z).clamp(-10.0, 10.0) + torch.maximum(x, y)
    z = z + x.t().contiguous().t() * x.t().t()  # a strided operand
    z = z + (x.t() * y.t() + y.t()).t()  # two strided operands (as attention's transposes)
    z = z + y[0] * x[:, :1] - y[:1]  # broadcast rows and columns (bias adds: the row loops)
    torch.nn.functional.gelu(z).sum().backward()
    (x.detach() < y).sum()


def _reductions(torch, dtype):
    x = _data(torch, dtype, 8, 16, requires_grad=True)
    (x.sum() + x.mean() + x.amax() + x.sum(0).sum() + x.mean(1).sum() + x.var(1).sum()
     + x.std() + x.norm() + x.max(1).values.sum()).backward()
    x.detach().argmax(1)


def _softmax_losses(torch, dtype):
    F = torch.nn.functional
    x = _data(torch, dtype, 8, 10, requires_grad=True)
    target = torch.tensor([3, 1, 4, 1, 5, 9, 2, 6])
    loss = (F.nll_loss(F.log_softmax(x, dim=1), target) + F.cross_entropy(x, target)
            + F.softmax(x, dim=1).sum() + F.mse_loss(x, torch.zeros_like(x))
            + F.binary_cross_entropy_with_logits(x, _data(torch, dtype, 8, 10).abs() / 2))
    loss.backward()


def _linear(torch, dtype):
    x, w = _data(torch, dtype, 4, 16), _data(torch, dtype, 8, 16, requires_grad=True)
    b = _data(torch, dtype, 8, requires_grad=True)
    torch.relu(torch.nn.functional.linear(x, w, b)).sum().backward()


def _conv(torch, dtype):
    # 5x5 and 3x3 with and without padding (im2col/col2im, both of their kernels); 3x3 over
    # 32 channels takes Winograd's path.
    for c, o, k, pad, side in ((1, 4, 5, 0, 12), (4, 4, 3, 1, 8), (32, 32, 3, 1, 8)):
        x = _data(torch, dtype, 2, c, side, side, requires_grad=True)
        w = _data(torch, dtype, o, c, k, k, requires_grad=True)
        b = _data(torch, dtype, o, requires_grad=True)
        torch.nn.functional.conv2d(x, w, b, padding=pad).sum().backward()


def _pooling(torch, dtype):
    F = torch.nn.functional
    x = _data(torch, dtype, 2, 3, 8, 8, requires_grad=True)
    (F.max_pool2d(x, 2).sum() + F.max_pool2d(x, 3, stride=2, padding=1).sum()
     + F.avg_pool2d(x, 2).sum() + F.adaptive_avg_pool2d(x, 1).sum()).backward()


def _normalization(torch, dtype):
    # The modules, for their running statistics and int64 num_batches_tracked counter (their
    # parameters start as ones and zeros: no random kernels).
    x = _data(torch, dtype, 4, 3, 5, 5, requires_grad=True)
    bn = torch.nn.BatchNorm2d(3).to(dtype)
    ln = torch.nn.LayerNorm(5).to(dtype)
    (bn(x).sum() + ln(x).sum()).backward()
    bn.eval()
    bn(x.detach())


def _random(torch, dtype):
    F = torch.nn.functional
    x = torch.ones(4, 3, 5, 5, dtype=dtype, requires_grad=True)
    (F.dropout(x, 0.5).sum() + F.dropout2d(x, 0.5).sum()).backward()
    torch.randn(10, dtype=dtype), torch.rand(10, dtype=dtype), torch.randint(0, 10, (10,))
    torch.randperm(10), torch.empty(10, dtype=dtype).normal_()
    torch.nn.Linear(4, 3).to(dtype)  # its kaiming_uniform_ initialisation


def _optimizers(torch, dtype):
    optim = torch.optim
    for make in (lambda p: optim.SGD(p, lr=0.1), lambda p: optim.SGD(p, lr=0.1, momentum=0.9),
                 lambda p: optim.Adam(p), lambda p: optim.AdamW(p), lambda p: optim.Adadelta(p),
                 lambda p: optim.Adagrad(p), lambda p: optim.RMSprop(p)):
        params = [torch.nn.Parameter(_data(torch, dtype, 4, 3)), torch.nn.Parameter(_data(torch, dtype, 3))]
        optimizer = make(params)
        for _ in range(2):  # some optimizers run a different kernel from their second step
            optimizer.zero_grad()
            sum((p * p).sum() for p in params).backward()
            optimizer.step()


# name -> workload(torch, dtype); listed slowest to compile first, so that the workers
# finish together.
WORKLOADS = {
    "conv": _conv,
    "reductions": _reductions,
    "softmax": _softmax_losses,
    "pooling": _pooling,
    "elementwise": _elementwise,
    "random": _random,
    "normalization": _normalization,
    "optimizers": _optimizers,
    "linear": _linear,
}


def run_workload(name, dtype):
    """Run one workload in this process (compiling, or loading, its kernels); its seconds."""
    import ember
    start = time.perf_counter()
    WORKLOADS[name](ember, getattr(ember, dtype))
    return time.perf_counter() - start


def precompile(workloads=None, dtypes=("float32",), jobs=None, progress=None):
    """Compile the kernels of ``workloads`` x ``dtypes`` into the kernel cache.

    Args:
        workloads: names from `WORKLOADS` (all of them by default).
        dtypes: names from `DTYPES`.
        jobs: worker processes (default: the CPU count).
        progress: called as ``progress(done, total, name, dtype, seconds)`` after each task.

    Returns:
        ``{(name, dtype): seconds}``, each task's time in its worker.
    """
    workloads = list(WORKLOADS) if workloads is None else list(workloads)
    unknown = [w for w in workloads if w not in WORKLOADS] + [d for d in dtypes if d not in DTYPES]
    if unknown:
        raise ValueError(f"unknown workload or dtype {unknown}; choose from "
                         f"{list(WORKLOADS)} and {list(DTYPES)}")
    if jobs is None:
        jobs = os.cpu_count() or 1
    if jobs < 1:
        raise ValueError(f"jobs must be at least 1, got {jobs}")
    tasks = [(w, d) for w in workloads for d in dtypes]
    times = {}
    # spawn, not fork: a forked child would inherit the parent's threads and locks.
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(max_workers=min(jobs, len(tasks)),
                                                mp_context=context) as pool:
        futures = {pool.submit(run_workload, *task): task for task in tasks}
        for future in concurrent.futures.as_completed(futures):
            task = futures[future]
            times[task] = future.result()
            if progress is not None:
                progress(len(times), len(tasks), *task, times[task])
    return times


def _print_progress(done, total, name, dtype, seconds):
    print(f"[{done}/{total}] {name} {dtype}: {seconds:.1f} s", file=sys.stderr, flush=True)


def main(argv=None):
    """The command line: ``python -m ember.precompile [--dtypes ...] [--only ...] [--jobs N]``."""
    parser = argparse.ArgumentParser(
        prog="python -m ember.precompile",
        description="Compile the CPU kernels of a usual training program into ember's kernel "
                    "cache ($EMBER_CACHE_DIR, and Numba's: $NUMBA_CACHE_DIR), so that a "
                    "fresh process does not compile them.")
    parser.add_argument("--dtypes", nargs="+", default=["float32"], choices=DTYPES,
                        help="floating dtypes to compile for (default: float32)")
    parser.add_argument("--only", nargs="+", choices=list(WORKLOADS), metavar="WORKLOAD",
                        help=f"run only these workloads: {', '.join(WORKLOADS)}")
    parser.add_argument("--jobs", "-j", type=int, default=os.cpu_count() or 1,
                        help="worker processes (default: one per CPU core)")
    parser.add_argument("--list", action="store_true", help="list the workloads and exit")
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error(f"--jobs must be at least 1, got {args.jobs}")
    if args.list:
        print("\n".join(args.only or WORKLOADS))
        return 0
    start = time.perf_counter()
    times = precompile(args.only, args.dtypes, args.jobs, progress=_print_progress)
    print(f"precompiled {len(times)} workloads in {time.perf_counter() - start:.1f} s "
          f"with {args.jobs} jobs", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
