"""Timing harness: interleaved repeats, medians, min-max, and ember/PyTorch ratios."""
import gc
import statistics
import time
from dataclasses import dataclass, field


@dataclass
class Workload:
    """One thing to time. `setup(lib)` returns a zero-argument callable for `lib`
    ('ember' or 'torch'); `work` (bytes moved or FLOPs per call) turns time into a rate."""

    name: str
    setup: object
    group: str = "ops"
    work: float = 0.0
    unit: str = ""  # "B" for bytes moved (memory-bound), "FLOP" for arithmetic
    repeats: int = 7
    number: int = 0  # calls per repeat; 0 = calibrate to ~20 ms
    libs: tuple = ("ember", "torch")
    results: dict = field(default_factory=dict)


def _calibrate(fn, target=0.02):
    n = 1
    while True:
        t = time.perf_counter()
        for _ in range(n):
            fn()
        dt = time.perf_counter() - t
        if dt >= target or n >= 1 << 20:
            return n
        n *= 2 if dt == 0 else max(2, min(100, int(target / max(dt, 1e-9))))


def run(workload, available):
    """Time `workload` for every available library, alternating between them per repeat."""
    fns = {}
    for lib in workload.libs:
        if lib in available:
            fn = workload.setup(lib)
            fn()  # warm-up: compile kernels, fill caches
            fns[lib] = fn
    numbers = {lib: workload.number or _calibrate(fn) for lib, fn in fns.items()}
    samples = {lib: [] for lib in fns}
    for _ in range(workload.repeats):
        for lib, fn in fns.items():
            n = numbers[lib]
            gc.disable()
            t = time.perf_counter()
            for _ in range(n):
                fn()
            samples[lib].append((time.perf_counter() - t) / n)
            gc.enable()
    workload.results = {lib: (statistics.median(s), min(s), max(s)) for lib, s in samples.items()}
    return workload.results


def fmt_time(seconds):
    """Human units for a duration."""
    if seconds < 1e-3:
        return f"{seconds * 1e6:.2f} us"
    if seconds < 1:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.2f} s"
