"""ember-compile: ``torch.compile`` for ember.

`compile(model)` captures the model's forward (or a function) with ember-fx's symbolic
tracer on the first call, guarded by what that call saw (shapes, dtypes, devices,
requires_grad, grad mode, training flags, Python values), and fuses chains of elementwise
ops into generated Numba kernels (ember-tensor's one kernel generator, cached on disk),
each one autograd node whose backward comes from ember's derivative table. A training call
runs the whole graph as one autograd node whose backward was derived from that table ahead
of time (`joint`). What cannot be captured runs eagerly (a graph break, reported by
`explain`). An `OptimizedModule` keeps
PyTorch's state_dict keys (``_orig_mod.``), so programs that call ``torch.compile(model)``
(nanoGPT, the current tutorials) run unchanged; `Module.compile()` compiles in place.

>>> import ember_nn as nn
>>> model = compile(nn.Linear(2, 3))
>>> type(model).__name__, list(model.state_dict())
('OptimizedModule', ['_orig_mod.weight', '_orig_mod.bias'])
"""
import ember_fx  # noqa: F401
import ember_nn  # noqa: F401
import ember_tensor  # noqa: F401
from ember_tensor.version import check_layers

__version__ = "0.1.0"

_NEEDED_BY = f"ember-compile {__version__}"
check_layers(__file__, _NEEDED_BY)

from . import compiler, config  # noqa: E402 -- after the version checks
from .api import compile  # noqa: E402,A004
from .exc import InvalidBackend, Unsupported  # noqa: E402
from .explain import explain, ExplainOutput  # noqa: E402
from .optimized_module import OptimizedModule  # noqa: E402

# `Module.compile()` (ember-nn, below this package) compiles with this package's compile.
from ember_nn.modules import module as _nn_module  # noqa: E402
_nn_module.register_compiler(compile, compiler.is_compiling)

__all__ = ["compile", "compiler", "config", "explain", "ExplainOutput", "OptimizedModule", "InvalidBackend",
           "Unsupported"]
