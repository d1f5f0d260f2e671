"""``ember.utils``: the home of PyTorch's ``torch.utils`` paths.

``ember.utils.data`` is ember_data, served by the alias finder of ``ember._aliases``; this
module only makes ``ember.utils.data`` reachable as an attribute without an import, as
``torch.utils.data`` is.
"""

import importlib

__all__ = ["data"]


def __getattr__(name):
    if name == "data":
        return importlib.import_module("ember.utils.data")
    raise AttributeError(f"module 'ember.utils' has no attribute {name!r}")
