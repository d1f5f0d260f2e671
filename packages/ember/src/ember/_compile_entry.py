"""``ember.compile``: PyTorch's ``torch.compile``, served by ember-compile.

A function rather than a re-export so that ``import ember`` stays light: ember-compile
loads ember-nn, which the first call imports (and checks against ember's pins).
"""

__all__ = ["compile"]


def compile(model=None, **kwargs):  # noqa: A001 - PyTorch's name
    """``torch.compile(model, *, fullgraph, dynamic, backend, mode, options, disable)``:
    see ember_compile.compile (today the result runs eagerly)."""
    import ember
    import ember_compile

    ember._check_pinned(ember_compile)
    return ember_compile.compile(model, **kwargs)
