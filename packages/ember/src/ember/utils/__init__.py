"""``ember.utils``: the home of PyTorch's ``torch.utils`` paths.

``ember.utils.data`` is ember_data and ``ember.utils.checkpoint`` ember_autograd.checkpoint,
served by the alias finder of ``ember._aliases``; this module only makes them reachable as
attributes without an import, as ``torch.utils.data`` is.
"""

import importlib

__all__ = ["data", "checkpoint", "backcompat", "model_zoo"]


def __getattr__(name):
    if name in __all__:
        return importlib.import_module(f"ember.utils.{name}")
    raise AttributeError(f"module 'ember.utils' has no attribute {name!r}")
