"""Bijective (mostly) transforms with log |det J|, as ``torch.distributions.transforms``."""
from ._composition import *  # noqa: F401,F403
from ._composition import __all__  # noqa: F401
