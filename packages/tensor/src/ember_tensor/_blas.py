"""Choose OpenBLAS's fast kernels on AVX-512 CPUs it does not recognise.

NumPy's OpenBLAS falls back to its Haswell kernels on CPUs newer than it knows (AMD Zen 5
measured: 2048^2 sgemm ~110 GFLOP/s; with `OPENBLAS_CORETYPE=SkylakeX`, ~205). The
setting only takes effect before NumPy is first imported, and it must never be forced
on a CPU without AVX-512: OpenBLAS then dies with an illegal instruction (seen on an
AVX2-only AMD EPYC). So it is set only when unset, NumPy is not loaded yet, and the CPU
reports every AVX-512 subset SkylakeX kernels use. `EMBER_NO_BLAS_TUNING=1` disables it.
"""
import os
import sys

_NEEDED_FLAGS = {"avx512f", "avx512bw", "avx512dq", "avx512vl", "avx512cd"}


def _cpu_flags():
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def tune_openblas():
    """Set OPENBLAS_CORETYPE=SkylakeX when it is safe and still takes effect."""
    if ("numpy" in sys.modules or "OPENBLAS_CORETYPE" in os.environ
            or os.environ.get("EMBER_NO_BLAS_TUNING") or not sys.platform.startswith("linux")):
        return
    if _NEEDED_FLAGS <= _cpu_flags():
        os.environ["OPENBLAS_CORETYPE"] = "SkylakeX"
