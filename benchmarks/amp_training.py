"""Mixed precision side by side with PyTorch: the MLP 784-512-512-10 SGD step of
``nn_training`` under CPU ``autocast(dtype=bfloat16)``, next to the same step in float32,
and the bytes autograd saves for backward in each (issue 26: the autocast step within
1.0x of PyTorch's time, saved activations halved); and the CPU casts autocast makes
(float32 <-> float16, float32 -> bfloat16 on 1e7 elements).

Run: ``python -m benchmarks.amp_training`` (from the repository root, packages on
PYTHONPATH), or ``python -m benchmarks --group amp``.
"""
import importlib.util

from ._harness import Workload, fmt_time, run

BATCH = 256


def _libs(name):
    """(tensor module, nn module, functional module, optim module, autocast) of `name`."""
    if name == "ember":
        import ember_amp
        import ember_autograd  # noqa: F401  (installs the recording wrapper)
        import ember_nn
        import ember_optim
        import ember_tensor
        return ember_tensor, ember_nn, ember_nn.functional, ember_optim, ember_amp.autocast
    import torch
    return torch, torch.nn, torch.nn.functional, torch.optim, torch.autocast


def _mlp(nn):
    return nn.Sequential(nn.Flatten(), nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                         nn.Linear(512, 10))


def _training_step(amp, batch=BATCH):
    def setup(lib):
        t, nn, F, optim, autocast = _libs(lib)
        t.manual_seed(0)
        model = _mlp(nn)
        optimizer = optim.SGD(model.parameters(), lr=0.01, momentum=0.5)
        data = t.randn(batch, 1, 28, 28)
        target = t.randint(0, 10, (batch,))

        def step():
            optimizer.zero_grad()
            with autocast(device_type="cpu", dtype=t.bfloat16, enabled=amp):
                loss = F.cross_entropy(model(data), target)
            loss.backward()
            optimizer.step()
        return step
    return setup


def _flops(batch):
    return 3 * 2 * batch * (784 * 512 + 512 * 512 + 512 * 10)


CAST_N = 10_000_000


def _cast(source, target):
    def setup(lib):
        t = _libs(lib)[0]
        x = t.randn(CAST_N).to(getattr(t, source))
        return lambda: x.to(getattr(t, target))
    return setup


WORKLOADS = [
    Workload(f"amp: MLP 784-512-512-10 SGD step, batch {b}, {'autocast bf16' if amp else 'float32'}",
             _training_step(amp, b), group="amp", repeats=7, work=_flops(b), unit="FLOP")
    for b in (64, BATCH) for amp in (False, True)
] + [
    Workload(f"amp: cast 1e7 {source} -> {target}", _cast(source, target), group="amp", repeats=9,
             work=6 * CAST_N, unit="B")
    for source, target in (("float32", "float16"), ("float16", "float32"), ("float32", "bfloat16"))
]


def saved_bytes(lib, amp, batch=BATCH):
    """Bytes of the tensors autograd saves for backward in one forward pass of the MLP."""
    t, nn, F, _, autocast = _libs(lib)
    t.manual_seed(0)
    model = _mlp(nn)
    data, target = t.randn(batch, 1, 28, 28), t.randint(0, 10, (batch,))
    if lib == "torch":
        seen = {}

        def pack(x):
            seen[(x.data_ptr(), x.dtype, tuple(x.shape))] = x.numel() * x.element_size()
            return x

        with t.autograd.graph.saved_tensors_hooks(pack, lambda x: x):
            with autocast(device_type="cpu", dtype=t.bfloat16, enabled=amp):
                F.cross_entropy(model(data), target)
        return sum(seen.values())
    with autocast(device_type="cpu", dtype=t.bfloat16, enabled=amp):
        loss = F.cross_entropy(model(data), target)
    return _ember_saved_bytes(loss, set(id(p) for p in model.parameters()))


def _ember_saved_bytes(loss, parameter_ids):
    """Walk ember's graph from `loss` and add up the arrays its nodes saved (ember-autograd
    has no saved_tensors_hooks yet: a benchmark may look at the nodes' saved slots)."""
    seen, stack, total, arrays = set(), [loss.grad_fn], 0, set()
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        for saved in getattr(node, "_saved", None) or ():
            tensor = getattr(saved, "tensor", None)
            data = getattr(tensor, "_data", None) if tensor is not None else None
            if data is not None and hasattr(data, "nbytes") and id(data) not in arrays:
                arrays.add(id(data))
                total += data.nbytes
        stack.extend(next_node for next_node, _ in node.next_functions)
    return total


def main():
    available = ["ember"] + (["torch"] if importlib.util.find_spec("torch") else [])
    print("| workload | ember | torch | ember/torch |")
    print("|---|---|---|---|")
    for w in WORKLOADS:
        res = run(w, available)
        e, tch = res["ember"], res.get("torch")
        ratio = f"{e[0] / tch[0]:.2f}" if tch else "–"
        print(f"| {w.name} | {fmt_time(e[0])} | {fmt_time(tch[0]) if tch else '–'} | {ratio} |", flush=True)
    for lib in available:
        f32, bf16 = saved_bytes(lib, False), saved_bytes(lib, True)
        print(f"| {lib}: bytes saved for backward, batch {BATCH}: float32 {f32 / 1e6:.2f} MB, "
              f"autocast bf16 {bf16 / 1e6:.2f} MB ({bf16 / f32:.2f}x) |")


if __name__ == "__main__":
    main()
