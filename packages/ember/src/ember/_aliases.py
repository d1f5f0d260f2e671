"""PyTorch's submodule paths (``ember.cuda``, ...), each served by the package that holds it.

Kept out of ``ember/__init__.py`` on purpose: that module star-imports ember_tensor, whose
``any``, ``all``, ``bool``, ``range``, ... shadow Python's builtins there.
"""

import importlib
import importlib.util
import sys

# PyTorch's path -> the module that serves it. Every name under an alias maps too:
# ``import ember.cuda.random`` imports ``ember_tensor.cuda.random``, and the module
# object is the same one, so ``ember.cuda is ember_tensor.cuda``. A path is there only
# while its real module exists.
#
# A path whose real module does not exist (yet) is simply absent: ``import ember.onnx``
# raises ModuleNotFoundError until ember_export grows an ``onnx`` module.
SUBMODULE_ALIASES = {
    "ember.cuda": "ember_tensor.cuda",
    "ember.cuda.amp": "ember_amp.cuda_amp",
    "ember.cpu.amp": "ember_amp.cpu_amp",
    "ember.amp": "ember_amp",
    "ember.linalg": "ember_tensor.linalg",
    "ember.special": "ember_tensor.special",
    "ember.sparse": "ember_tensor.sparse",
    "ember.random": "ember_tensor.random",
    "ember.fft": "ember_tensor.fft",
    "ember.signal": "ember_tensor.signal",
    "ember.accelerator": "ember_tensor.accelerator",
    "ember.xpu": "ember_tensor.xpu",
    "ember.mps": "ember_tensor.mps",
    "ember.backends": "ember_tensor.backend_flags",
    "ember.types": "ember_tensor.types",
    "ember.return_types": "ember_tensor.return_types",
    "ember.multiprocessing": "ember_tensor.multiprocessing",
    "ember.hub": "ember_tensor.hub",
    "ember.testing": "ember_tensor.testing",
    "ember.autograd": "ember_autograd",
    "ember.nn": "ember_nn",
    "ember.func": "ember_nn.func",
    "ember.optim": "ember_optim",
    "ember.utils.data": "ember_data",
    "ember.utils.checkpoint": "ember_autograd.checkpoint",
    "ember.utils.hooks": "ember_autograd.hooks",
    "ember.utils.backcompat": "ember_tensor.backcompat",
    "ember.profiler": "ember_autograd.scheduled_profiler",
    "ember.distributed": "ember_distributed",
    "ember.compiler": "ember_compile.compiler",
    "ember.onnx": "ember_export.onnx",
    "ember.fx": "ember_fx",
    "ember.jit": "ember_export.jit",
    "ember.distributions": "ember_distributions",
    "ember.serialization": "ember_tensor.serialization",
}

# PyTorch's packages inside pickled checkpoints -> the ember package serving each. With
# these registered, ``torch.load``-style files naming ``torch.nn.modules.linear.Linear`` or
# ``torch.optim.adam.Adam`` load as ember's classes (weights_only=False), and ember writes
# its classes under those names. ember_tensor cannot import the layers above it, so the
# meta-package, which stands on all of them, registers the table.
TORCH_PACKAGES = [
    ("torch.nn", "ember_nn"),
    ("torch.optim", "ember_optim"),
    ("torch.utils.data", "ember_data"),
    ("torch.autograd", "ember_autograd"),
    ("torch.distributed", "ember_distributed"),
    # torchvision is not under torch: ember-vision's models are written under its names.
    ("torchvision", "ember_vision"),
]


def aliased_name(fullname):
    """The real module name behind ``fullname`` (``ember.cuda.x`` -> ``ember_tensor.cuda.x``).

    The longest alias wins: ``ember.cuda.amp`` is ember-amp's, not a module of ember_tensor.cuda.
    """
    for alias in sorted(SUBMODULE_ALIASES, key=len, reverse=True):
        if fullname == alias or fullname.startswith(alias + "."):
            return SUBMODULE_ALIASES[alias] + fullname[len(alias):]
    return None


class _AliasLoader:
    """Loads an aliased name by importing the real module and handing back that object."""

    def __init__(self, real_name, on_layer_load):
        self.real_name = real_name
        self.on_layer_load = on_layer_load
        self._real_spec = None

    def create_module(self, spec):
        module = importlib.import_module(self.real_name)
        if self.on_layer_load is not None:
            # The layer's top-level module: ``ember_nn`` for ``ember.nn.functional``.
            self.on_layer_load(sys.modules[self.real_name.partition(".")[0]])
        self._real_spec = module.__spec__
        return module

    def exec_module(self, module):
        # The import system stamps the alias's spec onto the module it was given; put the
        # real one back, or relative imports inside that module would see a wrong parent.
        module.__spec__ = self._real_spec


class _AliasFinder:
    """A meta path finder for the paths in SUBMODULE_ALIASES whose real module exists."""

    is_ember_alias_finder = True

    def __init__(self, on_layer_load=None):
        self.on_layer_load = on_layer_load

    def find_spec(self, fullname, path=None, target=None):
        real_name = aliased_name(fullname)
        if real_name is None:
            return None
        try:
            if importlib.util.find_spec(real_name) is None:
                return None
        except ModuleNotFoundError:  # a parent of real_name is missing
            return None
        return importlib.util.spec_from_loader(fullname, _AliasLoader(real_name, self.on_layer_load))


def install(on_layer_load=None):
    """Put the alias finder on ``sys.meta_path`` (once), ahead of the path finders.

    ``on_layer_load(module)`` is called with a layer's top-level module (``ember_nn``) each
    time an alias into it loads: ember checks its version pins there, so a layer that is
    never used is never imported.

    Ahead, because once ``ember.cuda`` is a package the path finders would load its
    submodules a second time under the alias's name.
    """
    if not any(getattr(finder, "is_ember_alias_finder", False) for finder in sys.meta_path):
        sys.meta_path.insert(0, _AliasFinder(on_layer_load))
    from ember_tensor import serialization  # the table below is data for it, registered once here

    for torch_prefix, real_prefix in TORCH_PACKAGES:
        serialization.register_module_alias(torch_prefix, real_prefix)


def module_getattr(name):
    """``ember.<name>`` for an alias not imported yet (``ember.cuda`` with no ``import ember.cuda``)."""
    path = f"ember.{name}"
    if path in SUBMODULE_ALIASES:
        try:
            return importlib.import_module(path)
        except ModuleNotFoundError as error:
            if error.name != path:
                raise  # the module exists but something it imports is missing
    raise AttributeError(f"module 'ember' has no attribute {name!r}")
