"""Process-wide settings that must be made before NumPy/Numba start their thread pools:
OpenBLAS's kernel choice and OpenMP's idle-thread policy (see each function).

Choose OpenBLAS's fast kernels on AVX-512 CPUs it does not recognise.

NumPy's OpenBLAS falls back to its Haswell kernels on CPUs newer than it knows (AMD Zen 5
measured: 2048^2 sgemm ~110 GFLOP/s; with `OPENBLAS_CORETYPE=SkylakeX`, ~205). The
setting only takes effect before NumPy is first imported, and it must never be forced
on a CPU without AVX-512: OpenBLAS then dies with an illegal instruction (seen on an
AVX2-only AMD EPYC). So it is set only when unset, NumPy is not loaded yet, and the CPU
reports every AVX-512 subset SkylakeX kernels use. `EMBER_NO_BLAS_TUNING=1` disables it;
`EMBER_NO_THREAD_TUNING=1` leaves OMP_WAIT_POLICY alone.
"""
import os
import sys

_NEEDED_FLAGS = {"avx512f", "avx512bw", "avx512dq", "avx512vl", "avx512cd"}


def cpu_flags():
    """The CPU's feature flags (/proc/cpuinfo; empty where there is none)."""
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
    if _NEEDED_FLAGS <= cpu_flags():
        os.environ["OPENBLAS_CORETYPE"] = "SkylakeX"


def quiet_openmp_spinning():
    """Let idle OpenMP threads sleep instead of spinning (``OMP_WAIT_POLICY=PASSIVE``).

    Numba's parallel kernels run on GNU OpenMP, whose idle threads spin for a while after
    each parallel loop; NumPy's OpenBLAS has a thread pool of its own. A training step
    alternates between the two many times, and each pool's spinning threads starve the
    other's: measured on 2 cores, an MLP 784-512-512-10 forward+backward took 80 ms with
    the default policy and 4.7 ms with PASSIVE (PyTorch: 6 ms), an LSTM training step
    374 ms against 74 ms. Large elementwise kernels are not slowed. It must be set before
    the OpenMP runtime starts (at the first parallel kernel), and a value the user set
    wins.
    """
    if os.environ.get("EMBER_NO_THREAD_TUNING"):
        return
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
