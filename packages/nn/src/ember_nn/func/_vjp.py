"""``torch.func.vjp``: a function's output and its vector-Jacobian product as a function."""
import ember_tensor as E
from ember_autograd import enable_grad, grad as autograd_grad, is_grad_enabled
from ember_tensor import Tensor

from ._levels import make_differentiable, private_leaves, tracked_outside, unwrap
from ._pytree import tree_flatten, tree_map, tree_unflatten, treespec_pprint

__all__ = ["vjp"]


def vjp(func, *primals, has_aux=False):
    """``(func(*primals), vjp_fn)``: ``vjp_fn(cotangents)`` returns the tuple of
    ``cotangents @ J`` for each primal, shaped as the primals (pytrees of tensors).

    `cotangents` has the structure of the output. `vjp_fn` can be called many times, and
    its results are differentiable where the cotangents or the primals are tracked by an
    outer autograd or transform. With `has_aux`, `func` returns ``(output, aux)`` and vjp
    returns ``(output, vjp_fn, aux)``.

    >>> import ember_tensor as torch
    >>> out, vjp_fn = vjp(torch.sin, torch.tensor([0., 1.]))
    >>> vjp_fn(torch.ones(2))[0].tolist() == torch.tensor([0., 1.]).cos().tolist()
    True
    """
    grad_was_enabled = is_grad_enabled()
    with enable_grad():
        inputs = tree_map(make_differentiable, primals)
        flat_inputs, _ = tree_flatten(inputs)
        output = func(*inputs)
        aux = None
        if has_aux:
            if not (isinstance(output, tuple) and len(output) == 2):
                raise RuntimeError("vjp(f, *primals): output of function f should be a tuple: (output, aux) "
                                   "if has_aux is True")
            output, aux = output
    flat_outputs, outputs_spec = tree_flatten(output)
    for out in flat_outputs:
        if not isinstance(out, Tensor):
            raise RuntimeError(f"vjp(f, ...): expected f(*primals) to return only tensors, got unsupported type {type(out)}")
        if not (out.is_floating_point() or out.is_complex()):
            raise RuntimeError("vjp(f, ...): All outputs of f must be floating-point or complex Tensors, got Tensor "
                               f"with dtype {out.dtype}")
    private = private_leaves(flat_inputs)
    outputs_tracked = tracked_outside(flat_outputs, private)

    def vjp_fn(cotangents, *, retain_graph=True, create_graph=None):
        """The cotangents (shaped as the output) pulled back to the primals: a tuple."""
        flat_cotangents, cotangents_spec = tree_flatten(cotangents)
        if cotangents_spec != outputs_spec:
            raise RuntimeError("Expected pytree structure of cotangents to be the same as pytree structure of outputs "
                               f"to the function. cotangents: {treespec_pprint(cotangents_spec)}, primal output: "
                               f"{treespec_pprint(outputs_spec)}")
        called_with_grad = is_grad_enabled()
        if create_graph is None:
            create_graph = called_with_grad and (outputs_tracked or any(
                isinstance(c, Tensor) and c.requires_grad for c in flat_cotangents))
        wanted = [(o, c) for o, c in zip(flat_outputs, flat_cotangents) if o.requires_grad]
        grads = [None] * len(flat_inputs)
        if wanted:
            with enable_grad():
                grads = autograd_grad([o for o, _ in wanted], flat_inputs, [c for _, c in wanted],
                                      retain_graph=retain_graph, create_graph=create_graph, allow_unused=True)
        grads = [E.zeros_like(x) if g is None else unwrap(g, private, called_with_grad)
                 for g, x in zip(grads, flat_inputs)]
        return tree_unflatten(grads, tree_flatten(inputs)[1])

    result_output = tree_map(lambda t: unwrap(t, private, grad_was_enabled), output)
    if has_aux:
        return result_output, vjp_fn, tree_map(lambda t: unwrap(t, private, grad_was_enabled), aux)
    return result_output, vjp_fn
