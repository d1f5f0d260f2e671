"""Handles returned by every ``register_*hook`` call."""
import itertools

__all__ = ["RemovableHandle"]

_ids = itertools.count()


class RemovableHandle:
    """Removes the hook it was returned for: ``handle.remove()`` (or use it in ``with``)."""

    __slots__ = ("hooks_dict", "id")

    def __init__(self, hooks_dict):
        self.hooks_dict = hooks_dict
        self.id = next(_ids)

    def remove(self):
        self.hooks_dict.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def add_hook(hooks_dict, hook):
    """Store `hook` in `hooks_dict` (insertion ordered) and return its handle."""
    handle = RemovableHandle(hooks_dict)
    hooks_dict[handle.id] = hook
    return handle
