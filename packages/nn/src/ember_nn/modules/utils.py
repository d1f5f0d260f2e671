"""Argument normalisers shared by layers: ``_pair(3) == (3, 3)``, as in torch.nn.modules.utils."""
from collections.abc import Iterable
from itertools import repeat

__all__ = ["_single", "_pair", "_triple", "_quadruple", "_ntuple", "_reverse_repeat_tuple"]


def _ntuple(n, name="parse"):
    def parse(x):
        if isinstance(x, Iterable) and not isinstance(x, str):
            return tuple(x)
        return tuple(repeat(x, n))
    parse.__name__ = name
    parse.__doc__ = f"`x` as an {n}-tuple (a number is repeated {n} times)."
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _reverse_repeat_tuple(t, n):
    """Reverse `t` and repeat each element `n` times: F.pad's order for conv padding.

    >>> _reverse_repeat_tuple((1, 2), 2)
    (2, 2, 1, 1)
    """
    return tuple(x for x in reversed(t) for _ in range(n))
