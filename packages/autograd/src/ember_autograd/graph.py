"""The graph's public types (PyTorch's ``torch.autograd.graph``)."""
from ._graph import Node
from ._hooks import RemovableHandle

__all__ = ["Node", "RemovableHandle"]
