"""Every layer class of ember_nn (``torch.nn.modules``), re-exported by ``ember_nn``."""
from .module import Module
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential

__all__ = ["Module", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"]
