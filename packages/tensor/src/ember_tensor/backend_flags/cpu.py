"""``torch.backends.cpu``: what the CPU offers ember's kernels."""
from .._backends.cpu.startup import cpu_flags

__all__ = ["get_cpu_capability"]


def get_cpu_capability():
    """The widest vector extension the CPU reports: "AVX512", "AVX2", or "DEFAULT"."""
    flags = cpu_flags()
    if {"avx512f", "avx512bw", "avx512dq", "avx512vl"} <= flags:
        return "AVX512"
    if "avx2" in flags:
        return "AVX2"
    return "DEFAULT"
