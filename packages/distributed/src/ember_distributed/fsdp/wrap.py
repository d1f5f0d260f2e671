"""Auto-wrap policies (``torch.distributed.fsdp.wrap``): which submodules become FSDP units.

A policy is called as ``policy(module=, recurse=, nonwrapped_numel=)``: with
``recurse=True`` it says whether to look inside ``module``; with ``recurse=False`` whether
to make ``module`` a unit, given the number of its parameters not already in an inner unit.
ember-distributed does not import ember-nn, so the module classes PyTorch names by type
(``ModuleList``, ``ModuleDict``, ``MultiheadAttention``) are recognised by class name.
"""

__all__ = ["always_wrap_policy", "lambda_auto_wrap_policy", "transformer_auto_wrap_policy",
           "size_based_auto_wrap_policy", "ModuleWrapPolicy", "CustomPolicy"]

# PyTorch's defaults for size_based_auto_wrap_policy, by class name.
_EXCLUDE_WRAP_MODULES = ("ModuleList", "ModuleDict")
_FORCE_LEAF_MODULES = ("MultiheadAttention",)


def _is_instance(module, classes, default_names):
    if classes is None:
        return type(module).__name__ in default_names
    return isinstance(module, tuple(classes))


def always_wrap_policy(module, recurse, nonwrapped_numel=0, **kwargs):
    """Every module becomes a unit."""
    return True


def lambda_auto_wrap_policy(module, recurse, nonwrapped_numel, lambda_fn):
    """Wrap a module when ``lambda_fn(module)`` is true."""
    return True if recurse else bool(lambda_fn(module))


def transformer_auto_wrap_policy(module, recurse, nonwrapped_numel, transformer_layer_cls):
    """Wrap every instance of the given layer classes."""
    return True if recurse else isinstance(module, tuple(transformer_layer_cls))


def size_based_auto_wrap_policy(module, recurse, nonwrapped_numel, min_num_params=int(1e8),
                                force_leaf_modules=None, exclude_wrap_modules=None):
    """Wrap a module once it holds at least ``min_num_params`` parameters not yet wrapped.

    >>> size_based_auto_wrap_policy(module=object(), recurse=False, nonwrapped_numel=150, min_num_params=100)
    True
    """
    if recurse:
        return not _is_instance(module, force_leaf_modules, _FORCE_LEAF_MODULES)
    return nonwrapped_numel >= min_num_params and not _is_instance(module, exclude_wrap_modules,
                                                                   _EXCLUDE_WRAP_MODULES)


class ModuleWrapPolicy:
    """Wrap every instance of ``module_classes``."""

    def __init__(self, module_classes):
        self._module_classes = tuple(module_classes)

    def __call__(self, module, recurse, nonwrapped_numel=0, **kwargs):
        return True if recurse else isinstance(module, self._module_classes)

    def __repr__(self):
        return f"ModuleWrapPolicy({', '.join(c.__name__ for c in self._module_classes)})"


class CustomPolicy:
    """Wrap where ``lambda_fn(module)`` is true (a dict of per-unit kwargs is taken as true)."""

    def __init__(self, lambda_fn):
        self._lambda_fn = lambda_fn

    def __call__(self, module, recurse, nonwrapped_numel=0, **kwargs):
        return True if recurse else bool(self._lambda_fn(module))


def unit_modules(root, policy):
    """The modules that become units, inner ones first, the root last.

    Walks the tree as PyTorch's ``_recursive_wrap``: children first, then the module itself
    if the policy accepts its parameters that no inner unit took.
    """
    chosen = []

    def visit(module, is_root):
        wrapped = 0
        if policy is None or policy(module=module, recurse=True, nonwrapped_numel=0):
            for child in module.children():
                wrapped += visit(child, False)
        total = sum(p.numel() for p in module.parameters())
        remaining = total - wrapped
        if is_root or (policy is not None and policy(module=module, recurse=False, nonwrapped_numel=remaining)):
            chosen.append(module)
            return total
        return wrapped

    visit(root, True)
    return chosen
