"""``ember_tensor.signal``: PyTorch's ``torch.signal`` namespace (``ember.signal``), whose
one submodule is `windows`."""
from . import windows

__all__ = ["windows"]
