"""ember's sorting, selection, scan and counting ops on CUDA beside PyTorch's: sort (short
rows in shared memory, long rows through global stages), argsort, topk (small k: the
selection kernel; large k: the sort), median of a long row, cumsum/cummax (many rows and
one long row), unique, searchsorted, bincount.

Run on a GPU machine: ``python -m benchmarks.cuda_sort_scan`` (``--quick``: tiny sizes,
to check the script under NUMBA_ENABLE_CUDASIM=1). Every timed call ends with a device
synchronisation. Rates are the bytes the op must read and write at least once, as a
share of the device's peak bandwidth (a sort moves its data several times, so its share
is low by nature: compare the time with PyTorch's).

`tools/gpu_run.py` runs it on a GPU machine with the other CUDA tables.
"""

from . import _cuda_table
from ._harness import Workload

__all__ = ["workloads", "main"]


def _setup(make, shape, integers=0):
    """Setup for `make(t, x)` -> a zero-argument callable, on a float32 (or, with
    `integers` > 0, an int64 in [0, integers)) CUDA tensor of `shape`."""
    def setup(name):
        t = _cuda_table.tensor_lib(name)
        t.manual_seed(0)
        if integers:
            x = t.randint(0, integers, shape, device="cuda")
        else:
            x = t.randn(*shape, device="cuda")
        return _cuda_table.synced(make(t, x), t)
    return setup


def _searchsorted(t, x):
    boundaries = t.sort(t.randn(4096, device="cuda")).values
    return lambda: t.searchsorted(boundaries, x)


def workloads(quick=False):
    """The workloads; `quick` shrinks every size (for a smoke run on the simulator)."""
    rows, cols = (4, 8) if quick else (8192, 256)          # many short rows
    brows, bcols = (2, 40) if quick else (32, 32768)       # vocabulary-sized rows
    long_n = 100 if quick else 1 << 22                     # one long row
    sort_n = 200 if quick else 10_000_000                  # the sort of 1e7
    g = "cuda"
    f4, i8 = 4.0, 8.0
    return [
        Workload(f"sort {rows}x{cols} (shared memory)", _setup(lambda t, x: lambda: t.sort(x, -1), (rows, cols)), g,
                 work=(f4 * 2 + i8) * rows * cols, unit="B"),
        Workload(f"sort {brows}x{bcols} (global stages)", _setup(lambda t, x: lambda: t.sort(x, -1), (brows, bcols)),
                 g, work=(f4 * 2 + i8) * brows * bcols, unit="B"),
        Workload(f"sort {sort_n:.0e} (one row)", _setup(lambda t, x: lambda: t.sort(x), (sort_n,)), g,
                 work=(f4 * 2 + i8) * sort_n, unit="B"),
        Workload(f"argsort {long_n} (one row)", _setup(lambda t, x: lambda: t.argsort(x), (long_n,)), g,
                 work=(f4 + i8) * long_n, unit="B"),
        Workload(f"topk k=10 of {brows}x{bcols}", _setup(lambda t, x: lambda: t.topk(x, 10), (brows, bcols)), g,
                 work=f4 * brows * bcols, unit="B"),
        Workload(f"topk k=1000 of {brows}x{bcols}", _setup(lambda t, x: lambda: t.topk(x, min(1000, bcols)),
                                                          (brows, bcols)), g, work=f4 * brows * bcols, unit="B"),
        Workload(f"median of {long_n}", _setup(lambda t, x: lambda: t.median(x), (long_n,)), g,
                 work=f4 * long_n, unit="B"),
        Workload(f"cumsum {rows}x{cols} dim=-1", _setup(lambda t, x: lambda: t.cumsum(x, -1), (rows, cols)), g,
                 work=2 * f4 * rows * cols, unit="B"),
        Workload(f"cumsum {long_n} (one row)", _setup(lambda t, x: lambda: t.cumsum(x, 0), (long_n,)), g,
                 work=2 * f4 * long_n, unit="B"),
        Workload(f"cummax {brows}x{bcols}", _setup(lambda t, x: lambda: t.cummax(x, -1), (brows, bcols)), g,
                 work=(2 * f4 + i8) * brows * bcols, unit="B"),
        Workload(f"unique of {long_n} ints < 1000", _setup(lambda t, x: lambda: t.unique(x), (long_n,), 1000), g,
                 work=i8 * long_n, unit="B"),
        Workload(f"searchsorted {long_n} in 4096", _setup(_searchsorted, (long_n,)), g,
                 work=(f4 + i8) * long_n, unit="B"),
        Workload(f"bincount of {long_n} ints < 1000", _setup(lambda t, x: lambda: t.bincount(x), (long_n,), 1000),
                 g, work=i8 * long_n, unit="B"),
    ]


def main(argv=None):
    """Print the table: medians, ember/torch time ratio and rates."""
    _cuda_table.main("python -m benchmarks.cuda_sort_scan", "ember sorting/scans", workloads, argv)


if __name__ == "__main__":
    main()
