"""The families of backend functions: the modules every backend has, with one name each.

An op in `_ops/<family>.py` calls ``backends.get(device).<family>.<function>(arrays...)``;
`tests/test_backend_symmetry.py` holds every backend to the same families and function
names, and `GAPS` declares where a backend lacks a function (the op raises a clear
error there, never a silent trip through the host).
"""

__all__ = ["FAMILIES", "GAPS"]

FAMILIES = (
    "storage",      # allocation, views, copies, dtype conversion, host transfer
    "elementwise",  # unary, binary, ternary loops
    "reduction",    # sum/mean/prod/..., arg max/min, var_mean, median
    "matmul",       # matrix products (BLAS, cuBLAS)
    "sorting",      # sort, argsort, top-k, k-th value, nanmedian, mode along a dim
    "scans",        # running sums/products, running max/min, logcumsumexp along a dim
    "counting",     # unique, searchsorted, histc, bincount (and the numbers they read back)
    "random",       # samplers drawing from a generator's stream, parameter checks
)

# {(family, function): {device type that lacks it: why}}.
GAPS = {}
