"""The test-only oracle: real torchvision, when it is installed (never a dependency).

torchvision wheels from PyPI are CUDA builds: beside a CPU-only torch their C++ ops do not
load, and ``import torchvision`` then stops at two unconditional fake-op registrations
(``torchvision::nms``, ``qnms``). Defining those two schemas first lets the pure-Python
parts (models, transforms, box ops) import; the C++ ops stay unavailable.
"""
import importlib.util

__all__ = ["import_torchvision", "torchvision_available"]

_LIBRARY = []  # keeps the schema library alive for the process


def torchvision_available():
    """Whether both torch and torchvision are installed."""
    return importlib.util.find_spec("torch") is not None and importlib.util.find_spec("torchvision") is not None


def import_torchvision():
    """``torchvision``, importable even when its C++ extension cannot load."""
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
        try:
            library.define(f"{op}(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
        except RuntimeError:
            pass  # already defined
    _LIBRARY.append(library)
    import torchvision
    return torchvision
