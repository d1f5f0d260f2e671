"""``torch.func.jvp`` and ``linearize``: Jacobian-vector products, computed in reverse mode.

ember has no forward mode. The vector-Jacobian product ``u -> u @ J`` is linear in ``u``,
so differentiating ``<u @ J, t>`` with respect to ``u`` gives ``J @ t``: two reverse
passes (the double-vjp trick) give the value forward mode would. Every derivative rule of
ember-autograd is written with differentiable ops, which the second pass needs.
"""
import ember_tensor as E
from ember_autograd import enable_grad, grad as autograd_grad, is_grad_enabled
from ember_tensor import Tensor

from ._levels import make_differentiable, private_leaves, tracked_outside, unwrap
from ._pytree import tree_flatten, tree_map, tree_unflatten

__all__ = ["jvp", "linearize"]

_API = "jvp(f, primals, tangents)"


def _check_tuple_of_tensors(elements, name):
    if not isinstance(elements, tuple):
        raise RuntimeError(f"{_API}: Expected {name} to be a tuple. E.g. it should be valid to call f(*{name}).")
    flat, spec = tree_flatten(elements)
    for value in flat:
        if not isinstance(value, Tensor):
            raise RuntimeError(f"{_API}: Expected {name} to only contain Tensors, got {type(value)}")
    return flat, spec


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """``(func(*primals), J @ tangents)``: the output and its directional derivative along
    `tangents` (a tuple shaped as `primals`, pytrees of tensors allowed).

    With `has_aux`, `func` returns ``(output, aux)`` and jvp returns ``(output, jvp_out, aux)``;
    `strict` raises when the output does not depend on the primals.

    >>> import ember_tensor as torch
    >>> out, tangent = jvp(lambda x: x ** 2, (torch.tensor([1., 3.]),), (torch.tensor([1., 1.]),))
    >>> tangent.tolist()
    [2.0, 6.0]
    """
    flat_primals, primals_spec = _check_tuple_of_tensors(primals, "primals")
    if not isinstance(tangents, tuple):
        raise RuntimeError(f"{_API}: Expected tangents to be a tuple. E.g. it should be valid to call f(*tangents).")
    flat_tangents, tangents_spec = tree_flatten(tangents)
    if tangents_spec != primals_spec:
        raise RuntimeError(f"{_API}: Expected primals and tangents to have the same python structure. For example, if "
                           f"primals is a tuple of 3 tensors, tangents also must be. Got primals with structure "
                           f"{primals_spec} and tangents with structure {tangents_spec}")
    for primal, tangent in zip(flat_primals, flat_tangents):
        if not isinstance(tangent, Tensor):
            raise RuntimeError(f"{_API}: Expected tangents to only contain Tensors, got {type(tangent)}")
        if tangent.shape != primal.shape:
            raise RuntimeError("Trying to set a forward gradient that has a different size than that of the original "
                               f"Tensor, this is not supported. Tensor is of size {list(primal.shape)} while the given "
                               f"forward gradient is of size {list(tangent.shape)}.")
    grad_was_enabled = is_grad_enabled()
    with enable_grad():
        inputs = tree_map(make_differentiable, primals)
        flat_inputs, _ = tree_flatten(inputs)
        output = func(*inputs)
        aux = None
        if has_aux:
            if not (isinstance(output, tuple) and len(output) == 2):
                raise RuntimeError(f"{_API}: output of function f should be a tuple: (output, aux) if has_aux is True")
            output, aux = output
        flat_outputs, outputs_spec = tree_flatten(output)
        for out in flat_outputs:
            if not isinstance(out, Tensor):
                raise RuntimeError(f"{_API}: expected f(*args) to return only tensors, got unsupported type {type(out)}")
        private = private_leaves(flat_inputs)
        create_graph = grad_was_enabled and (tracked_outside(flat_outputs, private) or tracked_outside(flat_tangents, ()))
        jvp_outputs = _double_vjp(flat_outputs, flat_inputs, flat_tangents, create_graph)
    if jvp_outputs is None:
        if strict:
            raise RuntimeError("jvp(f, primals, tangents, strict=True): The output of f is independent of the inputs. "
                               "This is not allowed with strict=True.")
        jvp_outputs = [E.zeros_like(o) for o in flat_outputs]
    result = (tree_map(lambda t: unwrap(t, private, grad_was_enabled), output),
              tree_unflatten([unwrap(t, private, grad_was_enabled) for t in jvp_outputs], outputs_spec))
    if has_aux:
        return (*result, tree_map(lambda t: unwrap(t, private, grad_was_enabled), aux))
    return result


def _double_vjp(outputs, inputs, tangents, create_graph):
    """``J @ tangents`` for each output, or None when no output depends on the inputs."""
    differentiable = [o for o in outputs if o.requires_grad]
    if not differentiable:
        return None
    # u stands for the cotangent: the vjp below is linear in it, and its derivative is J @ t.
    dummies = [E.zeros_like(o).requires_grad_(True) for o in differentiable]
    vjps = autograd_grad(differentiable, inputs, dummies, create_graph=True, allow_unused=True)
    pairs = [(g, t) for g, t in zip(vjps, tangents) if g is not None and g.requires_grad]
    if not pairs:
        return None
    found = autograd_grad([g for g, _ in pairs], dummies, [t for _, t in pairs], create_graph=create_graph,
                          allow_unused=True)
    found = iter(found)
    return [_zero_if_none(next(found), o) if o.requires_grad else E.zeros_like(o) for o in outputs]


def _zero_if_none(value, like):
    return E.zeros_like(like) if value is None else value


def linearize(func, *primals):
    """``(func(*primals), jvp_fn)``: ``jvp_fn(*tangents)`` is the Jacobian-vector product at
    `primals` (recomputed per call: ember has no graph capture to replay).

    >>> import ember_tensor as torch
    >>> out, jvp_fn = linearize(torch.sin, torch.tensor(0.))
    >>> jvp_fn(torch.tensor(2.)).item()
    2.0
    """
    output = jvp(func, primals, tuple(tree_map(E.zeros_like, primals)))[0]

    def jvp_fn(*tangents):
        return jvp(func, primals, tangents)[1]

    return output, jvp_fn
