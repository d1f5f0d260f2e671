"""Layout objects: `strided` (dense tensors) and `sparse_coo` (sparse COO tensors)."""


class layout:
    """How a tensor's elements are laid out in memory, like ``torch.layout``."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "torch." + self.name

    def __reduce__(self):
        return (globals().__getitem__, (self.name,))


strided = layout("strided")
sparse_coo = layout("sparse_coo")
