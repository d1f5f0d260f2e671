"""``torch.compile(model, *, fullgraph, dynamic, backend, mode, options, disable)``."""
import functools

from ember_nn import Module

from .optimized_module import OptimizedModule

__all__ = ["compile", "InvalidBackend", "BACKENDS", "MODES", "DEFAULT_BACKEND"]

# PyTorch's registered backends (``torch._dynamo.list_backends()``) and the debugging ones
# it accepts by name; every one runs eagerly in ember for now.
BACKENDS = ("inductor", "cudagraphs", "openxla", "tvm", "eager", "aot_eager", "aot_eager_decomp_partition")
MODES = ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")
# The backend compile uses when none is named (torch.compiler.set_default_backend).
DEFAULT_BACKEND = {"name": "inductor"}


class InvalidBackend(RuntimeError):
    """``torch._dynamo.exc.InvalidBackend``: a backend name no one registered."""


def _check(backend, mode, options):
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be specified at the same time.")
    if mode is not None and mode not in MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(MODES)}")
    if isinstance(backend, str) and backend not in BACKENDS:
        raise InvalidBackend(f"Invalid backend: {backend!r}, see `torch._dynamo.list_backends()` for available "
                             "backends.")
    if backend is not None and not isinstance(backend, str):
        # A callable backend is handed a captured fx graph; ember captures none yet.
        raise NotImplementedError("ember's compile takes a backend by name; a callable backend needs graph "
                                  "capture, which ember does not have yet")


def compile(model=None, *, fullgraph=False, dynamic=None, backend=None, mode=None, options=None,  # noqa: A001
            name=None, disable=False, **kwargs):
    """Compile `model` (a module or a function), or return a decorator that does when it
    is None. In ember the result runs eagerly (see the package docstring); `disable`
    returns `model` itself, as PyTorch does."""
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
    if isinstance(model, Module):
        return OptimizedModule(model)

    @functools.wraps(model)
    def compiled(*args, **kw):
        return model(*args, **kw)

    compiled._torchdynamo_orig_callable = model
    return compiled
