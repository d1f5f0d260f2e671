"""``torch.compiler``: the compiler's controls. `reset` drops every compiled graph;
`is_compiling` is True while a graph is being captured; the decorators that shape a
capture (`disable`, `allow_in_graph`, `assume_constant_result`) return their function as
it is (ember breaks graphs at function granularity)."""
import contextlib

from . import capture as _capture
from .api import BACKENDS, DEFAULT_BACKEND, compiled_functions

__all__ = ["reset", "disable", "is_compiling", "is_dynamo_compiling", "is_exporting", "allow_in_graph",
           "assume_constant_result", "list_backends", "get_default_backend", "set_default_backend",
           "cudagraph_mark_step_begin", "set_stance"]

def reset():
    """Drop every compiled graph and its guards: the next calls compile again."""
    for compiled in compiled_functions():
        compiled.reset()


def disable(fn=None, recursive=True, *, reason=None):
    """Run `fn` without compiling it (a decorator; ember runs everything eagerly)."""
    if fn is None:
        return lambda f: f
    return fn


def is_compiling():
    """Whether the code runs inside a graph being captured."""
    return _capture.capturing()


def is_dynamo_compiling():
    """As `is_compiling`."""
    return _capture.capturing()


def is_exporting():
    """Whether the code runs inside torch.export: never in ember."""
    return False


def allow_in_graph(fn):
    """Let a captured graph call `fn` as an opaque node (no graph is captured: `fn` itself)."""
    return fn


def assume_constant_result(fn):
    """Treat `fn`'s result as a constant in a captured graph (`fn` itself here)."""
    return fn


def list_backends(exclude_tags=("debug", "experimental")):
    """The backend names `compile` takes (the debugging ones when `exclude_tags` is empty)."""
    debug = ("eager", "aot_eager", "aot_eager_decomp_partition", "ember")
    return sorted(b for b in BACKENDS if not exclude_tags or b not in debug)


def get_default_backend():
    """The backend `compile` uses when none is named."""
    return DEFAULT_BACKEND["name"]


def set_default_backend(backend):
    """Set the backend `compile` uses when none is named."""
    DEFAULT_BACKEND["name"] = backend


def cudagraph_mark_step_begin():
    """Mark a new step for CUDA graphs (ember records none)."""


def set_stance(stance="default", *, skip_guard_eval_unsafe=False, force_backend=None):
    """Set how compiled code runs (everything runs eagerly in ember): a context manager too."""
    return contextlib.nullcontext()
