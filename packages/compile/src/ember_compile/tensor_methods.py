"""Tensor methods replaced while a recording runs: the joint lowering and the guarded
traces both watch a recorded value being turned into a Python value (``item()``,
``bool()``, ...), which a dispatcher wrapper cannot see (no op is called)."""
import contextlib

from ember_tensor import Tensor

__all__ = ["patched"]


@contextlib.contextmanager
def patched(replacements):
    """While the block runs, Tensor's method `name` is ``make(name, original)`` for each
    ``(names, make)`` of `replacements` and each of `names` Tensor has; restored after."""
    originals = {}
    try:
        for names, make in replacements:
            for name in names:
                original = Tensor.__dict__.get(name)
                if original is not None:
                    originals[name] = original
                    setattr(Tensor, name, make(name, original))
        yield
    finally:
        for name, original in originals.items():
            setattr(Tensor, name, original)
