"""ember-vision's ResNet-18 beside torchvision's: forward (eval, no grad) at batch 1 and 32,
and one SGD training step at batch 32, all on 224x224 images.

Run: ``python -m benchmarks.vision_models`` (or ``python -m benchmarks --group vision``).
Issue 28's target: each within 1.2x of PyTorch + torchvision's time.
"""
import importlib.util

from ._harness import Workload, fmt_time, run

_TORCHVISION_LIBRARY = []


def _import_torchvision():
    """torchvision, even when its C++ ops fail to load (PyPI's CUDA wheels beside a CPU
    torch stop at two fake-op registrations, defined here first)."""
    import torch

    try:
        import torchvision
        return torchvision
    except RuntimeError as error:
        if "torchvision::" not in str(error):
            raise
    import sys
    for name in [m for m in sys.modules if m == "torchvision" or m.startswith("torchvision.")]:
        del sys.modules[name]
    library = torch.library.Library("torchvision", "FRAGMENT")
    for op in ("nms", "qnms"):
        library.define(f"{op}(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
    _TORCHVISION_LIBRARY.append(library)
    import torchvision
    return torchvision


def _libs(name):
    """(tensor, torchvision-like, grad-mode, optim, functional) modules of `name`."""
    if name == "ember":
        import ember_autograd
        import ember_nn.functional
        import ember_optim
        import ember_tensor
        import ember_vision
        return ember_tensor, ember_vision, ember_autograd, ember_optim, ember_nn.functional
    import torch
    return torch, _import_torchvision(), torch, torch.optim, torch.nn.functional


def _forward(batch):
    def setup(lib):
        t, vision, grad, _, _ = _libs(lib)
        t.manual_seed(0)
        model = vision.models.resnet18().eval()
        x = t.randn(batch, 3, 224, 224)

        def step():
            with grad.no_grad():
                model(x)
        return step
    return setup


def _training_step(batch):
    def setup(lib):
        t, vision, _, optim, F = _libs(lib)
        t.manual_seed(0)
        model = vision.models.resnet18()
        optimizer = optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        x, target = t.randn(batch, 3, 224, 224), t.randint(0, 1000, (batch,))

        def step():
            optimizer.zero_grad()
            F.cross_entropy(model(x), target).backward()
            optimizer.step()
        return step
    return setup


# resnet18 at 224x224: 1.82 GFLOP (multiply-adds x2) per image forward.
_FLOP = 2 * 1.82e9
WORKLOADS = [
    Workload("vision: resnet18 forward, batch 1, 224px", _forward(1), group="vision", repeats=7,
             work=_FLOP, unit="FLOP"),
    Workload("vision: resnet18 forward, batch 32, 224px", _forward(32), group="vision", repeats=3, number=1,
             work=32 * _FLOP, unit="FLOP"),
    Workload("vision: resnet18 SGD training step, batch 32, 224px", _training_step(32), group="vision", repeats=3,
             number=1, work=3 * 32 * _FLOP, unit="FLOP"),
]


def main():
    available = ["ember"] + (["torch"] if importlib.util.find_spec("torchvision") else [])
    print("| workload | ember | torch | ember/torch |")
    print("|---|---|---|---|")
    for w in WORKLOADS:
        res = run(w, available)
        e, tch = res.get("ember"), res.get("torch")
        ratio = f"{e[0] / tch[0]:.2f}" if e and tch else "–"
        cells = [f"{fmt_time(r[0])} ({fmt_time(r[1])}–{fmt_time(r[2])})" if r else "–" for r in (e, tch)]
        print(f"| {w.name} | {cells[0]} | {cells[1]} | {ratio} |", flush=True)


if __name__ == "__main__":
    main()
