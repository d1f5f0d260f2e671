"""ember-nn workloads: conv2d forward and forward+backward, max_pool2d, batch_norm,
softmax/log_softmax, cross_entropy, side by side with PyTorch.

Run alone: ``python -m benchmarks.nn_ops [--no-torch]`` (prints a markdown table).
"""
import argparse
import importlib.util

from ._harness import Workload, fmt_time, run


def _libs(name):
    if name == "ember":
        import ember_autograd  # noqa: F401 - backward()
        import ember_nn.functional as F
        import ember_tensor as t
    else:
        import torch as t
        import torch.nn.functional as F
    return t, F


def _conv(shape, out_channels, backward):
    def setup(lib):
        t, F = _libs(lib)
        t.manual_seed(0)
        x = t.randn(*shape, requires_grad=backward)
        w = t.randn(out_channels, shape[1], 3, 3, requires_grad=backward)
        b = t.randn(out_channels, requires_grad=backward)
        if not backward:
            return lambda: F.conv2d(x, w, b, padding=1)

        def step():
            x.grad = w.grad = b.grad = None
            F.conv2d(x, w, b, padding=1).sum().backward()
        return step
    return setup


def _max_pool(lib):
    t, F = _libs(lib)
    x = t.randn(32, 64, 32, 32)
    return lambda: F.max_pool2d(x, 2)


def _batch_norm(backward):
    def setup(lib):
        t, F = _libs(lib)
        x = t.randn(32, 64, 16, 16, requires_grad=backward)
        w, b = t.ones(64, requires_grad=backward), t.zeros(64, requires_grad=backward)
        rm, rv = t.zeros(64), t.ones(64)
        if not backward:
            return lambda: F.batch_norm(x, rm, rv, w, b, True)

        def step():
            x.grad = w.grad = b.grad = None
            F.batch_norm(x, rm, rv, w, b, True).sum().backward()
        return step
    return setup


def _softmax(name, dim, backward):
    def setup(lib):
        t, F = _libs(lib)
        t.manual_seed(0)
        x = t.randn(1000, 1000, requires_grad=backward)
        fn = getattr(F, name)
        if not backward:
            return lambda: fn(x, dim)
        grad = t.randn(1000, 1000)

        def step():
            x.grad = None
            fn(x, dim).backward(grad)
        return step
    return setup


def _cross_entropy(backward):
    def setup(lib):
        t, F = _libs(lib)
        t.manual_seed(0)
        logits = t.randn(256, 1000, requires_grad=backward)
        target = t.randint(0, 1000, (256,))
        if not backward:
            return lambda: F.cross_entropy(logits, target)

        def step():
            logits.grad = None
            F.cross_entropy(logits, target).backward()
        return step
    return setup


def _conv_flops(shape, out_channels, passes):
    n, c, h, w = shape
    return 2.0 * n * out_channels * h * w * c * 9 * passes


WORKLOADS = [
    Workload("conv2d fwd (32,3,32,32)->64 3x3", _conv((32, 3, 32, 32), 64, False), group="nn",
             work=_conv_flops((32, 3, 32, 32), 64, 1), unit="FLOP", repeats=5),
    Workload("conv2d fwd+bwd (32,3,32,32)->64 3x3", _conv((32, 3, 32, 32), 64, True), group="nn",
             work=_conv_flops((32, 3, 32, 32), 64, 3), unit="FLOP", repeats=5),
    Workload("conv2d fwd (64,64,16,16)->64 3x3", _conv((64, 64, 16, 16), 64, False), group="nn",
             work=_conv_flops((64, 64, 16, 16), 64, 1), unit="FLOP", repeats=5),
    Workload("conv2d fwd+bwd (64,64,16,16)->64 3x3", _conv((64, 64, 16, 16), 64, True), group="nn",
             work=_conv_flops((64, 64, 16, 16), 64, 3), unit="FLOP", repeats=5),
    Workload("max_pool2d 2x2 (32,64,32,32)", _max_pool, group="nn", work=4 * 32 * 64 * 32 * 32 * 1.25, unit="B"),
    Workload("batch_norm train (32,64,16,16)", _batch_norm(False), group="nn"),
    Workload("batch_norm train fwd+bwd (32,64,16,16)", _batch_norm(True), group="nn"),
    Workload("softmax (1000,1000) dim=-1", _softmax("softmax", -1, False), group="nn", work=8e6, unit="B"),
    Workload("softmax (1000,1000) dim=0", _softmax("softmax", 0, False), group="nn", work=8e6, unit="B"),
    Workload("log_softmax fwd+bwd (1000,1000) dim=-1", _softmax("log_softmax", -1, True), group="nn"),
    Workload("cross_entropy (256,1000)", _cross_entropy(False), group="nn"),
    Workload("cross_entropy fwd+bwd (256,1000)", _cross_entropy(True), group="nn"),
]


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.nn_ops", description=__doc__.splitlines()[0])
    parser.add_argument("--no-torch", action="store_true", help="time ember only")
    args = parser.parse_args(argv)
    available = ["ember"]
    if not args.no_torch and importlib.util.find_spec("torch") is not None:
        available.append("torch")
    print("| workload | ember | torch | ember/torch |")
    print("|---|---|---|---|")
    for w in WORKLOADS:
        res = run(w, available)
        e, tch = res.get("ember"), res.get("torch")
        cells = [f"{fmt_time(r[0])}" if r else "–" for r in (e, tch)]
        ratio = f"{e[0] / tch[0]:.2f}" if e and tch else "–"
        print(f"| {w.name} | {cells[0]} | {cells[1]} | {ratio} |", flush=True)


if __name__ == "__main__":
    main()
