"""Which grid-stride launch shape moves elementwise data fastest: ember's add, mul by a
number and exp over 1e8 float32 elements under several (threads per block, blocks per
multiprocessor) shapes, beside PyTorch's kernels.

`_backends.cuda.launch.grid_stride` launches `min(ceil(n / block), cap)` blocks of
`block` threads, each thread looping over the elements a grid apart; the cap (32 blocks a
multiprocessor by default) bounds the launch, and one thread per element ("uncapped")
drops the loop. This experiment sets the two module values directly (it is a tuning
tool, not an API) and restores them after each row.

Run on a GPU machine: ``python -m benchmarks.cuda_launch_config [--bandwidth GB/s]``
(``--quick``: tiny sizes, under NUMBA_ENABLE_CUDASIM=1 the shapes do not apply).
"""
from . import _cuda_table
from ._harness import Workload

__all__ = ["workloads", "main", "SHAPES"]

# (threads per block, blocks per multiprocessor; None: one thread per element)
SHAPES = [(256, 32), (256, None), (512, 16), (512, None), (1024, None), (128, 64)]


def _shaped(expr, n, shape):
    block, per_sm = shape

    def setup(lib):
        t = _cuda_table.tensor_lib(lib)
        t.manual_seed(0)
        a = t.rand(n, device="cuda")
        b = t.rand(n, device="cuda")
        out = t.empty(n, device="cuda")
        fn = {"add": lambda: t.add(a, b, out=out), "mul": lambda: t.mul(a, 2.0, out=out),
              "exp": lambda: t.exp(a, out=out)}[expr]
        if lib != "ember":
            return _cuda_table.synced(fn, t)
        from ember_tensor._backends.cuda import launch
        from numba import cuda

        def shaped():
            saved = launch._BLOCK, launch._max_blocks
            sms = getattr(cuda.get_current_device(), "MULTIPROCESSOR_COUNT", 1)  # (1: the simulator)
            launch._BLOCK, launch._max_blocks = block, (per_sm * sms if per_sm else 1 << 30)
            try:
                fn()
                t.cuda.synchronize()
            finally:
                launch._BLOCK, launch._max_blocks = saved
        return shaped
    return setup


def workloads(quick=False):
    """add / mul / exp over n float32 elements under each launch shape."""
    n = 1 << 10 if quick else 100_000_000
    rows = []
    for expr, nbytes in (("add", 12.0), ("mul", 8.0), ("exp", 8.0)):
        for shape in SHAPES:
            cap = f"{shape[1]}/SM" if shape[1] else "uncapped"
            rows.append(Workload(f"{expr} {n:.0e} f32, block {shape[0]}, {cap}", _shaped(expr, n, shape), "cuda",
                                 work=nbytes * n, unit="B"))
    return rows


def main(argv=None):
    """Print the table: medians, ember/torch time ratio and rates."""
    _cuda_table.main("python -m benchmarks.cuda_launch_config", "grid-stride launch shapes", workloads, argv)


if __name__ == "__main__":
    main()
