"""The CPU's thread budget: how many threads ember's parallel kernels may use, and the one
pool they run on.

ember's parallel kernels (elementwise, reductions, im2col, pooling, the blocked
convolutions, the matrix products) split their work over ember's worker pool
(`pool.py`: `split`, `run_parts`); `torch.set_num_threads` sets the budget; a DataLoader
worker sets it to 1, as PyTorch's workers do.

One pool: NumPy's OpenBLAS is held at one thread for the whole process (set when this
module loads, and again by `set_budget`), and products worth it are split by ember over
its own workers, each part one single-threaded GEMM (`gemm.py`, `matmul.py`'s batched
split, the blocked convolutions). OpenBLAS's own threads would be a second pool on the
same cores: between GEMMs they busy-wait, and alternating with ember's workers (a GEMM,
a softmax, a GEMM) the two took each other's cores (a Transformer step gained little or
nothing from a second core). PyTorch likewise runs MKL and its loops on one OpenMP
pool. A split product has the bits of a one-thread run. Numba's own pool (``parallel=True``, prange)
serves only the fused optimizer steps from 1M elements, half-precision conversions and
sparse kernels.

With a budget of 1 every kernel takes its serial path (`parallel` is False) and Numba's
thread pool is never touched. That matters in a forked process (a DataLoader worker):
GNU OpenMP, under Numba's parallel kernels, terminates a forked child at its first
parallel region when the parent had started it.

Numba cannot run more threads than it started with (NUMBA_NUM_THREADS, by default the
number of cores): a larger budget is kept, and reported, as PyTorch reports what it was
given, and Numba runs at its maximum.
"""
import ctypes
import functools
import glob
import os
import sys
import threading

__all__ = ["budget", "set_budget", "parallel", "part_count", "run_parts", "split", "hold_blas_at_one_thread",
           "blas_threads", "blas_gemm_address"]


def _budget_from_environment():
    """1 when OMP_NUM_THREADS is 1, as PyTorch's default thread count follows it (torchrun
    and ember-run set it for jobs of several processes a node); else None (a larger value
    is left to Numba's default, which reads it too)."""
    return 1 if os.environ.get("OMP_NUM_THREADS", "").strip() == "1" else None


# The budget: None until set (Numba's default then holds). `parallel` reads it on every
# kernel launch, so it is a plain module global.
_budget = _budget_from_environment()

# OpenBLAS's thread setter, by the symbol names NumPy's builds export (scipy-openblas
# with 64-bit integers, then the plain builds), found once.
_BLAS_SETTERS = ("scipy_openblas_set_num_threads64_", "scipy_openblas_set_num_threads",
                 "openblas_set_num_threads64_", "openblas_set_num_threads")
_blas_setter = None
_blas_getter = None

# Set in the pool's workers: a kernel launched there runs serially, so that a part never
# waits on the pool it runs in (that would deadlock once every worker waits).
_in_worker = threading.local()


def budget():
    """The thread budget: what `set_budget` was given, else Numba's thread count."""
    if _budget is not None:
        return _budget
    import numba  # here: `import ember_tensor` does not load Numba (its kernels load on first use)

    return numba.config.NUMBA_NUM_THREADS


def set_budget(threads):
    """Let ember's parallel kernels use `threads` threads (a positive int); the BLAS stays at
    one (`hold_blas_at_one_thread`): ember splits the products itself."""
    import numba  # here, as in `budget`

    global _budget
    _budget = threads
    if threads > 1:
        # Numba's setting holds for the calling thread, the one that launches kernels.
        numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    hold_blas_at_one_thread()


def parallel(work, threshold):
    """Whether a kernel over `work` elements should take its parallel path: the work is
    worth starting threads for (`threshold`, the kernel's own) and the budget allows them."""
    return work >= threshold and (_budget is None or _budget > 1) and not getattr(_in_worker, "active", False)


def part_count():
    """How many threads a parallel kernel spreads over: the budget, at most Numba's count."""
    import numba  # here, as in `budget`

    return max(1, min(budget(), numba.config.NUMBA_NUM_THREADS))


def _mark_worker(active=True):
    """Mark the calling thread as running a pool part (kernels it launches run serially),
    or, with False, no longer (the caller after running a part taken back from a worker)."""
    _in_worker.active = active


def _workers(count):
    """The pool (`pool.py`), with at least `count` worker threads."""
    from . import pool  # here: only a parallel kernel needs it (and its spin kernel)

    return pool.shared(count, _mark_worker)


