"""``OptimizedModule``: what ``torch.compile(module)`` returns.

It holds the module as its submodule ``_orig_mod`` (so its state_dict keys are the
module's with ``_orig_mod.`` in front, as PyTorch's, and checkpoints saved from a
compiled model load the same way), calls it on forward, and reads every other attribute
from it (``compiled.weight is model.weight``).
"""
from ember_nn import Module

__all__ = ["OptimizedModule"]


class OptimizedModule(Module):
    """A compiled module: ``_orig_mod`` is the module; calls and attributes go to it."""

    def __init__(self, mod):
        super().__init__()
        self._orig_mod = mod

    def forward(self, *args, **kwargs):
        return self._orig_mod(*args, **kwargs)

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self._modules["_orig_mod"], name)

    def __repr__(self):
        return f"OptimizedModule(\n  (_orig_mod): {repr(self._orig_mod).replace(chr(10), chr(10) + '  ')}\n)"
