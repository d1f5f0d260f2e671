"""``backward``, ``autograd.grad`` and tensor hooks; the object installed into
ember_tensor's autograd slot so that ``Tensor.backward()`` and friends work."""
import weakref
from collections import OrderedDict

import ember_tensor
from ember_tensor import Tensor

from . import _grad_mode
from ._engine import run_backward
from ._graph import gradient_edge, meta_of
from .hooks import add_hook

__all__ = ["backward", "grad", "register_hook", "retain_grad", "register_post_accumulate_grad_hook"]


def _as_tuple(x):
    if x is None:
        return None
    if isinstance(x, Tensor):
        return (x,)
    return tuple(x)


def _root_grads(outputs, grad_outputs, create_graph):
    grads = []
    for i, (out, g) in enumerate(zip(outputs, grad_outputs)):
        if g is None:
            if out._requires_grad and out._data.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if not out.is_floating_point():
                raise RuntimeError(
                    f"grad can be implicitly created only for real scalar outputs but got {out.dtype}")
            g = ember_tensor.ones_like(out)
        elif isinstance(g, Tensor):
            if g.shape != out.shape:
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and output[{i}] has a "
                    f"shape of {out.shape}.")
            if g.dtype.is_floating_point != out.dtype.is_floating_point:
                raise TypeError(f"For complex Tensors, both grad_output and output are required to have "
                                f"the same dtype. Mismatch in dtype: grad_output[{i}] has a dtype of "
                                f"{g.dtype} and output[{i}] has a dtype of {out.dtype}.")
        else:
            g = ember_tensor.tensor(g, dtype=out.dtype, device=out.device)
        if not create_graph and (g._grad_fn is not None or g._requires_grad):
            g = g.detach()
        grads.append(g)
    return grads


def _roots(outputs):
    edges = []
    for i, out in enumerate(outputs):
        edge = gradient_edge(out) if out._requires_grad else None
        if edge is None:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        edges.append(edge)
    return edges


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, grad_variables=None,
             inputs=None):
    """Accumulate into ``.grad`` of the leaves the gradients of `tensors` (PyTorch's
    ``torch.autograd.backward``)."""
    if grad_variables is not None:
        grad_tensors = grad_variables
    tensors = _as_tuple(tensors)
    inputs = _as_tuple(inputs)
    if inputs is not None and len(inputs) == 0:
        raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    grad_tensors = _as_tuple(grad_tensors) or (None,) * len(tensors)
    if len(grad_tensors) != len(tensors):
        raise RuntimeError(f"got {len(grad_tensors)} tensors and {len(tensors)} gradients")
    if retain_graph is None:
        retain_graph = create_graph
    roots = _roots(tensors)
    grads = _root_grads(tensors, grad_tensors, create_graph)
    capture = None
    if inputs is not None:
        capture = []
        for t in inputs:
            if not t._requires_grad:
                raise RuntimeError("One of the differentiated Tensors does not require grad")
            capture.append(gradient_edge(t))
    run_backward(roots, grads, retain_graph, create_graph, capture=capture, accumulate=True,
                 capture_tensors=inputs)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """Gradients of `outputs` with respect to `inputs`, returned as a tuple (nothing
    accumulates into ``.grad``).

    >>> import ember_tensor as torch
    >>> x = torch.ones(1, requires_grad=True)
    >>> grad(x ** 2 + x * 5 + 4, x)
    (tensor([7.]),)
    """
    if is_grads_batched:
        raise NotImplementedError("is_grads_batched=True is not supported by ember's autograd yet")
    if allow_unused is None:
        allow_unused = materialize_grads
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, "
                         "but got: allow_unused=False.")
    outputs = _as_tuple(outputs)
    single_input = isinstance(inputs, Tensor)
    inputs = _as_tuple(inputs)
    grad_outputs = _as_tuple(grad_outputs) or (None,) * len(outputs)
    if len(grad_outputs) != len(outputs):
        raise RuntimeError(f"grad requires one grad_output per output: got {len(grad_outputs)} "
                           f"grad_outputs and {len(outputs)} outputs")
    if retain_graph is None:
        retain_graph = create_graph
    for t in inputs:
        if not isinstance(t, Tensor):
            raise TypeError(f"grad(): inputs must be Tensors, not {type(t).__name__}")
        if not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    roots = _roots(outputs)
    grads = _root_grads(outputs, grad_outputs, create_graph)
    capture = [gradient_edge(t) for t in inputs]
    result = run_backward(roots, grads, retain_graph, create_graph, capture=capture, accumulate=False)
    out = []
    for i, (g, t) in enumerate(zip(result, inputs)):
        if g is None:
            if materialize_grads:
                g = ember_tensor.zeros_like(t)
            elif not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {i} appears to not have been used in the graph. "
                    "Set allow_unused=True if this is the desired behavior.")
        out.append(g)
    del single_input
    return tuple(out)


def register_hook(tensor, hook):
    """Call ``hook(grad)`` with the gradient of `tensor`; a non-None return replaces it."""
    if not tensor._requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    fn = tensor._grad_fn
    if fn is None:
        meta = meta_of(tensor)
        if meta.hooks is None:
            meta.hooks = OrderedDict()  # handles refer to hook tables weakly
        return add_hook(meta.hooks, hook)
    if fn._tensor_pre_hooks is None:
        fn._tensor_pre_hooks = {}  # output number -> that output's hook table
    return add_hook(fn._tensor_pre_hooks.setdefault(tensor._output_nr, OrderedDict()), hook)


def retain_grad(tensor):
    """Keep the gradient of a non-leaf tensor in its ``.grad`` after backward."""
    if not tensor._requires_grad:
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    fn = tensor._grad_fn
    if fn is None:
        return  # leaves always keep their gradient
    meta = meta_of(tensor)
    if meta.retains_grad:
        return
    meta.retains_grad = True
    if fn._retains_grad is None:
        fn._retains_grad = {}
    fn._retains_grad[tensor._output_nr] = weakref.ref(tensor)


def register_post_accumulate_grad_hook(tensor, hook):
    """Call ``hook(tensor)`` after a gradient has been accumulated into the leaf's ``.grad``."""
    if not tensor._requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if tensor._grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    meta = meta_of(tensor)
    if meta.post_acc_hooks is None:
        meta.post_acc_hooks = OrderedDict()
    return add_hook(meta.post_acc_hooks, hook)


class AutogradHooks:
    """What ember_tensor's autograd slot calls (``Tensor.backward`` and friends)."""

    installed = True

    def backward(self, tensor, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        backward((tensor,), None if gradient is None else (gradient,), retain_graph, create_graph,
                 inputs=inputs)

    def register_hook(self, tensor, hook):
        return register_hook(tensor, hook)

    def retain_grad(self, tensor):
        return retain_grad(tensor)

    def register_post_accumulate_grad_hook(self, tensor, hook):
        return register_post_accumulate_grad_hook(tensor, hook)

    def register_derivative(self, op_name, inputs, save, backward, node_name=None):
        """A rule declared through ember_tensor's slot (custom kernels); replaces an older one."""
        from ._rules._registry import TABLE, derivative

        TABLE.pop(op_name, None)
        derivative(op_name, inputs=inputs, save=save, name=node_name)(backward)

    def grad_fn(self, tensor):
        meta = tensor._autograd_meta
        if meta is not None and meta.view_base is not None:
            gradient_edge(tensor)  # refreshes a view whose base changed in place
        return tensor._grad_fn


def is_grad_enabled():
    return _grad_mode.state.enabled
