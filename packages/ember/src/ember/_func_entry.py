"""``ember.vmap``: PyTorch's ``torch.vmap``, the same function as ``torch.func.vmap``.

A function rather than a re-export so that ``import ember`` stays light: torch.func is
served by ember-nn, which the first call imports (and checks against ember's pins).
"""

__all__ = ["vmap"]


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """``torch.vmap``: see ember.func.vmap (``func`` run per sample, outputs stacked)."""
    import ember.func

    return ember.func.vmap(func, in_dims, out_dims, randomness, chunk_size=chunk_size)
