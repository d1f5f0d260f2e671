"""Process-wide settings that must be made before NumPy/Numba start their thread pools or
compile: OpenBLAS's kernel choice, OpenMP's idle-thread policy and the vector width of
Numba's loops; and how glibc's malloc keeps freed memory (see each function).

Choose OpenBLAS's fast kernels on AVX-512 CPUs it does not recognise.

NumPy's OpenBLAS falls back to its Haswell kernels on CPUs newer than it knows (AMD Zen 5
measured: 2048^2 sgemm ~110 GFLOP/s; with `OPENBLAS_CORETYPE=SkylakeX`, ~205). The
setting only takes effect before NumPy is first imported, and it must never be forced
on a CPU without AVX-512: OpenBLAS then dies with an illegal instruction (seen on an
AVX2-only AMD EPYC). So it is set only when unset, NumPy is not loaded yet, and the CPU
reports every AVX-512 subset SkylakeX kernels use. `EMBER_NO_BLAS_TUNING=1` disables it;
`EMBER_NO_THREAD_TUNING=1` leaves OMP_WAIT_POLICY alone; `EMBER_NO_MALLOC_TUNING=1`
leaves malloc's thresholds alone; `EMBER_NO_VECTOR_TUNING=1` leaves Numba's vector width
to LLVM (`prefer_wide_vectors`).
"""
import ctypes
import functools
import os
import sys

_NEEDED_FLAGS = {"avx512f", "avx512bw", "avx512dq", "avx512vl", "avx512cd"}


@functools.cache
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


def prefer_wide_vectors():
    """Let Numba's loops use 512-bit vectors on AVX-512 CPUs (``NUMBA_CPU_FEATURES``).

    LLVM tunes its vectoriser for Intel's AVX-512 server CPUs to prefer 256-bit vectors
    (the ``prefer-256-bit`` tuning flag of their CPU models), so Numba's loops there use half
    the register width PyTorch's kernels use. On an AVX-512 Xeon (Emerald Rapids flags) the
    softmax kernels' vectorised float32 exp over 1e7 values took 6.3 ms with 256-bit
    vectors and 3.5 ms with 512-bit ones (PyTorch's exp 3.0-3.9 ms); memory-bound loops
    are unchanged. Numba reads the features when it makes its CPU target, at the first
    ``@njit``, so this must run before Numba is first imported: it sets the host's own
    feature string (as Numba would use it) with ``-prefer-256-bit`` added. Not when the
    user set ``NUMBA_CPU_FEATURES`` or ``NUMBA_CPU_NAME``, with
    ``EMBER_NO_VECTOR_TUNING=1``, on CPUs without AVX-512F, or after Numba was imported.
    Numba keys its on-disk cache by the feature string, so kernels cached under the
    other setting are compiled anew, never served stale. Returns whether it was set.
    """
    if ("numba" in sys.modules or os.environ.get("NUMBA_CPU_FEATURES") is not None
            or os.environ.get("NUMBA_CPU_NAME") is not None or os.environ.get("EMBER_NO_VECTOR_TUNING")
            or "avx512f" not in cpu_flags()):
        return False
    try:
        import llvmlite.binding as llvm  # loaded by Numba anyway; it does not load Numba
        features = llvm.get_host_cpu_features().flatten()
    except (ImportError, RuntimeError):
        return False
    os.environ["NUMBA_CPU_FEATURES"] = f"{features},-prefer-256-bit" if features else "-prefer-256-bit"
    return True


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


# glibc's mallopt parameters, and the values ember sets.
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
_MMAP_THRESHOLD = 32 << 20  # glibc's largest (HEAP_MAX_SIZE / 2 on 64-bit)
_TRIM_THRESHOLD = 64 << 20
_MALLOC_ENV = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "GLIBC_TUNABLES", "EMBER_NO_MALLOC_TUNING")


def keep_freed_memory():
    """Let glibc's malloc reuse freed arrays' memory instead of returning it to the OS.

    Above its mmap threshold (128 KiB at first, then the largest block freed so far)
    glibc serves each allocation with a fresh mmap() and unmaps it on free, and it gives
    back heap memory past its trim threshold at each free. A training step allocates and
    frees hundreds of arrays of 0.1-10 MB, so memory went back and forth to the OS and
    every page faulted in (and was zeroed by the kernel) again: a TransformerEncoderLayer
    step measured ~2000 minor faults and 4 ms of system time a step, 25.5 ms; with blocks
    under 32 MiB kept on the heap and up to 64 MiB of free heap kept, 2 faults and 17.9 ms
    (PyTorch: 615 faults, 17.9 ms). Only on Linux with glibc, and only when the user did
    not tune malloc (`MALLOC_*_`, `GLIBC_TUNABLES`) or opt out (`EMBER_NO_MALLOC_TUNING`).
    Returns whether the thresholds were set.
    """
    if not sys.platform.startswith("linux") or any(os.environ.get(name) for name in _MALLOC_ENV):
        return False
    try:
        mallopt = ctypes.CDLL("libc.so.6").mallopt
    except (OSError, AttributeError):  # another C library (musl): nothing to tune
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD)) and bool(mallopt(_M_TRIM_THRESHOLD, _TRIM_THRESHOLD))
