"""The serial and the parallel twin of one Numba loop body, each with a disk-cache entry
of its own.

A body written with ``prange`` compiles to a serial loop under plain ``njit`` and to a
loop spread over threads under ``njit(parallel=True)``. Numba keys its on-disk cache by
the Python function (file, qualified name, first line, bytecode) and the signature, not
by the ``parallel`` flag, so the two dispatchers of one function share a cache entry:
whichever compiles second loads the first's machine code, in the same process and in
every later one (measured: a ``parallel=True`` dispatcher ran the serial code). The
parallel twin here is a copy of the function under a name of its own, so each twin
compiles and caches its own code.
"""
import types

from numba import njit

__all__ = ["serial_and_parallel"]


def serial_and_parallel(body, **options):
    """(serial, parallel): `body` compiled by ``njit(**options)``, and a copy of it under
    the name ``<body>_parallel`` compiled with ``parallel=True`` too (both lazily)."""
    twin = types.FunctionType(body.__code__, body.__globals__, body.__name__ + "_parallel", body.__defaults__,
                              body.__closure__)
    twin.__qualname__ = body.__qualname__ + "_parallel"
    twin.__module__ = body.__module__
    twin.__doc__ = body.__doc__
    return njit(**options)(body), njit(parallel=True, **options)(twin)
