"""``torch.utils.hooks``: the handle every ``register_*hook`` call returns.

One class for the whole stack: tensor and graph-node hooks here, module hooks in ember-nn
and optimizer hooks in ember-optim all return this ``RemovableHandle``.
"""
import itertools
import weakref

__all__ = ["RemovableHandle", "add_hook"]


class RemovableHandle:
    """Removes the hook it was returned for: ``handle.remove()``, or use it in ``with``.

    It holds weak references to the hook tables (OrderedDicts: a plain dict cannot be
    weakly referenced), so a handle kept around does not keep a module or tensor's hooks
    alive. `extra_dict` names side tables the same id is stored in (a forward hook's
    with_kwargs flag, ...), emptied by ``remove()`` too.
    """

    id: int
    next_id = itertools.count()  # shared by every handle, so ids never repeat

    def __init__(self, hooks_dict, *, extra_dict=None):
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = next(RemovableHandle.next_id)
        if extra_dict is None:
            extra_dict = ()
        elif isinstance(extra_dict, dict):
            extra_dict = (extra_dict,)
        self.extra_dict_ref = tuple(weakref.ref(table) for table in extra_dict)

    def remove(self):
        """Unregister the hook (a no-op if it is gone already)."""
        for ref in (self.hooks_dict_ref, *self.extra_dict_ref):
            table = ref()
            if table is not None:
                table.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.remove()


def add_hook(hooks_dict, hook):
    """Store `hook` in `hooks_dict` (an OrderedDict, insertion ordered) and return its handle."""
    handle = RemovableHandle(hooks_dict)
    hooks_dict[handle.id] = hook
    return handle

