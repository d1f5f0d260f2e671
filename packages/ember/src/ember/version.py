"""``torch.version``: the version of ember (the meta-package) and of the GPU toolkit.

``cuda`` is the CUDA runtime's version as "major.minor" when a GPU can be used, else
None (as PyTorch's CPU builds report); ember's CUDA kernels are compiled by Numba at run
time, so one install serves both.
"""
from ember import __version__

__all__ = ["__version__", "cuda", "hip", "debug", "git_version"]

hip = None
debug = False
git_version = "unknown"


def __getattr__(name):
    # ``cuda`` asks the driver, which costs start-up time: only when read.
    if name == "cuda":
        return _cuda_runtime_version()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _cuda_runtime_version():
    import ember_tensor.cuda

    if not ember_tensor.cuda.is_available():
        return None
    from numba import cuda

    major, minor = cuda.runtime.get_version()
    return None if major < 0 else f"{major}.{minor}"  # Numba's simulator answers (-1, -1)
