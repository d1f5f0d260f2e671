"""ember on CUDA: launch overhead, elementwise bandwidth, reductions, matmul (float32 and
bfloat16), host-to-device copies and two training steps (an MLP 784-512-512-10 and the
PyTorch MNIST example's conv net, SGD, batch 64), side by side with PyTorch's CUDA build.

Run on a GPU machine: ``python -m benchmarks.cuda_ops`` (``--quick`` uses tiny sizes, for
checking the script itself, e.g. under NUMBA_ENABLE_CUDASIM=1). Every timed call ends
with a device synchronisation except the "queue" rows, which time how long the host takes
to launch an op (the launch overhead the issue asks to measure). Rates are compared with
the device's peak memory bandwidth (from its memory clock and bus width).

`tools/gpu_run.py` runs this table (with the measured copy bandwidth as `--bandwidth`)
together with the others and the CUDA tests on a GPU machine.
"""

from . import _cuda_table
from ._harness import Workload

__all__ = ["workloads", "main"]


def _op(expr, n, sync=True, dtype="float32"):
    """Setup for `expr` over float vectors a, b (and out) of n elements on the GPU."""
    def setup(lib):
        t = _cuda_table.tensor_lib(lib)
        t.manual_seed(0)
        dt = getattr(t, dtype)
        a = t.rand(n, device="cuda").to(dt)
        b = t.rand(n, device="cuda").to(dt)
        out = t.empty(n, device="cuda", dtype=dt)
        env = {"t": t, "a": a, "b": b, "out": out}
        fn = eval("lambda: " + expr, env)  # noqa: S307 - a fixed expression of this module
        return _cuda_table.synced(fn, t) if sync else fn
    return setup


def _matrix_op(kind, shape, dtype="float32"):
    def setup(lib):
        t = _cuda_table.tensor_lib(lib)
        t.manual_seed(0)
        dt = getattr(t, dtype)
        x = t.rand(*shape, device="cuda").to(dt)
        fn = {"matmul": lambda: x @ x, "sum_rows": lambda: x.sum(1),
              "sum_cols": lambda: x.sum(0)}[kind]
        return _cuda_table.synced(fn, t)
    return setup


def _h2d(n):
    def setup(lib):
        t = _cuda_table.tensor_lib(lib)
        host = t.rand(n).pin_memory()
        return _cuda_table.synced(lambda: host.to("cuda", non_blocking=True), t)
    return setup


def _nn_libs(name):
    """(tensor, nn, functional, optim) modules of `name`."""
    if name == "ember":
        import ember_autograd  # noqa: F401 - installs the recording wrapper
        import ember_nn
        import ember_optim
        import ember_tensor
        return ember_tensor, ember_nn, ember_nn.functional, ember_optim
    import torch
    return torch, torch.nn, torch.nn.functional, torch.optim


