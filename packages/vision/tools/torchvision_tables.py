"""Regenerate ember-vision's committed tables from a real torchvision (a maintainer's tool,
never run by the package or its tests).

    python packages/vision/tools/torchvision_tables.py              # the tables
    python packages/vision/tools/torchvision_tables.py --fixtures   # the logits and transforms fixtures

Writes:
- ``src/ember_vision/models/_data/weights.json``: every weights entry of the models
  ember-vision provides (url, the keyword arguments of its transforms preset, meta without the
  categories), and ``_data/imagenet_categories.txt``;
- ``tests/data/state_dict_shapes.json.gz``: each model's state_dict keys and shapes, so the
  key check runs without torchvision.

torchvision wheels from PyPI are CUDA builds; on a CPU-only torch their ``_C`` fails to
load and the import stops at two fake-op registrations, which ``import_torchvision``
defines first.
"""
import contextlib
import gzip
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HERE / "tests"))
from torchvision_oracle import import_torchvision  # noqa: E402

MODELS = ["resnet18", "resnet34", "resnet50", "resnet101", "resnet152", "resnext50_32x4d", "resnext101_32x8d",
          "resnext101_64x4d", "wide_resnet50_2", "wide_resnet101_2", "densenet161", "densenet169", "densenet201",
          "efficientnet_b1", "efficientnet_b2", "efficientnet_b3", "efficientnet_b4", "efficientnet_b5",
          "efficientnet_b6", "efficientnet_b7", "shufflenet_v2_x0_5", "shufflenet_v2_x1_5", "shufflenet_v2_x2_0",
          "vit_b_32", "vit_l_16", "vit_l_32", "vit_h_14", "inception_v3", "convnext_tiny", "convnext_small",
          "convnext_base", "convnext_large", "swin_t", "swin_s", "swin_b", "swin_v2_t", "swin_v2_s", "swin_v2_b",
          "maxvit_t", "mnasnet0_5", "mnasnet0_75", "mnasnet1_0", "mnasnet1_3", "efficientnet_v2_s", "efficientnet_v2_m", "efficientnet_v2_l",
          *[f"regnet_{kind}_{size}" for kind, sizes in (("x", ["400mf", "800mf", "1_6gf", "3_2gf", "8gf", "16gf", "32gf"]),
                                                       ("y", ["400mf", "800mf", "1_6gf", "3_2gf", "8gf", "16gf", "32gf",
                                                              "128gf"]))
            for size in sizes],
          "vgg11", "vgg11_bn", "vgg13", "vgg13_bn", "vgg16", "vgg16_bn", "vgg19", "vgg19_bn", "alexnet",
          "squeezenet1_0", "squeezenet1_1", "densenet121", "mobilenet_v2", "mobilenet_v3_small",
          "mobilenet_v3_large", "efficientnet_b0", "shufflenet_v2_x1_0", "googlenet", "vit_b_16"]


@contextlib.contextmanager
def _no_random_init(torch):
    saved = {n: getattr(torch.nn.init, n) for n in dir(torch.nn.init) if n.endswith("_") and not n.startswith("_")}
    for name in saved:
        setattr(torch.nn.init, name, lambda tensor, *args, **kwargs: tensor)
    try:
        yield
    finally:
        for name, fn in saved.items():
            setattr(torch.nn.init, name, fn)

SEGMENTATION_MODELS = ["fcn_resnet50", "fcn_resnet101", "deeplabv3_resnet50", "deeplabv3_resnet101",
                       "deeplabv3_mobilenet_v3_large", "lraspp_mobilenet_v3_large"]


