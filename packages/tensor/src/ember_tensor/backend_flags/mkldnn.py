"""``torch.backends.mkldnn``: ember does not use oneDNN (its CPU convolutions are im2col
and NumPy's BLAS); never available, the flags kept."""
__all__ = ["is_available", "enabled", "deterministic"]

enabled = True
deterministic = False


def is_available():
    """False: ember does not use oneDNN."""
    return False
