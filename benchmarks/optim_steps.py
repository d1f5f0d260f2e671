"""ember-optim workloads: one optimizer step over 10M float32 parameters in 50 tensors.

``python -m benchmarks.optim_steps`` prints a table; ember runs its default (fused
one-pass kernels) and the plain-op form (``fused=False``); PyTorch runs its CPU default
(the for-loop implementation; ``foreach=True`` is shown too).
"""
import importlib.util

from ._harness import Workload, fmt_time, run

TOTAL = 10_000_000
TENSORS = 50


def _setup(optimizer, kwargs, ember_kwargs=None, torch_kwargs=None):
    def setup(lib):
        if lib == "ember":
            import ember_tensor as t
            import ember_optim as optim
            extra = ember_kwargs or {}
        else:
            import torch as t
            import torch.optim as optim
            extra = torch_kwargs or {}
        t.manual_seed(0)
        params = [t.randn(TOTAL // TENSORS, requires_grad=True) for _ in range(TENSORS)]
        for p in params:
            p.grad = t.randn(TOTAL // TENSORS)
        opt = getattr(optim, optimizer)(params, **kwargs, **extra)
        return opt.step
    return setup


# Bytes a one-pass step must move: SGD-momentum reads p, g, buf and writes p, buf (5 x 4 B);
# Adam reads p, g, m, v and writes p, m, v (7 x 4 B).
WORKLOADS = [
    Workload("SGD momentum=0.9 step, 10M f32 in 50 tensors", _setup("SGD", dict(lr=0.01, momentum=0.9)),
             group="optim", work=20 * TOTAL, unit="B", repeats=5, number=3),
    Workload("  same, ember fused=False / torch foreach=True", _setup(
        "SGD", dict(lr=0.01, momentum=0.9), dict(fused=False), dict(foreach=True)),
        group="optim", work=20 * TOTAL, unit="B", repeats=5, number=3),
    Workload("Adam step, 10M f32 in 50 tensors", _setup("Adam", dict(lr=1e-3)),
             group="optim", work=28 * TOTAL, unit="B", repeats=5, number=3),
    Workload("  same, ember fused=False / torch foreach=True", _setup(
        "Adam", dict(lr=1e-3), dict(fused=False), dict(foreach=True)),
        group="optim", work=28 * TOTAL, unit="B", repeats=5, number=3),
]


def main():
    available = ["ember"] + (["torch"] if importlib.util.find_spec("torch") else [])
    print("| workload | ember | torch | ember/torch | ember GB/s | torch GB/s |")
    print("|---|---|---|---|---|---|")
    for w in WORKLOADS:
        res = run(w, available)
        e, tch = res.get("ember"), res.get("torch")
        ratio = f"{e[0] / tch[0]:.2f}" if e and tch else "–"
        rates = [f"{w.work / r[0] / 1e9:.1f}" if r else "–" for r in (e, tch)]
        print(f"| {w.name} | {fmt_time(e[0])} | {fmt_time(tch[0]) if tch else '–'} | {ratio} | "
              f"{rates[0]} | {rates[1]} |", flush=True)


if __name__ == "__main__":
    main()
