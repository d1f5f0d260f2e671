"""``torch.backends.cudnn``: ember has no cuDNN (its CUDA convolutions are its own
kernels), so it is never available and its flags are kept without effect."""
__all__ = ["is_available", "version", "enabled", "benchmark", "benchmark_limit", "deterministic", "allow_tf32"]

enabled = True
benchmark = False
benchmark_limit = None
deterministic = False
allow_tf32 = True


def is_available():
    """False: ember does not use cuDNN."""
    return False


def version():
    """None: no cuDNN is loaded."""
    return None
