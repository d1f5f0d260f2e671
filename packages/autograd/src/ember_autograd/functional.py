"""Higher-level differentiation of functions (PyTorch's ``torch.autograd.functional``):
``vjp``, ``jvp``, ``jacobian``, ``hessian``, ``hvp``, ``vhp``.

Everything is built on reverse mode (`autograd.grad`): a Jacobian is one vector-Jacobian
product per output element, and ``jvp`` uses the double-vjp trick (the vjp is linear in
its vector ``u``, so differentiating ``u -> vjp(u) . v`` with respect to ``u`` gives
``J v``).

>>> import ember_tensor as torch
>>> jacobian(lambda x: x ** 2, torch.tensor([1., 2.]))
tensor([[2., 0.],
        [0., 4.]])
"""
import ember_tensor as E
from ember_tensor import Tensor

from . import _grad_mode
from ._tensor_api import grad as _grad

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


def _as_tuple(x, arg_name, fn_name):
    is_tuple = isinstance(x, tuple)
    items = x if is_tuple else (x,)
    for i, t in enumerate(items):
        if not isinstance(t, Tensor):
            if is_tuple:
                raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple "
                                f"of Tensors but the value at index {i} has type {type(t)}.")
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of "
                            f"Tensors but the given {arg_name} has type {type(t)}.")
    return is_tuple, items


def _from_tuple(is_tuple, items):
    return items if is_tuple else items[0]


def _prepare_inputs(inputs, create_graph):
    """Fresh leaves (or differentiable aliases under create_graph) the function is run on."""
    prepared = []
    for t in inputs:
        if create_graph and t.requires_grad:
            prepared.append(t.view_as(t))
        else:
            prepared.append(t.detach().requires_grad_(True))
    return tuple(prepared)


def _check_v(v, reference, fn_name, what):
    if v is None:
        if len(reference) == 1 and reference[0].numel() == 1:
            return (E.ones_like(reference[0]),)
        raise RuntimeError(f"The vector v can only be None if the {what} to the user-provided "
                           "function is a single Tensor with a single element.")
    _, v = _as_tuple(v, "v", fn_name)
    if len(v) != len(reference):
        raise RuntimeError(f"v is a tuple of invalid length: should be {len(reference)} but got {len(v)}.")
    for i, (a, b) in enumerate(zip(v, reference)):
        if a.shape != b.shape:
            raise RuntimeError(f"Entry {i} in v has invalid size: should be {b.shape} but got {a.shape}.")
    return v


def _grads(outputs, inputs, grad_outputs, create_graph, strict, fn_name, retain_graph=None):
    wanted = [(i, o) for i, o in enumerate(outputs) if o.requires_grad]
    result = [None] * len(inputs)
    if wanted:
        result = list(_grad([o for _, o in wanted], inputs,
                            [grad_outputs[i] for i, _ in wanted] if grad_outputs is not None else None,
                            retain_graph=True if retain_graph is None else retain_graph,
                            create_graph=create_graph, allow_unused=True))
    for i, g in enumerate(result):
        if g is None:
            if strict:
                raise RuntimeError(f"The output of the user-provided function is independent of input {i}. "
                                   "This is not allowed in strict mode.")
            result[i] = E.zeros_like(inputs[i])
    return tuple(result)


def _finish(items, create_graph):
    return tuple(t if create_graph else t.detach() for t in items)


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """``v^T J`` of `func` at `inputs`: returns ``(func_output, vjp)``.

    >>> import ember_tensor as torch
    >>> vjp(lambda x: x * 3, torch.ones(2), torch.tensor([1., 2.]))[1]
    tensor([3., 6.])
    """
    with _grad_mode.enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _prepare_inputs(inputs, create_graph)
        is_outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "vjp")
        v = _check_v(v, outputs, "vjp", "outputs")
        grads = _grads(outputs, inputs, v, create_graph, strict, "vjp")
    return (_from_tuple(is_outputs_tuple, _finish(outputs, create_graph)),
            _from_tuple(is_inputs_tuple, _finish(grads, create_graph)))


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """``J v`` of `func` at `inputs`: returns ``(func_output, jvp)``.

    >>> import ember_tensor as torch
    >>> jvp(lambda x: x ** 2, torch.tensor([1., 2.]), torch.ones(2))[1]
    tensor([2., 4.])
    """
    with _grad_mode.enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _prepare_inputs(inputs, create_graph)
        v = _check_v(v, inputs, "jvp", "input")
        is_outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "jvp")
        dummies = tuple(E.zeros_like(o).requires_grad_(True) for o in outputs)
        vjps = _grads(outputs, inputs, dummies, True, strict, "jvp")
        # vjp(u) is linear in u: its gradient with respect to u along v is J v.
        used = [(g, t) for g, t in zip(vjps, v) if g.requires_grad]
        if used:
            result = _grad([g for g, _ in used], dummies, [t for _, t in used], create_graph=create_graph,
                           retain_graph=True, allow_unused=True)
        else:
            result = (None,) * len(outputs)
        jvps = []
        for i, (g, o) in enumerate(zip(result, outputs)):
            if g is None:
                if strict:
                    raise RuntimeError(f"The output of the user-provided function with index {i} is "
                                       "independent of the inputs. This is not allowed in strict mode.")
                g = E.zeros_like(o)
            jvps.append(g)
    return (_from_tuple(is_outputs_tuple, _finish(outputs, create_graph)),
            _from_tuple(is_outputs_tuple, _finish(jvps, create_graph)))


