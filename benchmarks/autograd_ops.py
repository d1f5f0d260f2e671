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
