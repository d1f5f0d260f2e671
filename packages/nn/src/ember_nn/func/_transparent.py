"""``functionalize`` and ``debug_unwrap``: transforms that are identities in ember.

PyTorch's functionalize rewrites mutations into out-of-place ops for graph capture (the
function's results and its effects on inputs are unchanged); debug_unwrap strips
functorch's wrapper tensors. ember runs transforms on plain tensors, so both hand back
what they are given.
"""
import functools

__all__ = ["functionalize", "debug_unwrap"]

_REMOVE_OPTIONS = ("mutations", "mutations_and_views")


def functionalize(func, *, remove="mutations"):
    """`func` itself, behind PyTorch's check of `remove` (same results and same input mutations)."""
    if remove not in _REMOVE_OPTIONS:
        raise RuntimeError(
            f"functionalize(f, remove='mutations'): received invalid argument for remove={remove}. Valid options "
            "are:\n     remove='mutations': all inplace and out= operators will be removed from the program, and "
            "replaced with their out-of-place equivalents.\n     remove='mutations_and_views': In addition to the "
            "above, all aliasing operators {view} will be replaced with their non-aliasing counterparts, "
            "{view}_copy.\n")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return func(*args, **kwargs)

    return wrapper


def debug_unwrap(tensor, *, recurse=True):
    """`tensor` itself: ember's transforms never wrap tensors."""
    return tensor
