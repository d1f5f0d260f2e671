"""``torch.compile(model, *, fullgraph, dynamic, backend, mode, options, disable)``."""
import functools
import weakref

from ember_nn import Module

from .backends import BACKENDS as _BACKEND_FUNCTIONS
from .compiled_function import CompiledFunction
from .exc import InvalidBackend
from .optimized_module import OptimizedModule

__all__ = ["compile", "InvalidBackend", "BACKENDS", "MODES", "DEFAULT_BACKEND", "compiled_functions"]

# PyTorch's registered backends (``torch._dynamo.list_backends()``), the debugging ones
# it accepts by name, and ember's own name for its compiler (see backends.py).
BACKENDS = tuple(_BACKEND_FUNCTIONS)
MODES = ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")
# The backend compile uses when none is named (torch.compiler.set_default_backend).
DEFAULT_BACKEND = {"name": "inductor"}
# Every CompiledFunction alive, so that torch.compiler.reset() can empty their caches.
_compiled = weakref.WeakSet()


def compiled_functions():
    """The live `CompiledFunction`\\ s (what ``torch.compiler.reset`` clears)."""
    return list(_compiled)


def _check(backend, mode, options):
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be specified at the same time.")
    if mode is not None and mode not in MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(MODES)}")
    if isinstance(backend, str) and backend not in BACKENDS:
        raise InvalidBackend(f"Invalid backend: {backend!r}, see `torch._dynamo.list_backends()` for available "
                             "backends.")
    if not isinstance(backend, str) and not callable(backend):
        raise InvalidBackend(f"Invalid backend: {backend!r}: a backend is a name or a callable "
                             "(gm, example_inputs) -> callable")


def compile(model=None, *, fullgraph=False, dynamic=None, backend=None, mode=None, options=None,  # noqa: A001
            name=None, disable=False, **kwargs):
    """Compile `model` (a module or a function), or return a decorator that does when it
    is None.

    The first call captures the program into an fx graph specialised to what it saw
    (guards: input shapes, dtypes, devices, requires_grad, grad mode, training flags and
    the Python values the code read), hands it to `backend` — ember's compiler by default,
    which fuses chains of elementwise ops into generated Numba kernels — and runs the
    result; a call that fails the guards compiles again (up to
    ``config.cache_size_limit`` graphs). A call the tracer cannot capture (control flow
    on tensor values, ...) runs eagerly ("graph break"), or raises `Unsupported` with
    ``fullgraph=True``. `disable` returns `model` itself, as PyTorch does.

    Args:
        model: a Module or function.
        fullgraph: raise instead of falling back to eager.
        dynamic: True: no guard on input shapes (the graph is shape-generic).
        backend: a name (``torch._dynamo.list_backends()``'s, or ``"ember"``) or a
            callable ``backend(gm, example_inputs) -> callable``.
        mode, options: PyTorch's; ``options={"trace.graph": True, "trace.fusion": True,
            "trace.code": True}`` prints what the compiler does (see ``trace_log``).

    >>> import ember_tensor as torch
    >>> f = compile(lambda x, y: torch.relu(x * y + 1.0))
    >>> f(torch.tensor([1., -2.]), torch.tensor([3., 3.]))
    tensor([4., 0.])
    """
    backend = DEFAULT_BACKEND["name"] if backend is None else backend
    _check(backend, mode, options)
    if model is None:
        def decorator(fn):
            return compile(fn, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode, options=options,
                           name=name, disable=disable, **kwargs)
        return decorator
    if not callable(model):
        raise AssertionError(f"A callable function is expected, but {type(model)} is provided.")
    if disable:
        return model
    compiled_function = CompiledFunction(model, backend=backend, fullgraph=fullgraph, dynamic=dynamic,
                                         options=options)
    _compiled.add(compiled_function)
    if isinstance(model, Module):
        return OptimizedModule(model, compiled_function)

    @functools.wraps(model)
    def compiled(*args, **kw):
        return compiled_function(*args, **kw)

    compiled._torchdynamo_orig_callable = model
    compiled._ember_compiled_function = compiled_function
    return compiled
