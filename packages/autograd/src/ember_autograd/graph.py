"""The graph's public types and saved-tensor hooks (PyTorch's ``torch.autograd.graph``)."""
import contextlib

from . import _saved_hooks
from ._graph import Node
from .hooks import RemovableHandle

__all__ = ["Node", "RemovableHandle", "saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks"]


class saved_tensors_hooks:  # noqa: N801 - PyTorch's name
    """Inside the block, every tensor an op saves for backward goes through
    ``pack_hook(tensor)`` and only its result is kept; backward calls
    ``unpack_hook(packed)``, which must return a tensor with the saved tensor's value.

    Pairs nest (the innermost applies) and are per thread, as in PyTorch.

    >>> import ember_tensor as et
    >>> x = et.ones(2, requires_grad=True)
    >>> with saved_tensors_hooks(lambda t: t * 1, lambda t: t):
    ...     y = (x * x).sum()
    >>> y.backward(); x.grad.tolist()
    [2.0, 2.0]
    """

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        _saved_hooks.push(self.pack_hook, self.unpack_hook)
        return self

    def __exit__(self, *exc_info):
        _saved_hooks.pop()


class save_on_cpu(saved_tensors_hooks):  # noqa: N801 - PyTorch's name
    """Saved tensors are moved to the CPU in forward and back to their device in backward
    (trading GPU memory for transfers). ``pin_memory`` is accepted; ember's host copies are
    plain memory, so it changes nothing."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        def pack(tensor):
            return tensor.device, tensor.to("cpu")

        def unpack(packed):
            device, tensor = packed
            return tensor.to(device)

        super().__init__(pack, unpack)


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message):
    """Inside the block, entering ``saved_tensors_hooks`` raises RuntimeError(error_message)."""
    previous = _saved_hooks.set_disabled_message(error_message)
    try:
        yield
    finally:
        _saved_hooks.set_disabled_message(previous)

