"""The two ceilings of a GPU, measured rather than read off a datasheet: a large
device-to-device copy (bytes read plus bytes written per second: the memory bandwidth
an elementwise op can hope for) and large matrix products in float32 and bfloat16 (the
arithmetic rate cuBLAS reaches), each through ember and through PyTorch's CUDA build.

Run on a GPU machine: ``python -m benchmarks.cuda_ceilings`` (``--quick``: tiny sizes,
to check the script under NUMBA_ENABLE_CUDASIM=1). `tools/gpu_run.py` runs it first and
rates the other tables' bytes against the copy bandwidth it measures.
"""

from . import _cuda_table
from ._harness import Workload

__all__ = ["workloads", "main", "COPY_ROW"]

COPY_ROW = "device-to-device copy"  # the row gpu_run reads the copy bandwidth from


def _copy(n):
    def setup(lib):
        t = _cuda_table.tensor_lib(lib)
        src = t.rand(n, device="cuda")
        dst = t.empty(n, device="cuda")
        return _cuda_table.synced(lambda: dst.copy_(src), t)
    return setup


def _matmul(m, dtype):
    def setup(lib):
        t = _cuda_table.tensor_lib(lib)
        t.manual_seed(0)
        a = t.randn(m, m, device="cuda").to(getattr(t, dtype))  # random data: zeros run faster
        b = t.randn(m, m, device="cuda").to(getattr(t, dtype))
        out = t.empty(m, m, device="cuda", dtype=getattr(t, dtype))
        return _cuda_table.synced(lambda: t.matmul(a, b, out=out), t)
    return setup


def workloads(quick=False):
    """The copy and the matrix products; `quick` shrinks them (for a smoke run)."""
    n = 1 << 10 if quick else 1 << 28  # 1 GiB of float32
    m = 16 if quick else 8192
    g = "cuda"
    return [
        Workload(f"{COPY_ROW} {4 * n / 2 ** 30:g} GiB f32", _copy(n), g, work=8.0 * n, unit="B"),
        Workload(f"matmul {m}x{m} f32", _matmul(m, "float32"), g, work=2.0 * m ** 3, unit="FLOP"),
        Workload(f"matmul {m}x{m} bf16", _matmul(m, "bfloat16"), g, work=2.0 * m ** 3, unit="FLOP"),
    ]


def main(argv=None):
    """Print the table: medians, ember/torch time ratio and rates."""
    _cuda_table.main("python -m benchmarks.cuda_ceilings", "GPU ceilings", workloads, argv)


if __name__ == "__main__":
    main()
