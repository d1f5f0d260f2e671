"""``torch.func.jacrev``, ``jacfwd`` and ``hessian``: Jacobians as functions.

Both Jacobians are built in reverse mode, one backward pass per output element (ember has
no forward mode): ``jacfwd`` gives the values forward mode would, at reverse mode's cost.
"""
import functools

import ember_tensor as E
from ember_autograd import enable_grad, grad as autograd_grad, is_grad_enabled
from ember_tensor import Tensor

from ._levels import (make_differentiable, private_leaves, replace_argnums, slice_argnums, tracked_outside,
                      unwrap, wrap_argnums)
from ._pytree import tree_flatten, tree_map, tree_unflatten
from ._randomness import check_randomness, randomness_guard

__all__ = ["jacrev", "jacfwd", "hessian"]


def _error_if_complex(api, tree, is_input):
    for index, value in enumerate(tree_flatten(tree)[0]):
        if isinstance(value, Tensor) and value.is_complex():
            raise RuntimeError(f"{api}: Expected all {'inputs' if is_input else 'outputs'} to be real but received "
                               f"complex tensor at flattened input idx: {index}")


def _jacobian_of(output, inputs, create_graph):
    """d output / d input for each input: shape ``output.shape + input.shape``, one backward
    pass per output element (a one-hot cotangent each)."""
    if not output.requires_grad or output.numel() == 0:
        return [output.new_zeros(tuple(output.shape) + tuple(x.shape)) for x in inputs]
    rows = [[] for _ in inputs]
    basis = E.eye(output.numel(), dtype=output.dtype, device=output.device)
    for k in range(output.numel()):
        grads = autograd_grad(output, inputs, basis[k].reshape(output.shape), retain_graph=True,
                              create_graph=create_graph, allow_unused=True)
        for row, g, x in zip(rows, grads, inputs):
            row.append(E.zeros_like(x) if g is None else g)
    return [E.stack(row).reshape(tuple(output.shape) + tuple(x.shape)) for row, x in zip(rows, inputs)]


def _jacobian(func, argnums, has_aux, api, args, kwargs):
    grad_was_enabled = is_grad_enabled()
    wrapped = wrap_argnums(argnums, len(args))
    _error_if_complex(api, args, is_input=True)
    with enable_grad():
        inputs = tree_map(make_differentiable, slice_argnums(args, wrapped))
        flat_inputs, inputs_spec = tree_flatten(inputs)
        output = func(*replace_argnums(args, wrapped, inputs), **kwargs)
        aux = None
        if has_aux:
            if not (isinstance(output, tuple) and len(output) == 2):
                raise RuntimeError(f"{api}(f, ...)(*args): output of function f should be a tuple: (output, aux) "
                                   "if has_aux is True")
            output, aux = output
        flat_outputs, outputs_spec = tree_flatten(output)
        for out in flat_outputs:
            if not isinstance(out, Tensor):
                raise RuntimeError(f"{api}(f, ...)(*args): Expected output of f to be a Tensor or Tensors, got "
                                   f"{type(out)} as an output")
        _error_if_complex(api, output, is_input=False)
        private = private_leaves(flat_inputs)
        create_graph = grad_was_enabled and tracked_outside(flat_outputs, private)
        per_output = []
        for out in flat_outputs:
            jacobians = [unwrap(j, private, grad_was_enabled) for j in _jacobian_of(out, flat_inputs, create_graph)]
            per_output.append(tree_unflatten(jacobians, inputs_spec))
    result = tree_unflatten(per_output, outputs_spec)
    if has_aux:
        return result, tree_map(lambda t: unwrap(t, private, grad_was_enabled), aux)
    return result


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """The Jacobian of `func` with respect to the positional arguments `argnums`, as a function.

    For an output of shape ``O`` and an input of shape ``I`` the Jacobian has shape ``O + I``;
    pytrees of outputs and inputs give nested pytrees (outputs outside, inputs inside), a
    tuple `argnums` a tuple per output. `chunk_size` is accepted (backward passes already run
    one output element at a time). Composes: ``jacrev(jacrev(f))``, ``vmap(jacrev(f))``.

    >>> import ember_tensor as torch
    >>> jacrev(lambda x: x ** 2)(torch.tensor([1., 2.])).tolist()
    [[2.0, 0.0], [0.0, 4.0]]
    """
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return _jacobian(func, argnums, has_aux, "jacrev", args, kwargs)

    return wrapper


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """The Jacobian of `func`, as jacrev computes it (ember has no forward mode: the values
    are forward mode's, the cost reverse mode's). `randomness` is vmap's: with ``'error'``
    a random op inside `func` raises, as PyTorch's batched forward passes do.

    >>> import ember_tensor as torch
    >>> jacfwd(torch.sin)(torch.tensor([0.])).tolist()
    [[1.0]]
    """
    check_randomness(randomness)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with randomness_guard(randomness):
            return _jacobian(func, argnums, has_aux, "jacfwd", args, kwargs)

    return wrapper


def hessian(func, argnums=0):
    """The Hessian of a scalar `func` (``jacfwd(jacrev(func, argnums), argnums)``), as a function.

    >>> import ember_tensor as torch
    >>> hessian(lambda x: (x ** 3).sum())(torch.tensor([1., 2.])).tolist()
    [[6.0, 0.0], [0.0, 12.0]]
    """
    return jacfwd(jacrev(func, argnums), argnums)
