"""Layout objects: `strided` (dense tensors) and `sparse_coo` (sparse COO tensors); memory formats."""


class _NamedConstant:
    """A constant known by its module-level name: printed as ``torch.<name>``, pickled by
    that name (the same object comes back)."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "torch." + self.name

    def __reduce__(self):
        return self.name


class layout(_NamedConstant):
    """How a tensor's elements are laid out in memory, like ``torch.layout``."""

    __slots__ = ()


strided = layout("strided")
sparse_coo = layout("sparse_coo")


class memory_format(_NamedConstant):
    """The order of a dense tensor's dimensions in memory, like ``torch.memory_format``.

    ember's dense tensors are always row-major (``contiguous_format``): every op that takes
    ``memory_format=`` accepts these values and lays the result out row-major, so programs
    asking for ``channels_last`` run unchanged, without its speed-up.
    """

    __slots__ = ()


contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
