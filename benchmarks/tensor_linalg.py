"""ember-tensor linear-algebra workloads: float32 matmul (2-d and batched), cat of 100
tensors, einsum and a few LAPACK factorizations, side by side with PyTorch.

Run alone: ``python -m benchmarks.tensor_linalg`` (or ``python -m benchmarks --group linalg``).
"""
from ._harness import Workload, fmt_time, run

__all__ = ["WORKLOADS"]


def _lib(name):
    if name == "ember":
        import ember_tensor as lib
    else:
        import torch as lib
    return lib


def _matmul(batch, n):
    def setup(lib):
        t = _lib(lib)
        t.manual_seed(0)
        shape = (batch, n, n) if batch else (n, n)
        a, b = t.rand(*shape), t.rand(*shape)
        return lambda: a @ b
    return setup


def _cat(count, shape):
    def setup(lib):
        t = _lib(lib)
        pieces = [t.rand(*shape) for _ in range(count)]
        return lambda: t.cat(pieces, 0)
    return setup


def _einsum(lib):
    t = _lib(lib)
    a, b = t.rand(32, 128, 64), t.rand(32, 64, 128)
    return lambda: t.einsum("bij,bjk->bik", a, b)


def _factorization(op, n):
    def setup(lib):
        t = _lib(lib)
        t.manual_seed(0)
        a = t.rand(n, n, dtype=t.float64)
        spd = a @ a.mT + n * t.eye(n, dtype=t.float64)
        fn = {"inv": lambda: t.linalg.inv(spd), "cholesky": lambda: t.linalg.cholesky(spd),
              "solve": lambda: t.linalg.solve(spd, a), "svd": lambda: t.linalg.svd(a)}[op]
        return fn
    return setup


def _gemm_flops(batch, n):
    return 2.0 * max(batch, 1) * n ** 3


WORKLOADS = [
    Workload("matmul 256x256 f32", _matmul(0, 256), group="linalg", work=_gemm_flops(0, 256), unit="FLOP"),
    Workload("matmul 1024x1024 f32", _matmul(0, 1024), group="linalg", work=_gemm_flops(0, 1024), unit="FLOP"),
    Workload("matmul 2048x2048 f32", _matmul(0, 2048), group="linalg", work=_gemm_flops(0, 2048), unit="FLOP",
             repeats=5),
    Workload("bmm 64x(128x128) f32", _matmul(64, 128), group="linalg", work=_gemm_flops(64, 128), unit="FLOP"),
    Workload("bmm 8x(512x512) f32", _matmul(8, 512), group="linalg", work=_gemm_flops(8, 512), unit="FLOP"),
    Workload("einsum bij,bjk->bik 32x128x64x128", _einsum, group="linalg",
             work=2.0 * 32 * 128 * 64 * 128, unit="FLOP"),
    Workload("cat 100 x (100, 1000) f32", _cat(100, (100, 1000)), group="linalg", work=2 * 4 * 100 * 100 * 1000,
             unit="B"),
    Workload("linalg.inv 256 f64", _factorization("inv", 256), group="linalg"),
    Workload("linalg.cholesky 256 f64", _factorization("cholesky", 256), group="linalg"),
    Workload("linalg.solve 256 f64 (256 rhs)", _factorization("solve", 256), group="linalg"),
    Workload("linalg.svd 128 f64", _factorization("svd", 128), group="linalg"),
]


def main():
    """Print the linalg table: medians, ember/torch time ratio and GFLOP/s (or GB/s)."""
    import importlib.util
    available = ["ember"] + (["torch"] if importlib.util.find_spec("torch") else [])
    print("| workload | ember | torch | ember/torch time | ember rate | torch rate |")
    print("|---|---|---|---|---|---|")
    for w in WORKLOADS:
        res = run(w, available)
        e, tch = res.get("ember"), res.get("torch")
        ratio = f"{e[0] / tch[0]:.2f}" if e and tch else "–"

        def rate(r):
            if not r or not w.unit:
                return "–"
            return f"{w.work / r[0] / 1e9:.1f} {'GFLOP/s' if w.unit == 'FLOP' else 'GB/s'}"
        print(f"| {w.name} | {fmt_time(e[0])} | {fmt_time(tch[0]) if tch else '–'} | {ratio} | {rate(e)} | "
              f"{rate(tch)} |", flush=True)


if __name__ == "__main__":
    main()
