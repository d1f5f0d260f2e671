"""Hook handles and the full backward hooks of Module.

A full backward hook must see every gradient with respect to a module's inputs and
outputs at once, so (as in PyTorch) the inputs and the outputs of a hooked call each pass
through one identity autograd Function: its backward receives all the gradients together,
calls the hooks and may replace them.
"""
import itertools
import weakref

from ember_autograd import Function
from ember_tensor import Tensor

__all__ = ["RemovableHandle", "BackwardHook"]

_handle_ids = itertools.count()


class RemovableHandle:
    """Returned by every ``register_*_hook``: ``handle.remove()`` unregisters the hook
    (also from `extra_dict`, the side tables some hooks have, such as with_kwargs).

    Usable as a context manager that removes the hook on exit.
    """

    def __init__(self, hooks_dict, *, extra_dict=None):
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = next(_handle_ids)
        if extra_dict is None:
            extra_dict = ()
        elif isinstance(extra_dict, dict):
            extra_dict = (extra_dict,)
        self.extra_dict_ref = tuple(weakref.ref(d) for d in extra_dict)

    def remove(self):
        """Unregister the hook (a no-op if it is gone already)."""
        for ref in (self.hooks_dict_ref, *self.extra_dict_ref):
            table = ref()
            if table is not None:
                table.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.remove()


class _IdentityForHooks(Function):
    """Identity on several tensors whose backward hands all their gradients to `on_grads`."""

    @staticmethod
    def forward(ctx, on_grads, *tensors):
        ctx.on_grads = on_grads
        # Fresh aliases, so that the outputs are new graph nodes, not the inputs themselves.
        return tuple(t.view_as(t) for t in tensors)

    @staticmethod
    def backward(ctx, *grads):
        return (None,) + tuple(ctx.on_grads(grads))


def _tensors_to_hook(values):
    return [i for i, v in enumerate(values) if isinstance(v, Tensor) and v.requires_grad]


def _replace_at(values, positions, new_tensors):
    values = list(values)
    for i, t in zip(positions, new_tensors):
        values[i] = t
    return values


def _check_hook_result(result, expected, hook_name):
    if result is None:
        return None
    if not isinstance(result, (tuple, list)):
        result = (result,)
    if len(result) != expected:
        raise RuntimeError(
            f"Backward hook returned an invalid number of grad_input, got {len(result)}, but "
            f"expected {expected}" if hook_name == "hook" else
            f"Backward pre hook returned an invalid number of grad_output, got {len(result)}, "
            f"but expected {expected}")
    return tuple(result)


class BackwardHook:
    """The full backward hooks and backward pre-hooks of one module call."""

    def __init__(self, module, hooks, pre_hooks):
        self.module = module
        self.hooks = hooks
        self.pre_hooks = pre_hooks
        self.n_inputs = 0
        self.input_positions = []
        self.grad_outputs = None

    def setup_input_hook(self, args):
        """Route the tensor arguments that require grad through the input identity."""
        self.n_inputs = len(args)
        positions = _tensors_to_hook(args)
        self.input_positions = positions
        if not positions:
            return args
        hooked = _IdentityForHooks.apply(self._on_grad_inputs, *(args[i] for i in positions))
        return tuple(_replace_at(args, positions, hooked))

    def setup_output_hook(self, result):
        """Route the output tensors through the output identity."""
        single = isinstance(result, Tensor)
        outputs = (result,) if single else result
        if not isinstance(outputs, tuple):
            return result
        positions = _tensors_to_hook(outputs)
        self.n_outputs = len(outputs)
        self.output_positions = positions
        if not positions:
            return result
        hooked = _IdentityForHooks.apply(self._on_grad_outputs, *(outputs[i] for i in positions))
        outputs = tuple(_replace_at(outputs, positions, hooked))
        return outputs[0] if single else outputs

    def _on_grad_outputs(self, grads):
        grad_outputs = tuple(_replace_at([None] * self.n_outputs, self.output_positions, grads))
        for hook in self.pre_hooks:
            new = _check_hook_result(hook(self.module, grad_outputs), len(grad_outputs), "pre_hook")
            if new is not None:
                grad_outputs = new
        self.grad_outputs = grad_outputs
        if not self.input_positions:
            # Nothing below the module wants a gradient: the hooks still run, with None inputs.
            for hook in self.hooks:
                hook(self.module, (None,) * self.n_inputs, grad_outputs)
        return [grad_outputs[i] for i in self.output_positions]

    def _on_grad_inputs(self, grads):
        grad_inputs = tuple(_replace_at([None] * self.n_inputs, self.input_positions, grads))
        for hook in self.hooks:
            new = _check_hook_result(hook(self.module, grad_inputs, self.grad_outputs),
                                     len(grad_inputs), "hook")
            if new is not None:
                grad_inputs = new
        return [grad_inputs[i] for i in self.input_positions]
