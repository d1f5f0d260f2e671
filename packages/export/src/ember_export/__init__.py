"""ember-export: tracing to a graph (``ember.jit.trace``), ONNX export and import (``ember.onnx``).

It works on any callable and walks a model's ``named_parameters()``/``named_buffers()`` by
duck typing: it does not import ember-nn.
"""

import ember_autograd
import ember_tensor
from ember_tensor.version import check_layers

__version__ = "0.1.0"

_NEEDED_BY = f"ember-export {__version__}"
check_layers(__file__, _NEEDED_BY)

from . import jit, onnx  # noqa: E402
from ._trace import TracedModule, TracerWarning, trace  # noqa: E402

__all__ = ["jit", "onnx", "trace", "TracedModule", "TracerWarning"]
