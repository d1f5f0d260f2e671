"""The stack of saved-tensor hooks (``torch.autograd.graph.saved_tensors_hooks``).

Kept apart from `graph`, the public module, because `_graph.SavedTensor` consults it on
every save: while the stack is empty (always, unless a program or checkpoint pushed a
pair) saving costs one truth test more.
"""
import threading

__all__ = ["current_stack", "push", "pop", "set_disabled_message"]


class _ThreadState(threading.local):
    """Per thread, as grad mode: a hook pair pushed in one thread does not reach another's saves."""

    def __init__(self):
        self.stack = []  # (pack_hook, unpack_hook) pairs, innermost last
        self.disabled_message = None  # set by disable_saved_tensors_hooks


_state = _ThreadState()


def current_stack():
    """This thread's stack of (pack_hook, unpack_hook) pairs."""
    return _state.stack


def push(pack_hook, unpack_hook):
    """Make (pack_hook, unpack_hook) the innermost pair, unless hooks are disabled here."""
    if _state.disabled_message is not None:
        raise RuntimeError(_state.disabled_message)
    _state.stack.append((pack_hook, unpack_hook))


def pop():
    """Remove the innermost pair."""
    _state.stack.pop()


def set_disabled_message(message):
    """Disable pushing with `message` (None enables it again); returns the previous setting."""
    previous, _state.disabled_message = _state.disabled_message, message
    return previous
