"""The conjugate that complex formulas need, free for real operands.

PyTorch's convention for complex inputs is the conjugate Wirtinger derivative: a
holomorphic op's gradient multiplies by the conjugate of its derivative. For real tensors
that conjugate is the tensor itself, and the training hot path must not pay an op call for
it, nor fail on operands (sparse tensors) that have no conj kernel.
"""
__all__ = ["conj"]


def conj(x):
    """`x`'s complex conjugate where `x` is complex (a tensor or a Python complex); anything
    else is returned as it is, with no op called."""
    if isinstance(x, complex):
        return x.conjugate()
    dtype = getattr(x, "dtype", None)
    if dtype is not None and dtype.is_complex:
        return x.conj()
    return x
