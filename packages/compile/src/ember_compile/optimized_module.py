"""``OptimizedModule``: what ``torch.compile(module)`` returns.

It holds the module as its submodule ``_orig_mod`` (so its state_dict keys are the
module's with ``_orig_mod.`` in front, as PyTorch's, and checkpoints saved from a
compiled model load the same way), runs the module's compiled forward on a call, and
reads every other attribute from it (``compiled.weight is model.weight``; ``train()`` and
``eval()`` reach the module, and the guards see its ``training`` flag).
"""
from ember_nn import Module

__all__ = ["OptimizedModule"]


class OptimizedModule(Module):
    """A compiled module: ``_orig_mod`` is the module; calls and attributes go to it."""

    def __init__(self, mod, compiled_function=None):
        super().__init__()
        self._orig_mod = mod
        # Kept out of _modules: not a submodule (no state_dict entries of its own).
        object.__setattr__(self, "_compiled_function", compiled_function)

    def forward(self, *args, **kwargs):
        if self._compiled_function is None:
            return self._orig_mod(*args, **kwargs)
        return self._compiled_function(*args, **kwargs)

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self._modules["_orig_mod"], name)

    def __repr__(self):
        return f"OptimizedModule(\n  (_orig_mod): {repr(self._orig_mod).replace(chr(10), chr(10) + '  ')}\n)"