def main():
    torchvision = import_torchvision()
    import torch
    from torchvision.models import get_model, get_model_weights

    weights, category_lists = {}, {}
    shapes = {}
    for name in MODELS + SEGMENTATION_MODELS:
        for w in get_model_weights(name):
            t = w.transforms.keywords
            meta = {k: v for k, v in w.meta.items() if k != "categories"}
            categories = w.meta.get("categories")
            kind = None if categories is None else ("imagenet" if len(categories) == 1000 else "voc")
            if kind:
                category_lists[kind] = categories
            weights[f"{type(w).__name__}.{w.name}"] = {
                "url": w.url, "preset_class": w.transforms.func.__name__,
                "preset": {k: str(v).split(".")[-1] if k == "interpolation" else v for k, v in t.items()},
                "meta": meta, "categories": kind, "default": w == type(w).DEFAULT}
        kwargs = {"init_weights": False} if name in ("googlenet", "inception_v3") else {}
        if name in SEGMENTATION_MODELS:
            kwargs["weights_backbone"] = None
        if name.startswith("regnet"):  # computes its widths with tensors: no meta device, no random init
            with _no_random_init(torch):
                model = get_model(name, **kwargs)
        else:
            with torch.device("meta"):
                model = get_model(name, **kwargs)
        shapes[name] = [[k, list(v.shape)] for k, v in model.state_dict().items()]
    data = HERE / "src/ember_vision/models/_data"
    data.mkdir(parents=True, exist_ok=True)
    (data / "weights.json").write_text(json.dumps(weights, indent=1, sort_keys=True) + "\n")
    for kind, categories in category_lists.items():
        (data / f"{kind}_categories.txt").write_text("\n".join(categories) + "\n")
    (HERE / "tests/data").mkdir(exist_ok=True)
    with gzip.open(HERE / "tests/data/state_dict_shapes.json.gz", "wt") as f:
        f.write(json.dumps(shapes) + "\n")
    print(torchvision.__version__, len(weights), "weights entries,", len(shapes), "models")


if __name__ == "__main__" and "--fixtures" not in sys.argv:
    main()


def fixtures():
    """tests/data fixtures: resnet18's logits under NumPy-seeded weights, and a tiny
    torchvision ShuffleNetV2 written by ``torch.save`` with its logits."""
    import numpy as np
    import torch
    from seeded_weights import seeded_input, seeded_state_dict

    torchvision = import_torchvision()
    with gzip.open(HERE / "tests/data/state_dict_shapes.json.gz", "rt") as f:
        shapes = json.loads(f.read())
    model = torchvision.models.resnet18().eval()
    state = {k: torch.from_numpy(v) for k, v in seeded_state_dict(shapes["resnet18"]).items()}
    model.load_state_dict(state, strict=True)
    with torch.no_grad():
        logits = model(torch.from_numpy(seeded_input((2, 3, 64, 64)))).numpy()
    np.save(HERE / "tests/data/resnet18_seeded_logits.npy", logits)
    torch.manual_seed(0)
    tiny = torchvision.models.ShuffleNetV2([1, 1, 1], [8, 16, 32, 64, 128], num_classes=10).eval()
    torch.save(tiny.state_dict(), HERE / "tests/data/shufflenet_tiny_torchvision.pth")
    with torch.no_grad():
        np.save(HERE / "tests/data/shufflenet_tiny_logits.npy", tiny(torch.from_numpy(seeded_input((2, 3, 32, 32)))).numpy())


def functional_fixtures():
    """tests/data/functional_expected.npz: torchvision's output of every transforms.functional
    case on a small image, as a PIL image, a uint8 tensor and a float tensor."""
    import numpy as np
    import torch
    from functional_cases import CASES, UINT8_ONLY, as_numpy, make_images

    tf = import_torchvision().transforms.functional
    pil, uint8, floats = make_images(18, 22)
    expected = {}
    for name, fn in CASES + UINT8_ONLY:
        expected[f"pil/{name}"] = as_numpy(fn(tf, pil))
        expected[f"uint8/{name}"] = as_numpy(fn(tf, torch.from_numpy(uint8.copy())))
        if (name, fn) in CASES:
            expected[f"float/{name}"] = as_numpy(fn(tf, torch.from_numpy(floats.copy())))
    np.savez_compressed(HERE / "tests/data/functional_expected.npz", **expected)


if __name__ == "__main__" and "--fixtures" in sys.argv:
    fixtures()
    functional_fixtures()
