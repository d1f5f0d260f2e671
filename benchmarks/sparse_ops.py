"""Sparse workloads: ``sparse.mm`` (sparse x dense) at 1% density, coalescing, and one
SparseAdam step, for ember and PyTorch side by side.

``python -m benchmarks.sparse_ops`` prints a table. The sparse operands are built once per
library from the same random pattern; ember's product runs the Numba kernel over the
entries (row-parallel above 32K nonzeros), PyTorch's its MKL/native sparse kernel.
"""
import importlib.util

import numpy as np

from ._harness import Workload, fmt_time, run


def _pattern(n, k, density, seed=0, duplicates=False):
    rng = np.random.default_rng(seed)
    nnz = int(n * k * density)
    rows, cols = rng.integers(0, n, nnz), rng.integers(0, k, nnz)
    if not duplicates:
        keys = np.unique(rows * k + cols)
        rows, cols = keys // k, keys % k
    return np.stack([rows, cols]), rng.standard_normal(rows.shape[0]).astype(np.float32)


def _lib(name):
    if name == "ember":
        import ember_tensor as t
        return t
    import torch as t
    return t


def _mm_setup(n, k, m, density):
    def setup(lib):
        t = _lib(lib)
        idx, vals = _pattern(n, k, density)
        s = t.sparse_coo_tensor(t.tensor(idx), t.tensor(vals), (n, k)).coalesce()
        d = t.tensor(np.random.default_rng(1).standard_normal((k, m)).astype(np.float32))
        return lambda: t.sparse.mm(s, d)
    return setup


def _coalesce_setup(n, k, density):
    def setup(lib):
        t = _lib(lib)
        idx, vals = _pattern(n, k, density, duplicates=True)
        s = t.sparse_coo_tensor(t.tensor(idx), t.tensor(vals), (n, k))
        return lambda: t.sparse_coo_tensor(s._indices(), s._values(), (n, k)).coalesce()
    return setup


def _sparse_adam_setup(rows, dim, batch):
    def setup(lib):
        t = _lib(lib)
        optim = importlib.import_module("ember_optim" if lib == "ember" else "torch.optim")
        w = t.zeros(rows, dim, requires_grad=True)
        idx = np.random.default_rng(2).integers(0, rows, batch)
        w.grad = t.sparse_coo_tensor(t.tensor(idx[None]), t.ones(batch, dim), (rows, dim))
        return optim.SparseAdam([w], lr=1e-3).step
    return setup


def _flops(n, k, m, density):
    return 2.0 * len(_pattern(n, k, density)[1]) * m


WORKLOADS = [
    Workload("sparse.mm 1% (1000x1000) @ (1000x64) f32", _mm_setup(1000, 1000, 64, 0.01),
             group="sparse", work=_flops(1000, 1000, 64, 0.01), unit="FLOP"),
    Workload("sparse.mm 1% (4000x4000) @ (4000x128) f32", _mm_setup(4000, 4000, 128, 0.01),
             group="sparse", work=_flops(4000, 4000, 128, 0.01), unit="FLOP", repeats=5),
    Workload("coalesce 1% (4000x4000), 160K entries with duplicates", _coalesce_setup(4000, 4000, 0.01),
             group="sparse", repeats=5),
    Workload("SparseAdam step, 100K x 64 table, batch of 512 rows", _sparse_adam_setup(100_000, 64, 512),
             group="sparse", repeats=5),
]


def main():
    available = ["ember"] + (["torch"] if importlib.util.find_spec("torch") else [])
    # PyTorch's OpenMP threads spin badly when the cores are shared (2-core machine with
    # other jobs): its COO product ran 30x slower with 2 threads than with 1 there. So the
    # table is printed for PyTorch's default thread count and again for one thread.
    thread_counts = [None]
    if "torch" in available:
        import torch
        thread_counts = [torch.get_num_threads(), 1]
    for threads in thread_counts:
        if threads is not None:
            torch.set_num_threads(threads)
            print(f"\nPyTorch with {threads} thread(s):")
        _table(available)


def _table(available):
    print("| workload | ember | torch | ember/torch | ember GFLOP/s | torch GFLOP/s |")
    print("|---|---|---|---|---|---|")
    for w in WORKLOADS:
        res = run(w, available)
        e, tch = res.get("ember"), res.get("torch")
        ratio = f"{e[0] / tch[0]:.2f}" if e and tch else "–"
        rates = [f"{w.work / r[0] / 1e9:.2f}" if r and w.work else "–" for r in (e, tch)]
        print(f"| {w.name} | {fmt_time(e[0])} | {fmt_time(tch[0]) if tch else '–'} | {ratio} | "
              f"{rates[0]} | {rates[1]} |", flush=True)


if __name__ == "__main__":
    main()
