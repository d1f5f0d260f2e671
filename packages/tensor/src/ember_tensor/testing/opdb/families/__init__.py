"""The family database: `FAMILY_DB`, one `FamilyOpInfo` per op of every family beyond the
elementwise ops and reductions — nn kernels, indexing, sort/scan, linalg, random and
sparse — consumed by the generic tests in tests/test_op_families.py on every device.

Each family is a module here holding its NumPy references, sample generators and
entries; `info.py` holds the entry type. Nothing here imports torch.
"""
from .info import FAMILIES, FAMILY_TOLERANCE, FamilyOpInfo, XFailOn
from .nn import NN_DB

__all__ = ["FAMILY_DB", "FAMILY_OPS", "FAMILIES", "FAMILY_TOLERANCE", "FamilyOpInfo", "XFailOn"]

FAMILY_DB = [*NN_DB]
FAMILY_OPS = {op.name: op for op in FAMILY_DB}
assert len(FAMILY_OPS) == len(FAMILY_DB), "an op is listed twice"