def _mnist_net(nn, size, c1, c2, hidden):
    """PyTorch's examples/mnist net without dropout: conv 3x3 x2, max-pool, linear x2."""
    flat = c2 * ((size - 4) // 2) ** 2
    return nn.Sequential(nn.Conv2d(1, c1, 3), nn.ReLU(), nn.Conv2d(c1, c2, 3), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Flatten(), nn.Linear(flat, hidden), nn.ReLU(),
                         nn.Linear(hidden, 10))


def _mlp(nn, features, hidden):
    return nn.Sequential(nn.Linear(features, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                         nn.Linear(hidden, 10))


_SGD_MOMENTUM = ("SGD", dict(lr=0.01, momentum=0.9))


def _training_step(make_model, input_shape, optimizer=_SGD_MOMENTUM):
    """One training step (zero_grad, forward, log_softmax + nll_loss, backward, step) on the
    GPU; `optimizer` is (class name, options), SGD with momentum by default."""
    name, options = optimizer

    def setup(lib):
        t, nn, F, optim = _nn_libs(lib)
        t.manual_seed(0)
        model = make_model(nn).to("cuda")
        optimizer = getattr(optim, name)(model.parameters(), **options)
        data = t.randn(*input_shape, device="cuda")
        target = t.randint(0, 10, (input_shape[0],), device="cuda")
        synchronize = t.cuda.synchronize

        def step():
            optimizer.zero_grad()
            loss = F.nll_loss(F.log_softmax(model(data), dim=1), target)
            loss.backward()
            optimizer.step()
            synchronize()
        return step
    return setup


def _training_workloads(quick):
    # --quick: tiny layers, so that the simulator runs a step in seconds.
    batch, size, c1, c2, hidden = (2, 8, 2, 4, 8) if quick else (64, 28, 32, 64, 128)
    features, width = (16, 8) if quick else (784, 512)
    mlp_flops = 3 * 2 * batch * (features * width + width * width + width * 10)  # fwd + 2x bwd
    g = "cuda"
    return [
        Workload(f"MNIST conv net SGD step, batch {batch}",
                 _training_step(lambda nn: _mnist_net(nn, size, c1, c2, hidden), (batch, 1, size, size)), g),
        Workload(f"MLP {features}-{width}-{width}-10 SGD step, batch {batch}",
                 _training_step(lambda nn: _mlp(nn, features, width), (batch, features)), g,
                 work=mlp_flops, unit="FLOP"),
        Workload(f"MLP {features}-{width}-{width}-10 Adam step, batch {batch}",
                 _training_step(lambda nn: _mlp(nn, features, width), (batch, features), ("Adam", dict(lr=1e-3))),
                 g, work=mlp_flops, unit="FLOP"),
    ]


def workloads(quick=False):
    """The CUDA workloads; `quick` shrinks every size (for a smoke run)."""
    n = 1 << 10 if quick else 100_000_000  # 400 MB a float32 operand: far past any cache
    m = 16 if quick else 4096
    rows = (16, 64) if quick else (4096, 2048)
    g = "cuda"
    return [
        Workload("queue add 8 elem (host launch cost)", _op("t.add(a, b, out=out)", 8, sync=False), g),
        Workload("add 8 elem + sync", _op("t.add(a, b, out=out)", 8), g),
        Workload(f"add {n:.0e} f32 (out=)", _op("t.add(a, b, out=out)", n), g, work=12.0 * n, unit="B"),
        Workload(f"a + b {n:.0e} f32", _op("a + b", n), g, work=12.0 * n, unit="B"),
        Workload(f"a * 2 {n:.0e} f32", _op("a * 2", n), g, work=8.0 * n, unit="B"),
        Workload(f"exp {n:.0e} f32", _op("a.exp()", n), g, work=8.0 * n, unit="B"),
        Workload(f"a + b {n:.0e} bf16", _op("a + b", n, dtype="bfloat16"), g, work=6.0 * n, unit="B"),
        Workload(f"sum {n:.0e} f32", _op("a.sum()", n), g, work=4.0 * n, unit="B"),
        Workload(f"sum dim=1 {rows} f32", _matrix_op("sum_rows", rows), g,
                 work=4.0 * rows[0] * rows[1], unit="B"),
        Workload(f"sum dim=0 {rows} f32", _matrix_op("sum_cols", rows), g,
                 work=4.0 * rows[0] * rows[1], unit="B"),
        Workload(f"matmul {m}x{m} f32", _matrix_op("matmul", (m, m)), g, work=2.0 * m ** 3, unit="FLOP"),
        Workload(f"matmul {m}x{m} bf16", _matrix_op("matmul", (m, m), "bfloat16"), g,
                 work=2.0 * m ** 3, unit="FLOP"),
        Workload(f"H2D copy {n:.0e} f32 pinned", _h2d(n), g, work=4.0 * n, unit="B"),
    ] + _training_workloads(quick)


def main(argv=None):
    """Print the CUDA table: medians, ember/torch time ratio and rates."""
    _cuda_table.main("python -m benchmarks.cuda_ops", "ember CUDA benchmarks", workloads, argv)


if __name__ == "__main__":
    main()
