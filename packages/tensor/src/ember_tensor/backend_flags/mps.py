"""``torch.backends.mps``: ember has no Apple Metal backend."""
__all__ = ["is_available", "is_built"]


def is_available():
    """False: ember has no MPS device."""
    return False


def is_built():
    """False: ember has no MPS backend."""
    return False
