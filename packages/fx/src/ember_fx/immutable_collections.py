"""The list and dict that hold a Node's arguments (``torch.fx.immutable_collections``).

A Node keeps its users up to date only when its arguments are replaced through
``node.args = ...`` or ``update_arg``; a list inside the arguments edited in place would
change the graph behind the use lists' back, so those containers refuse mutation.
"""

__all__ = ["immutable_list", "immutable_dict"]


def _no_mutation(self, *args, **kwargs):
    raise TypeError(f"'{type(self).__name__}' object does not support mutation. "
                    "Create a new container and assign it to node.args / node.kwargs instead.")


class immutable_list(list):  # noqa: N801 - PyTorch's name
    """A list that raises on mutation; hashable like a tuple."""

    __delitem__ = __iadd__ = __imul__ = __setitem__ = _no_mutation
    append = clear = extend = insert = pop = remove = reverse = sort = _no_mutation

    def __hash__(self):
        return hash(tuple(self))

    def __reduce__(self):
        return (immutable_list, (tuple(self),))


class immutable_dict(dict):  # noqa: N801 - PyTorch's name
    """A dict that raises on mutation; hashable by its items."""

    __delitem__ = __setitem__ = __ior__ = _no_mutation
    clear = pop = popitem = setdefault = update = _no_mutation

    def __hash__(self):
        return hash(tuple(self.items()))

    def __reduce__(self):
        return (immutable_dict, (tuple(self.items()),))
