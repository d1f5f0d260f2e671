"""ember-compile: ``torch.compile`` for ember.

Today `compile` takes PyTorch's arguments, checks them with PyTorch's errors, and returns
a callable (an `OptimizedModule` for a module) that runs the model eagerly: the results
and gradients are eager ember's. Graph capture, ahead-of-time backward and Numba fusion
are not written yet; what a program sees is PyTorch's ``backend="eager"``: the same API,
the same state_dict keys (``_orig_mod.``), no speed-up. Programs that call
``torch.compile(model)`` (nanoGPT, the current tutorials) run unchanged.

>>> import ember_nn as nn
>>> model = compile(nn.Linear(2, 3))
>>> type(model).__name__, list(model.state_dict())
('OptimizedModule', ['_orig_mod.weight', '_orig_mod.bias'])
"""
import ember_nn  # noqa: F401
import ember_tensor  # noqa: F401
from ember_tensor.version import check_layers

__version__ = "0.1.0"

_NEEDED_BY = f"ember-compile {__version__}"
check_layers(__file__, _NEEDED_BY)

from . import compiler  # noqa: E402 -- after the version checks
from .api import compile, InvalidBackend  # noqa: E402,A004
from .optimized_module import OptimizedModule  # noqa: E402

__all__ = ["compile", "compiler", "OptimizedModule", "InvalidBackend"]
