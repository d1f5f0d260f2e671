"""`Size`: the tuple subclass that tensor shapes are."""

__all__ = ["Size"]


class Size(tuple):
    """A tensor's shape, like ``torch.Size``.

    >>> Size([2, 3])
    torch.Size([2, 3])
    """

    def numel(self):
        """Number of elements a tensor of this shape holds."""
        n = 1
        for s in self:
            n *= s
        return n

    def __repr__(self):
        return f"torch.Size([{', '.join(str(s) for s in self)}])"

    __str__ = __repr__

    def __getitem__(self, key):
        result = tuple.__getitem__(self, key)
        return Size(result) if isinstance(key, slice) else result

    def __add__(self, other):
        return Size(tuple.__add__(self, tuple(other)))

    def __reduce__(self):
        return (Size, (tuple(self),))
