"""Passes over fx graphs (``torch.fx.passes``): ``shape_prop.ShapeProp``."""
from . import shape_prop

__all__ = ["shape_prop"]
