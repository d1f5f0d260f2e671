"""``torch.func.grad`` and ``grad_and_value``: the gradient of a scalar function, as a function."""
import functools

import ember_tensor as E
from ember_autograd import enable_grad, grad as autograd_grad, is_grad_enabled
from ember_tensor import Tensor

from ._levels import (make_differentiable, private_leaves, replace_argnums, slice_argnums, tracked_outside,
                      unwrap, wrap_argnums)
from ._pytree import tree_flatten, tree_map, tree_unflatten

__all__ = ["grad", "grad_and_value"]


def _split_aux(output, has_aux, api):
    if not has_aux:
        return output, None
    if not (isinstance(output, tuple) and len(output) == 2):
        raise RuntimeError(f"{api}: output of function f should be a tuple: (output, aux) if has_aux is True")
    return output


def grad_and_value(func, argnums=0, has_aux=False):
    """A function returning ``(gradient, value)`` of `func` (which returns a scalar tensor)
    with respect to the positional arguments `argnums` (each a pytree of tensors).

    With `has_aux`, `func` returns ``(value, aux)`` and the function returns
    ``(gradient, (value, aux))``. Outer ``torch.no_grad`` does not stop it (it is a
    transform, as in PyTorch); results stay differentiable by an outer autograd or transform
    where they depend on what it tracks.

    >>> import ember_tensor as torch
    >>> g, v = grad_and_value(lambda x: (x ** 2).sum())(torch.tensor([1., 2.]))
    >>> g.tolist(), v.item()
    ([2.0, 4.0], 5.0)
    """
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        grad_was_enabled = is_grad_enabled()
        wrapped = wrap_argnums(argnums, len(args))
        with enable_grad():
            inputs = tree_map(make_differentiable, slice_argnums(args, wrapped))
            flat_inputs, inputs_spec = tree_flatten(inputs)
            output, aux = _split_aux(func(*replace_argnums(args, wrapped, inputs), **kwargs), has_aux,
                                     "grad_and_value(f)(*args)")
            if not isinstance(output, Tensor):
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got {type(output)}")
            if output.dim() != 0:
                raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor "
                                   f"with {output.dim()} dims. Maybe you wanted to use the vjp or jacrev APIs instead?")
            private = private_leaves(flat_inputs)
            # A graph of the gradient is needed only where an outer level differentiates it.
            create_graph = grad_was_enabled and tracked_outside([output], private)
            grads = [None] * len(flat_inputs)
            if output.requires_grad:
                grads = autograd_grad(output, flat_inputs, create_graph=create_graph, allow_unused=True)
            grads = [E.zeros_like(x) if g is None else g for g, x in zip(grads, flat_inputs)]
        grads = [unwrap(g, private, grad_was_enabled) for g in grads]
        gradient = tree_unflatten(grads, inputs_spec)
        value = unwrap(output, private, grad_was_enabled)
        if has_aux:
            return gradient, (value, tree_map(lambda t: unwrap(t, private, grad_was_enabled), aux))
        return gradient, value

    return wrapper


def grad(func, argnums=0, has_aux=False):
    """The gradient of `func` (which returns a scalar tensor) as a function: ``grad(f)(x)``
    is df/dx, shaped as `x` (a pytree of tensors gives the same pytree of gradients).

    `argnums` picks the positional arguments (an int, or a tuple of ints giving a tuple of
    gradients); with `has_aux`, `func` returns ``(value, aux)`` and the function returns
    ``(gradient, aux)``. Composes: ``grad(grad(f))``, ``vmap(grad(f))``.

    >>> import ember_tensor as torch
    >>> grad(grad(lambda x: x.sin()))(torch.tensor(0.5)).item() == -torch.tensor(0.5).sin().item()
    True
    """
    inner = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        gradient, value = inner(*args, **kwargs)
        if has_aux:
            return gradient, value[1]
        return gradient

    return wrapper
