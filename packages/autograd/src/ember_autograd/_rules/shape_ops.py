"""Derivatives of the copying shape ops (repeat, tile, flip, roll, rot90, tril, triu, ...).

Only `flip` computes its result outside other ember ops, so only it has a formula; the
rest are built from views, cat and where, and are differentiated through those.
"""
from ._registry import composite, derivative, not_differentiable


@derivative("flip", save=lambda input, *args, dims=None: (args if dims is None else (dims,),))
def flip(ctx, grad, dims):
    return grad.flip(*dims)  # flipping is its own inverse


composite("broadcast_to", "broadcast_tensors", "meshgrid", "repeat", "tile", "repeat_interleave",
          "fliplr", "flipud", "roll", "rot90", "tril", "triu", "tril_", "triu_", "atleast_1d", "atleast_2d",
          "atleast_3d", "block_diag")
composite("cartesian_prod", "combinations", "vander")
not_differentiable("triu_indices", "tril_indices", "unravel_index", "isin")
