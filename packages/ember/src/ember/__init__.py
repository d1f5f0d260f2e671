"""ember: PyTorch's API on kernels compiled by Numba.

``import ember as torch`` is the point of this package: it re-exports the layers of the
stack under PyTorch's names. The top level (``ember.tensor``, ``ember.Tensor``,
``ember.float32``, ...) is ember_tensor's public surface plus the grad-mode switches that
PyTorch keeps at its top level (``ember.no_grad``, ...); submodule paths such as
``ember.nn`` or ``ember.utils.data`` are served, lazily, by the package that holds them
(see _aliases.py).

Below the star import, names such as ``any``, ``bool`` and ``range`` are ember_tensor's,
not Python's builtins: keep logic out of this file.
"""

import sys as _sys
from pathlib import Path as _Path

import ember_tensor
from ember_tensor import *  # noqa: F403 -- PyTorch's top level is ember_tensor's surface
from ember_tensor.version import check_layer_version, read_layers

from ember import _aliases

__version__ = "0.1.0"

# ember pins the exact set of layers it was tested with, in layers.txt (which its
# pyproject.toml reads too): module -> (distribution, pin, next patch). A range check of
# [pin, next patch) accepts that release and its dev/post builds, nothing else.
PINNED_LAYERS = {name.replace("-", "_"): (name, minimum, below)
                 for name, minimum, below in read_layers(_Path(__file__).with_name("layers.txt"))}
_NEEDED_BY = f"ember {__version__}"


def _check_pinned(module):
    """Refuse a layer other than the one ember pins; called as each layer first loads."""
    distribution, minimum, below = PINNED_LAYERS[module.__name__]
    check_layer_version(distribution, module.__version__, minimum, below, _NEEDED_BY)
    if module.__name__ == "ember_nn":
        _wire_nn_parallel(module)


def _wire_nn_parallel(ember_nn):
    """``ember.nn.parallel.DistributedDataParallel``: PyTorch keeps DDP under nn.parallel, but
    ember-nn may not import its sibling ember-distributed, so the meta-package (the one
    package that stands on both) puts it there."""
    import importlib

    parallel = importlib.import_module("ember_nn.parallel")
    if not hasattr(parallel, "DistributedDataParallel"):
        import ember_distributed

        parallel.DistributedDataParallel = ember_distributed.DistributedDataParallel


_check_pinned(ember_tensor)

# ``str(type(x))`` names the public path, as PyTorch prints <class 'torch.Tensor'>; the
# class is reachable there (``ember.Tensor``), so pickling the class itself still works.
ember_tensor.Tensor.__module__ = "ember"

# PyTorch fills autograd in at ``import torch``: importing ember_autograd installs it into
# ember_tensor's autograd slot and dispatcher, so ``backward()`` works from here on.
import ember_autograd  # noqa: E402

_check_pinned(ember_autograd)
from ember_autograd import (  # noqa: E402,F401 -- re-exported at the top level, as torch.no_grad
    enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad, set_grad_enabled,
)
from ember_autograd.anomaly_mode import (  # noqa: E402,F401 -- torch.is_anomaly_enabled, ...
    is_anomaly_check_nan_enabled, is_anomaly_enabled, set_anomaly_enabled,
)


def _on_layer_load(module):
    """A layer loaded through ember (``ember.nn``, ...): its pin checked, and ember-nn's
    ``Module.compile`` given ``ember.compile``."""
    _check_pinned(module)
    if module.__name__ == "ember_nn":
        from ember._compile_entry import register_module_compile
        register_module_compile(module)


_aliases.install(on_layer_load=_on_layer_load)
if "ember_nn" in _sys.modules:  # loaded before ember: not through the aliases
    _on_layer_load(_sys.modules["ember_nn"])

# torch.conv2d, torch.layer_norm, torch.embedding, ...: ATen's signatures over ember-nn's ops,
# which load at the first call.
from ember._functional_spellings import *  # noqa: E402,F403
from ember._functional_spellings import install_tensor_methods as _install_tensor_methods  # noqa: E402

_install_tensor_methods(ember_tensor.Tensor)


def __getattr__(name):
    # torch.OutOfMemoryError is torch.cuda's class; ember_tensor loads it on first use
    if name == "OutOfMemoryError":
        return ember_tensor.OutOfMemoryError
    return _aliases.module_getattr(name)


# PyTorch keeps autocast at its top level (torch.autocast, torch.is_autocast_enabled, ...) and
# ``torch.cuda.amp`` reachable after ``import torch``: ember-amp is light (no kernels, and
# its dispatcher wrapper is registered only inside an autocast region), so it loads here.
import ember_amp  # noqa: E402

_check_pinned(ember_amp)
from ember_amp import (  # noqa: E402,F401 -- re-exported at the top level, as torch.autocast
    GradScaler, autocast, autocast_decrement_nesting, autocast_increment_nesting, clear_autocast_cache, get_autocast_cpu_dtype,
    get_autocast_dtype, get_autocast_gpu_dtype, is_autocast_cache_enabled, is_autocast_cpu_enabled,
    is_autocast_enabled, set_autocast_cache_enabled, set_autocast_cpu_dtype, set_autocast_cpu_enabled,
    set_autocast_dtype, set_autocast_enabled, set_autocast_gpu_dtype,
)


def _wire_cuda_amp():
    """``ember.cuda.amp``: PyTorch's deprecated CUDA spellings of autocast and GradScaler live
    under torch.cuda, which is ember-tensor's module; ember-tensor knows nothing of amp, so
    the meta-package (which stands on both) puts ember-amp's module there."""
    import ember_tensor.cuda

    ember_tensor.cuda.amp = ember_amp.cuda_amp


_wire_cuda_amp()

from ember import cpu, utils, version  # noqa: E402,F401 -- ``ember.utils.data``, ``ember.cpu.amp``, ``ember.version.cuda``
from ember._compile_entry import compile  # noqa: E402,A004 -- torch.compile (ember-compile loads on first call)
from ember._func_entry import vmap  # noqa: E402 -- torch.vmap (ember.func loads on first call)

_GRAD_MODES = ["no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "inference_mode",
               "is_inference_mode_enabled", "is_anomaly_enabled", "is_anomaly_check_nan_enabled",
               "set_anomaly_enabled"]
_AUTOCAST = ["GradScaler", "autocast", "is_autocast_enabled", "set_autocast_enabled", "get_autocast_dtype", "set_autocast_dtype",
             "is_autocast_cache_enabled", "set_autocast_cache_enabled", "clear_autocast_cache",
             "autocast_increment_nesting", "autocast_decrement_nesting", "is_autocast_cpu_enabled",
             "set_autocast_cpu_enabled", "get_autocast_cpu_dtype", "set_autocast_cpu_dtype", "get_autocast_gpu_dtype",
             "set_autocast_gpu_dtype"]
__all__ = [*ember_tensor.__all__, *_GRAD_MODES, *_AUTOCAST, "compile", "vmap"]
