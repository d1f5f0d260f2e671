"""Generated kernel modules: where their sources live, when they are stale, how they load.

Every generated kernel of ember, on either device, goes through here: the built-in
elementwise loops and reductions (`cpu/kernels/loops.py`, `cpu/kernels/reduction.py` and
their CUDA twins), and `ember.kernel`'s loops around a user's function (`_custom/_cpu.py`,
`_custom/_cuda.py`). The templates stay with their device; the loading happens once, here.

Why generate at all: every op gets its own loops (a dedicated loop vectorises; an
``if op == k`` switch inside one shared loop does not), and Numba caches compiled code on
disk only for functions that live in a real source file, not for closures or
``exec``-made functions. So a built-in kernel's source is written into a file of ember's
kernel cache directory and imported from there (`load`).

Staleness: Numba's cache keys a kernel on its own file only, so a change in a file that
it imports (`scalar.py`, say) would go unseen. The directory a module is written into is
therefore named by a hash of the files its source imports from ember (`depends_on`),
ember's version and Numba's and numba-cuda's versions: a stale kernel can never load.

A user's `ember.kernel` function is a live Python object, not a file ember owns: its
loops are closures compiled in memory once per process (`compile_function`).
"""
import functools
import hashlib
import importlib.util
import os
import sys
import threading

from .. import version as _version

__all__ = ["cache_root", "cache_dir", "load", "generated_modules", "compile_function"]

_lock = threading.Lock()
_modules = {}   # module name -> loaded module
_dirs = {}      # depends_on -> its created cache directory


def cache_root():
    """The root of ember's kernel cache: ``$EMBER_CACHE_DIR``, else ``~/.cache/ember``.

    Example:
        >>> import os
        >>> os.path.basename(cache_root()) or "set by EMBER_CACHE_DIR"  # doctest: +ELLIPSIS
        '...'
    """
    return os.environ.get("EMBER_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "ember")


def _versions():
    import numba  # imported on first kernel use: keeps `import ember_tensor` fast
    try:
        from numba_cuda import __version__ as cuda_version  # its __init__ imports nothing else
    except ImportError:
        cuda_version = "-"
    return (_version.__version__, numba.__version__, cuda_version)


def cache_dir(depends_on=()):
    """The cache directory for generated modules that import the files ``depends_on``.

    Args:
        depends_on: paths of the ember source files the generated code imports (and so
            inlines into its compiled kernels); their contents key the directory.

    Returns:
        ``<cache_root()>/kernels-<hash>``, the hash covering those files' contents,
        ember's version and Numba's and numba-cuda's versions.

    Example:
        >>> cache_dir().startswith(cache_root())
        True
    """
    h = hashlib.sha256()
    for path in depends_on:
        with open(path, "rb") as fh:
            h.update(fh.read())
    for part in _versions():
        h.update(part.encode() + b"\0")
    return os.path.join(cache_root(), "kernels-" + h.hexdigest()[:16])


def _write_atomically(path, text):
    # Several processes (DataLoader workers, MPI ranks) may race to write the same file:
    # each writes its own temporary and renames it over, so no reader sees half a file.
    tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
    with open(tmp, "w") as fh:
        fh.write(text)
    os.replace(tmp, path)


def load(name, source, depends_on=()):
    """Import generated kernel module ``name`` from ``source``, memoized for the process.

    The source is written (atomically, and only when it differs from what is there) into
    ``cache_dir(depends_on)`` and imported from that file, so that its ``cache=True``
    kernels load from Numba's on-disk cache in later processes.

    Args:
        name: a module name unique among generated modules (e.g. ``ember_kernel_unary_exp``).
        source: the module's Python source.
        depends_on: paths of the ember files that ``source`` imports from.

    Returns:
        The module; the same object on every later call with this ``name``.

    Example:
        >>> load("ember_doctest_module", "ANSWER = 42\\n").ANSWER
        42
    """
    module = _modules.get(name)
    if module is not None:
        return module
    with _lock:
        module = _modules.get(name)
        if module is not None:
            return module
        key = tuple(depends_on)
        directory = _dirs.get(key)
        if directory is None:
            directory = _dirs[key] = cache_dir(key)
            os.makedirs(directory, exist_ok=True)
        path = os.path.join(directory, name + ".py")
        try:
            with open(path) as fh:
                current = fh.read()
        except OSError:
            current = None
        if current != source:
            _write_atomically(path, source)
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        # Numba's cache (and tools/cuda_ptx_check.py) find a kernel's module again by name.
        sys.modules[name] = module
        spec.loader.exec_module(module)
        _modules[name] = module
        return module


def generated_modules(depends_on=()):
    """Decorator: ``source_of(*key) -> (module name, source)`` becomes ``(*key) -> module``.

    The returned function loads each key's module with `load` once and then answers from a
    dict, with no string building: backends call it on every op, so it must stay as cheap
    as a dict lookup.

    Args:
        depends_on: paths of the ember files the generated sources import (see `load`).

    Example:
        >>> @generated_modules()
        ... def answers(n):
        ...     return f"ember_doctest_answer_{n}", f"ANSWER = {n}\\n"
        >>> answers(7).ANSWER, answers(7) is answers(7)
        (7, True)
    """
    def decorate(source_of):
        modules = {}

        @functools.wraps(source_of)
        def module(*key):
            mod = modules.get(key)
            if mod is None:
                name, source = source_of(*key)
                mod = modules[key] = load(name, source, depends_on)
            return mod

        return module

    return decorate


def compile_function(source, name, namespace, filename):
    """The function ``name`` that ``source`` defines, executed in ``namespace`` (in memory).

    For kernels that close over live objects (a user's ``ember.kernel`` function): such a
    kernel cannot be cached on disk, so it is compiled from memory once per process; the
    caller memoizes it.

    Args:
        source: Python source defining ``name``.
        name: the function to return.
        namespace: the globals the source runs in (it is not modified).
        filename: the name tracebacks show for the source.

    Example:
        >>> compile_function("def f(x):\\n    return x + k\\n", "f", {"k": 1}, "<doctest>")(2)
        3
    """
    scope = dict(namespace)
    exec(compile(source, filename, "exec"), scope)
    return scope[name]
