"""ember-tensor workloads: small-op overhead, 1e7-element elementwise ops, reductions."""
from ._harness import Workload

N = 10_000_000


def _lib(name):
    if name == "ember":
        import ember_tensor as lib
    else:
        import torch as lib
    return lib


def _small(op):
    def setup(lib):
        t = _lib(lib)
        a, b = t.ones(8), t.ones(8)
        return {"add": lambda: a + b, "mul_scalar": lambda: a * 2.0, "exp": lambda: a.exp(),
                "view": lambda: a.view(2, 4), "sum": lambda: a.sum()}[op]
    return setup


def _small_mm(lib):
    t = _lib(lib)
    a, b = t.rand(16, 16), t.rand(16, 16)
    return lambda: t.mm(a, b)


def _small_chain(lib):
    # 20 elementwise ops on 8 elements, as issue 23's eager chain: per-op cost, four op kinds.
    t = _lib(lib)
    x, y = t.randn(8), t.randn(8)

    def chain():
        z = x
        for _ in range(5):
            z = t.relu(z * y + 0.5) - 0.25
        return z
    return chain


def _big_binary(op, out):
    def setup(lib):
        t = _lib(lib)
        a, b = t.rand(N), t.rand(N)
        c = t.empty(N)
        fn = getattr(t, op)
        return (lambda: fn(a, b, out=c)) if out else (lambda: fn(a, b))
    return setup


def _big_unary(op):
    def setup(lib):
        t = _lib(lib)
        a = t.rand(N)
        return lambda: getattr(a, op)()
    return setup


def _reduce(op, shape, dim):
    def setup(lib):
        t = _lib(lib)
        a = t.rand(*shape)
        fn = getattr(a, op)
        return (lambda: fn()) if dim is None else (lambda: fn(dim))
    return setup


WORKLOADS = [
    Workload("overhead: a + b (8 elems)", _small("add"), group="overhead"),
    Workload("overhead: a * 2.0 (8 elems)", _small("mul_scalar"), group="overhead"),
    Workload("overhead: a.exp() (8 elems)", _small("exp"), group="overhead"),
    Workload("overhead: a.view(2, 4)", _small("view"), group="overhead"),
    Workload("overhead: a.sum() (8 elems)", _small("sum"), group="overhead"),
    Workload("overhead: mm 16x16", _small_mm, group="overhead"),
    Workload("overhead: chain of 20 ops (8 elems)", _small_chain, group="overhead"),
    Workload("add 1e7 f32 (new output)", _big_binary("add", False), group="elementwise", work=12 * N, unit="B"),
    Workload("add 1e7 f32 (out=)", _big_binary("add", True), group="elementwise", work=12 * N, unit="B"),
    Workload("mul 1e7 f32 (out=)", _big_binary("mul", True), group="elementwise", work=12 * N, unit="B"),
    Workload("exp 1e7 f32", _big_unary("exp"), group="elementwise", work=8 * N, unit="B"),
    Workload("sigmoid 1e7 f32", _big_unary("sigmoid"), group="elementwise", work=8 * N, unit="B"),
    Workload("tanh 1e7 f32", _big_unary("tanh"), group="elementwise", work=8 * N, unit="B"),
    Workload("log 1e7 f32", _big_unary("log"), group="elementwise", work=8 * N, unit="B"),
    Workload("sum 1e7 f32 (all)", _reduce("sum", (N,), None), group="reduction", work=4 * N, unit="B"),
    Workload("sum (1000, 10000) dim=1", _reduce("sum", (1000, 10_000), 1), group="reduction", work=4 * N, unit="B"),
    Workload("sum (1000, 10000) dim=0", _reduce("sum", (1000, 10_000), 0), group="reduction", work=4 * N, unit="B"),
    Workload("amax 1e7 f32 (all)", _reduce("amax", (N,), None), group="reduction", work=4 * N, unit="B"),
    Workload("mean (1000, 10000) dim=1", _reduce("mean", (1000, 10_000), 1), group="reduction", work=4 * N, unit="B"),
]
