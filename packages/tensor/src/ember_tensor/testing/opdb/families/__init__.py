"""The family database: `FAMILY_DB`, one `FamilyOpInfo` per op of every family beyond the
elementwise ops and reductions — nn kernels, indexing, sort/scan, linalg, random and
sparse — consumed by the generic tests in tests/test_op_families.py on every device.

Each family is a module here holding its NumPy references, sample generators and
entries; `info.py` holds the entry type. Nothing here imports torch.
"""
from .info import FAMILIES, FAMILY_TOLERANCE, FamilyOpInfo, XFailOn
from .indexing import INDEXING_DB
from .linalg import LINALG_DB
from .nn import NN_DB
from .random_ops import RANDOM_DB
from .sort_scan import SORT_SCAN_DB
from .sparse import SPARSE_DB

__all__ = ["FAMILY_DB", "FAMILY_OPS", "FAMILIES", "FAMILY_TOLERANCE", "FamilyOpInfo", "XFailOn"]

FAMILY_DB = [*NN_DB, *INDEXING_DB, *SORT_SCAN_DB, *LINALG_DB, *RANDOM_DB, *SPARSE_DB]
FAMILY_OPS = {op.name: op for op in FAMILY_DB}
assert len(FAMILY_OPS) == len(FAMILY_DB), "an op is listed twice"
