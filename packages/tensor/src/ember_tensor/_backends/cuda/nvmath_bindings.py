"""nvmath-python's CUDA library bindings (cuBLAS for `blas`, cuFFT for `cufft`), loaded once.

nvmath-python is optional (the `gpu-cu12`/`gpu-cu13` extras): without it, or without the
CUDA library its bindings load, `load` returns None and the caller computes another way
(the Numba GEMM kernel, the host FFT).
"""
import importlib

__all__ = ["load"]

_loaded = {}  # module name -> bindings module, or None when it cannot be had


def load(name, probe=None):
    """nvmath's `nvmath.bindings.<name>` module, or None when it cannot be had; `probe`
    (a function of the module) is called once to make a missing library show at load
    time rather than mid-computation."""
    if name not in _loaded:
        try:
            module = importlib.import_module(f"nvmath.bindings.{name}")
            if probe is not None:
                probe(module)
        except Exception:  # not installed, or its CUDA library missing
            module = None
        _loaded[name] = module
    return _loaded[name]
