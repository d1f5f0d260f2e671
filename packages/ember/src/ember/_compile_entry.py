"""``ember.compile``: PyTorch's ``torch.compile``, served by ember-compile.

A function rather than a re-export so that ``import ember`` stays light: ember-compile
loads ember-nn, which the first call imports (and checks against ember's pins).
"""

import sys

__all__ = ["compile", "register_module_compile"]


def compile(model=None, **kwargs):  # noqa: A001 - PyTorch's name
    """``torch.compile(model, *, fullgraph, dynamic, backend, mode, options, disable)``:
    see ember_compile.compile (today the result runs eagerly)."""
    import ember
    import ember_compile

    ember._check_pinned(ember_compile)
    return ember_compile.compile(model, **kwargs)


def _is_compiling():
    compile_package = sys.modules.get("ember_compile")
    return compile_package is not None and compile_package.compiler.is_compiling()


def register_module_compile(ember_nn):
    """``nn.Module.compile()`` compiles with `compile` above (ember-nn, below ember-compile,
    takes its compiler from the layer that stands on both): called when ember-nn loads."""
    from ember_nn.modules import module

    module.register_compiler(compile, _is_compiling)