def _jacobian_rows(outputs, inputs, create_graph, strict):
    """[output][input] -> Tensor of shape output.shape + input.shape."""
    rows = []
    for i, out in enumerate(outputs):
        per_input = [[] for _ in inputs]
        flat = out.reshape(-1)
        for k in range(flat.numel()):
            if out.requires_grad:
                grads = _grad(flat[k], inputs, retain_graph=True, create_graph=create_graph, allow_unused=True)
            else:
                grads = (None,) * len(inputs)
            for j, (g, t) in enumerate(zip(grads, inputs)):
                if g is None:
                    if strict:
                        raise RuntimeError(f"Output {i} of the user-provided function is independent of "
                                           f"input {j}. This is not allowed in strict mode.")
                    g = E.zeros_like(t)
                per_input[j].append(g)
        row = []
        for j, t in enumerate(inputs):
            pieces = per_input[j]
            if pieces:
                stacked = E.stack(pieces)
            else:
                stacked = E.zeros((0,) + tuple(t.shape), dtype=t.dtype, device=t.device)
            row.append(stacked.reshape(tuple(out.shape) + tuple(t.shape)))
        rows.append(tuple(row))
    return rows


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """The Jacobian of `func` at `inputs`: ``J[i][j]`` has shape ``output_i.shape + input_j.shape``.

    A single Tensor input and output give a Tensor; tuples give (nested) tuples.
    """
    if strategy not in ("reverse-mode", "forward-mode"):
        raise ValueError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
                         'function has more outputs than inputs, "forward-mode" tends to be more performant. '
                         'Otherwise, prefer to use "reverse-mode".')
    with _grad_mode.enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _prepare_inputs(inputs, create_graph)
        is_outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function",
                                              "jacobian")
        rows = _jacobian_rows(outputs, inputs, create_graph, strict)
    rows = [_finish(row, create_graph) for row in rows]
    if not is_outputs_tuple:
        return _from_tuple(is_inputs_tuple, rows[0])
    return tuple(_from_tuple(is_inputs_tuple, row) for row in rows)


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    """The Hessian of scalar `func` at `inputs` (``H[i][j]``: shape ``input_i.shape + input_j.shape``).

    >>> import ember_tensor as torch
    >>> hessian(lambda x: (x ** 3).sum(), torch.tensor([1., 2.]))
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")

    def gradient(*xs):
        out = func(*xs)
        is_tuple, outs = _as_tuple(out, "outputs of the user-provided function", "hessian")
        if is_tuple or outs[0].numel() != 1:
            raise RuntimeError("The function given to hessian should return a single Tensor containing "
                               "a single element")
        return _grads((outs[0].reshape(()),), xs, None, True, strict, "hessian")

    result = jacobian(gradient, inputs, create_graph=create_graph, strict=strict)
    if not is_inputs_tuple:
        return result[0][0]
    return result


def _hvp_vhp(func, inputs, v, create_graph, strict, fn_name):
    with _grad_mode.enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", fn_name)
        inputs = _prepare_inputs(inputs, create_graph)
        v = _check_v(v, inputs, fn_name, "input")
        is_outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", fn_name)
        if is_outputs_tuple or outputs[0].numel() != 1:
            raise RuntimeError(f"The function given to {fn_name} should return a single Tensor containing "
                               "a single element")
        grads = _grads(outputs, inputs, None, True, strict, fn_name)
        used = [(g, t) for g, t in zip(grads, v) if g.requires_grad]
        result = [None] * len(inputs)
        if used:
            result = list(_grad([g for g, _ in used], inputs, [t for _, t in used], create_graph=create_graph,
                                retain_graph=True, allow_unused=True))
        for i, r in enumerate(result):
            if r is None:
                if strict:
                    raise RuntimeError(f"The second order derivative of the user-provided function with "
                                       f"respect to input {i} is zero. This is not allowed in strict mode.")
                result[i] = E.zeros_like(inputs[i])
    return (_finish(outputs, create_graph)[0], _from_tuple(is_inputs_tuple, _finish(result, create_graph)))


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """``v^T H`` of scalar `func` at `inputs`: returns ``(func_output, vhp)``."""
    return _hvp_vhp(func, inputs, v, create_graph, strict, "vhp")


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """``H v`` of scalar `func` at `inputs`: returns ``(func_output, hvp)``. For the twice
    differentiable functions autograd handles, H is symmetric, so this equals `vhp`."""
    return _hvp_vhp(func, inputs, v, create_graph, strict, "hvp")