def split(task, n, count, align=64):
    """task(lo, hi) over `count` contiguous ranges that cover range(n), run at once on the
    calling thread and pool workers; returns when all are done (a part's error is raised).

    This is how ember's elementwise loops and reductions use several cores: each range
    runs the serial (nogil) kernel, so no op compiles a second, ``parallel=True`` kernel
    (a prange loop compiles 3-5x slower than the serial one: most of a cold start). Range
    bounds are multiples of `align` (whole cache lines and SIMD blocks per thread)."""
    if count <= 1 or n <= align:
        task(0, n)
        return
    step = -(-n // count)
    step = -(-step // align) * align
    bounds = [(lo, min(lo + step, n)) for lo in range(0, n, step)]
    if len(bounds) <= 1:
        task(0, n)
        return
    parts = [functools.partial(task, lo, hi) for lo, hi in bounds[1:]]
    _workers(len(parts)).run(parts, functools.partial(task, *bounds[0]))


def run_parts(task, parts):
    """[task(0), ..., task(parts - 1)], run on `parts` threads at once (the calling one and
    pool workers).

    For work made of GEMMs (a blocked convolution, a split product): each part makes
    single-threaded BLAS calls on its own part of the data (the BLAS is held at one
    thread), so no thread waits for another between GEMMs. A task must take the serial
    path of Numba's kernels: the parallel ones may not be launched from two threads at
    once."""
    if parts <= 1:
        return [task(i) for i in range(parts)]
    pool = _workers(parts - 1)
    return pool.run([functools.partial(task, i) for i in range(1, parts)], functools.partial(task, 0))


def hold_blas_at_one_thread():
    """Set OpenBLAS (NumPy's) to one thread: ember's workers are the process's one pool.

    Done when this module loads and by `set_budget`, so every product, split or not, runs
    its GEMMs on one BLAS thread: the bits do not depend on the budget, nor on what ran
    before. NumPy code of the user's own in this process gets a one-thread BLAS too;
    `blas_threads` says what it is."""
    setter = _find_blas_setter()
    if setter is not None:
        setter(1)


def blas_threads():
    """OpenBLAS's thread count now, or None where NumPy's BLAS has no known getter."""
    _find_blas_setter()
    return _blas_getter() if _blas_getter is not None else None


def _find_blas_setter():
    """OpenBLAS's `set_num_threads` from the library NumPy loaded, or None (another BLAS,
    or none found: the BLAS then keeps its own thread count)."""
    global _blas_setter
    if _blas_setter is None:
        _blas_setter = False
        for path in _loaded_openblas():
            library = ctypes.CDLL(path)
            for symbol in _BLAS_SETTERS:
                setter = getattr(library, symbol, None)
                if setter is not None:
                    setter.argtypes, setter.restype = [ctypes.c_int], None
                    _blas_setter = setter
                    _find_blas_getter(library, symbol)
                    return setter
    return _blas_setter or None


def _find_blas_getter(library, setter_symbol):
    """OpenBLAS's `get_num_threads` beside the setter found (same naming), or None."""
    global _blas_getter
    getter = getattr(library, setter_symbol.replace("set_num_threads", "get_num_threads"), None)
    if getter is not None:
        getter.argtypes, getter.restype = [], ctypes.c_int
    _blas_getter = getter


# cblas_?gemm by the names NumPy's OpenBLAS builds export, and whether its integers are
# 64-bit (ILP64: NumPy's own wheels) or 32-bit.
_GEMM_SYMBOLS = (("scipy_cblas_{}gemm64_", True), ("cblas_{}gemm64_", True), ("scipy_cblas_{}gemm", False),
                 ("cblas_{}gemm", False))
_gemm_addresses = {}


def blas_gemm_address(kind):
    """(address, ilp64) of cblas_sgemm (`kind` "s") or cblas_dgemm ("d") in the OpenBLAS
    NumPy loaded, for Numba kernels that call the BLAS without the GIL (the recurrent
    layers' time loops); None where there is no such library (another BLAS). The call
    runs on the one thread the BLAS is held at, as NumPy's would."""
    if kind not in _gemm_addresses:
        _gemm_addresses[kind] = None
        for path in _loaded_openblas():
            library = ctypes.CDLL(path)
            for pattern, ilp64 in _GEMM_SYMBOLS:
                function = getattr(library, pattern.format(kind), None)
                if function is not None:
                    _gemm_addresses[kind] = (ctypes.cast(function, ctypes.c_void_p).value, ilp64)
                    return _gemm_addresses[kind]
    return _gemm_addresses[kind]


def _loaded_openblas():
    """Paths of the OpenBLAS libraries in this process (NumPy's wheels bundle one)."""
    import numpy

    try:
        with open("/proc/self/maps") as maps:
            found = {line.split()[-1] for line in maps if "openblas" in line.rsplit("/", 1)[-1]}
        if found:
            return sorted(found)
    except OSError:  # no /proc: look where NumPy's wheels keep their libraries
        pass
    numpy_dir = os.path.dirname(numpy.__file__)
    suffix = ".dll" if sys.platform == "win32" else ".dylib" if sys.platform == "darwin" else ".so"
    patterns = [os.path.join(numpy_dir, "..", "numpy.libs", "*openblas*"),
                os.path.join(numpy_dir, ".dylibs", "*openblas*")]
    return sorted(p for pattern in patterns for p in glob.glob(pattern) if suffix in p)


hold_blas_at_one_thread()
