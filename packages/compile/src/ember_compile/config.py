"""The compiler's settings (``torch._dynamo.config``'s names).

Attributes:
    cache_size_limit: how many graphs one compiled callable keeps, one per set of guards
        (input shapes, dtypes, ...); a call that would need one more runs eagerly, with a
        warning the first time. PyTorch's default, 8.
    recompile_limit: PyTorch's newer name for the same limit; `cache_size_limit` wins when
        both are set differently from 8.
"""
cache_size_limit = 8
recompile_limit = 8


def limit():
    """The graph cache limit in force (either name may have been set)."""
    return cache_size_limit if cache_size_limit != 8 else recompile_limit
