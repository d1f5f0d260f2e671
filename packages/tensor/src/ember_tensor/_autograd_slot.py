"""The autograd extension point: ember_tensor knows nothing of gradients.

ember-autograd fills `hooks` when it is imported (as torch.autograd implements ATen's
autograd hooks interface). Until then `backward()` and friends raise a clear error.
"""

_MISSING = (
    "{what} needs ember-autograd, which is not installed or not imported. "
    "Install it with `pip install ember-autograd` and `import ember_autograd` "
    "(or simply `import ember`)."
)


class _NoAutograd:
    """Stands in for ember-autograd until it registers itself."""

    installed = False

    def backward(self, tensor, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        raise RuntimeError(_MISSING.format(what="Tensor.backward()"))

    def register_hook(self, tensor, hook):
        raise RuntimeError(_MISSING.format(what="Tensor.register_hook()"))

    def retain_grad(self, tensor):
        raise RuntimeError(_MISSING.format(what="Tensor.retain_grad()"))

    def register_post_accumulate_grad_hook(self, tensor, hook):
        raise RuntimeError(_MISSING.format(what="Tensor.register_post_accumulate_grad_hook()"))


hooks = _NoAutograd()


def install(autograd_hooks):
    """Called by ember-autograd with an object providing backward/register_hook/retain_grad."""
    global hooks
    hooks = autograd_hooks
    register = getattr(hooks, "register_derivative", None)
    if register is not None:
        for op_name, declared in declared_derivatives.items():
            register(op_name, *declared)


# Derivatives of ops defined after import (custom kernels, ``ember.kernel``): kept here so
# that autograd registers them whether it is imported before or after the op is made.
declared_derivatives = {}


def declare_derivative(op_name, inputs, save, backward, node_name=None):
    """Declare the backward formula of op ``op_name`` for autograd (see ember_autograd's rules).

    Args:
        inputs: the op's differentiable parameter names, in the order ``backward`` returns
            their gradients.
        save: ``save(*args, **kwargs) -> tuple`` of what ``backward`` needs.
        backward: ``backward(ctx, grad, *saved) -> tuple of gradients``.
        node_name: the class name of the graph node (``grad_fn``), e.g. ``"SwishBackward0"``.
    """
    declared_derivatives[op_name] = (inputs, save, backward, node_name)
    register = getattr(hooks, "register_derivative", None)
    if register is not None:
        register(op_name, inputs, save, backward, node_name)
