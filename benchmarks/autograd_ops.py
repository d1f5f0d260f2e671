"""ember-autograd workloads: the recording wrapper's per-op overhead on small tensors, a
small graph's backward, and a hand-written MLP 784-512-512-10 (batch 128) forward+backward."""
from ._harness import Workload


def _lib(name):
    if name == "ember":
        import ember_autograd  # noqa: F401  (installs the recording wrapper)
        import ember_tensor as lib
    else:
        import torch as lib
    return lib


def _recorded_op(op):
    """One op on 8-element tensors that require grad: the op plus recording its node."""
    def setup(lib):
        t = _lib(lib)
        a = t.ones(8, requires_grad=True)
        b = t.ones(8, requires_grad=True)
        return {"add": lambda: a + b, "mul": lambda: a * b, "exp": lambda: a.exp(),
                "sum": lambda: a.sum(), "view": lambda: a.view(2, 4)}[op]
    return setup


def _no_grad_op(lib):
    t = _lib(lib)
    a, b = t.ones(8), t.ones(8)
    return lambda: a + b


def _small_backward(lib):
    """Forward and backward of a 5-op graph on 8 elements: engine cost per node."""
    t = _lib(lib)
    a = t.ones(8, requires_grad=True)
    b = t.ones(8, requires_grad=True)

    def step():
        ((a * b).exp() + a).sigmoid().sum().backward()
    return step


def _mlp(lib, batch=128):
    """x -> relu(x W1 + b1) -> relu(. W2 + b2) -> . W3 + b3 -> log-softmax NLL, then backward."""
    t = _lib(lib)
    t.manual_seed(0)
    sizes = [(784, 512), (512, 512), (512, 10)]
    params = []
    for fan_in, fan_out in sizes:
        w = (t.randn(fan_in, fan_out) * (1.0 / fan_in ** 0.5)).requires_grad_()
        b = t.zeros(fan_out, requires_grad=True)
        params += [w, b]
    x = t.randn(batch, 784)
    target_mask = t.zeros(batch, 10)
    target_mask[t.arange(batch), t.arange(batch) % 10] = 1.0

    def step():
        h = x
        for i in range(0, 6, 2):
            h = t.addmm(params[i + 1], h, params[i])
            if i < 4:
                h = h.relu()
        logp = h - h.logsumexp(1, keepdim=True)
        loss = -(logp * target_mask).sum() / batch
        loss.backward()
        for p in params:
            p.grad = None
    return step


WORKLOADS = [
    Workload("autograd: a + b, no grad (8 elems)", _no_grad_op, group="autograd"),
    Workload("autograd: a + b recorded (8 elems)", _recorded_op("add"), group="autograd"),
    Workload("autograd: a * b recorded (8 elems)", _recorded_op("mul"), group="autograd"),
    Workload("autograd: a.exp() recorded (8 elems)", _recorded_op("exp"), group="autograd"),
    Workload("autograd: a.sum() recorded (8 elems)", _recorded_op("sum"), group="autograd"),
    Workload("autograd: a.view(2, 4) recorded", _recorded_op("view"), group="autograd"),
    Workload("autograd: 5-op graph forward+backward (8 elems)", _small_backward, group="autograd"),
    Workload("autograd: MLP 784-512-512-10 b128 fwd+bwd", _mlp, group="autograd",
             work=3 * 2 * 128 * (784 * 512 + 512 * 512 + 512 * 10), unit="FLOP", repeats=5),
]


def recording_overhead(libs=("ember", "torch"), rounds=25, number=3000):
    """What recording adds to one op call, per library: best-of-`rounds` CPU time
    (``time.process_time``, so other processes on a loaded machine do not count) of the op
    on tensors that require grad minus the same op on tensors that do not.

    Returns {op: {lib: (no_grad_us, recorded_us)}}.
    """
    import gc
    import time

    def cpu_time(fn):
        gc.disable()
        start = time.process_time()
        for _ in range(number):
            fn()
        elapsed = time.process_time() - start
        gc.enable()
        return elapsed / number * 1e6

    def pairs(lib):
        t = _lib(lib)
        a, b = t.ones(8, requires_grad=True), t.ones(8, requires_grad=True)
        c, d = t.ones(8), t.ones(8)
        return {"a + b": (lambda: c + d, lambda: a + b), "a * b": (lambda: c * d, lambda: a * b),
                "a.exp()": (lambda: c.exp(), lambda: a.exp()), "a.view(2, 4)": (lambda: c.view(2, 4),
                                                                              lambda: a.view(2, 4)),
                "a.sum()": (lambda: c.sum(), lambda: a.sum())}

    fns = {lib: pairs(lib) for lib in libs}
    results = {}
    for op in fns[libs[0]]:
        best = {lib: [float("inf"), float("inf")] for lib in libs}
        for lib in libs:
            for fn in fns[lib][op]:
                fn()
        for _ in range(rounds):
            for lib in libs:
                for k, fn in enumerate(fns[lib][op]):
                    best[lib][k] = min(best[lib][k], cpu_time(fn))
        results[op] = {lib: tuple(best[lib]) for lib in libs}
    return results


if __name__ == "__main__":
    # python -m benchmarks.autograd_ops: the recording-overhead table of the autograd README.
    import importlib.util

    libs = ("ember", "torch") if importlib.util.find_spec("torch") else ("ember",)
    print("| op (8 elems) | ember no grad → recorded | torch no grad → recorded | overhead ember/torch |")
    print("|---|---|---|---|")
    for op, res in recording_overhead(libs).items():
        e = res["ember"]
        cells = [f"{e[0]:.2f} → {e[1]:.2f} us (+{e[1] - e[0]:.2f})"]
        ratio = "–"
        if "torch" in res:
            t = res["torch"]
            cells.append(f"{t[0]:.2f} → {t[1]:.2f} us (+{t[1] - t[0]:.2f})")
            ratio = f"{(e[1] - e[0]) / max(t[1] - t[0], 1e-3):.1f}"
        else:
            cells.append("–")
        print(f"| {op} | {cells[0]} | {cells[1]} | {ratio} |")
