"""Argument checks and random draws the transform classes share."""
import numbers
from collections.abc import Sequence

import ember_tensor as torch

__all__ = ["setup_size", "check_sequence_input", "setup_angle", "uniform", "randint", "coin"]


def setup_size(size, error_msg):
    """``size`` as ``(h, w)``: an int or one-element sequence is square."""
    if isinstance(size, numbers.Number):
        return int(size), int(size)
    if isinstance(size, Sequence) and len(size) == 1:
        return size[0], size[0]
    if len(size) != 2:
        raise ValueError(error_msg)
    return size


def check_sequence_input(x, name, req_sizes):
    """Raise unless ``x`` is a sequence of one of the lengths ``req_sizes``."""
    msg = req_sizes[0] if len(req_sizes) < 2 else " or ".join(str(s) for s in req_sizes)
    if not isinstance(x, Sequence):
        raise TypeError(f"{name} should be a sequence of length {msg}.")
    if len(x) not in req_sizes:
        raise ValueError(f"{name} should be a sequence of length {msg}.")


def setup_angle(x, name, req_sizes=(2,)):
    """A number ``d`` as the range ``(-d, d)``; a sequence as it is."""
    if isinstance(x, numbers.Number):
        if x < 0:
            raise ValueError(f"If {name} is a single number, it must be positive.")
        x = [-x, x]
    else:
        check_sequence_input(x, name, req_sizes)
    return [float(d) for d in x]


def uniform(low, high):
    """One float drawn uniformly from [low, high) with ember's generator (``manual_seed`` repeats it)."""
    return float(torch.empty(1).uniform_(float(low), float(high)).item())


def randint(low, high):
    """One int drawn uniformly from [low, high) with ember's generator."""
    return int(torch.randint(low, high, size=(1,)).item())


def coin(p):
    """True with probability ``p`` (torchvision's ``torch.rand(1) < p``)."""
    return bool(torch.rand(1).item() < p)
