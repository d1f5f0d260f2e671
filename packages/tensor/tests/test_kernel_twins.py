"""Numba keys its disk cache by the Python function, not by njit's ``parallel`` flag, so
two disk-cached dispatchers of one function would load each other's machine code (the
parallel twin of a loop then runs serially, or the serial one starts threads). Every
disk-cached CPU kernel of ember-tensor must have a function of its own (the fused optimizer
loops, generated into ember's kernel cache, define a serial and a parallel function each:
test_fused_optim.py checks them)."""
import importlib
import pkgutil
from collections import defaultdict

import numpy as np
from numba.core.dispatcher import Dispatcher

import ember_tensor._backends.cpu.kernels as kernels
from ember_tensor._backends.cpu.kernels.twins import serial_and_parallel


def _disk_cached(dispatcher):
    return type(dispatcher._cache).__name__ != "NullCache"


def _dispatchers():
    for info in pkgutil.iter_modules(kernels.__path__):
        module = importlib.import_module(f"{kernels.__name__}.{info.name}")
        for value in vars(module).values():
            candidates = value.values() if isinstance(value, dict) else (value if isinstance(value, tuple) else (value,))
            for candidate in candidates:
                for item in (candidate if isinstance(candidate, tuple) else (candidate,)):
                    if isinstance(item, Dispatcher) and _disk_cached(item):
                        yield item


def test_no_two_kernel_dispatchers_share_a_function():
    by_function = defaultdict(set)
    for dispatcher in _dispatchers():
        by_function[dispatcher.py_func].add(id(dispatcher))
    assert len(by_function) > 20  # the scan found the kernels
    shared = [f.__qualname__ for f, ids in by_function.items() if len(ids) > 1]
    assert shared == []


def test_twins_compile_their_own_code():
    def body(a, out):
        for i in range(a.shape[0]):  # prange in the real kernels; the flag is what matters
            out[i] = a[i] * 2

    serial, parallel = serial_and_parallel(body)
    assert parallel.py_func is not body and parallel.py_func.__qualname__.endswith("body_parallel")
    assert serial.targetoptions.get("parallel") is not True and parallel.targetoptions["parallel"] is True
    a = np.arange(4.0)
    for fn in (serial, parallel):
        out = np.empty_like(a)
        fn(a, out)
        assert out.tolist() == [0.0, 2.0, 4.0, 6.0]
