"""The derivative table (see `_registry`); importing this package fills it, one module per
family of ops."""
from ._registry import COMPOSITE, NOT_DIFFERENTIABLE, RESULT, TABLE, derivative  # noqa: F401
from . import elementwise, views, indexing, linalg, convert  # noqa: F401,E402
from . import reduction, random  # noqa: F401,E402
from . import shape_ops, linalg_ext  # noqa: F401,E402
from . import nn  # noqa: F401,E402
from . import index_ops, sorting_scans  # noqa: F401,E402
from . import sparse, optim  # noqa: F401,E402
from . import special  # noqa: F401,E402
from . import complex  # noqa: F401,E402
from . import fft  # noqa: F401,E402
from . import linalg_factor  # noqa: F401,E402

__all__ = ["TABLE", "COMPOSITE", "NOT_DIFFERENTIABLE", "RESULT", "derivative"]
