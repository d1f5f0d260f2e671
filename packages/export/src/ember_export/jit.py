"""``ember.jit``: tracing (``trace``); ``script`` is not offered (tracing covers export)."""
from ember_tensor.dispatch import is_tracing

from ._trace import TracedModule, TracerWarning, trace

__all__ = ["trace", "TracedModule", "TracerWarning", "script", "is_tracing", "is_scripting"]


def is_scripting():
    """False: ember has no TorchScript compiler, so no code runs scripted."""
    return False


def script(obj, *args, **kwargs):
    """Not supported: ember has no TorchScript compiler. Use ``ember.jit.trace``."""
    raise NotImplementedError("ember.jit.script is not supported: ember does not compile Python source to "
                              "TorchScript. Use ember.jit.trace(model, example_inputs) to record a graph, or "
                              "ember.onnx.export to export one.")
