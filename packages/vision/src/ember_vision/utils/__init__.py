"""torchvision.utils: ``make_grid`` and ``save_image``."""
from .grid import make_grid, save_image

__all__ = ["make_grid", "save_image"]
