"""Module's hooks: handles, registration, ``__call__`` running them, full backward hooks.

A full backward hook must see every gradient with respect to a module's inputs and
outputs at once, so (as in PyTorch) the inputs and the outputs of a hooked call each pass
through one identity autograd Function: its backward receives all the gradients together,
calls the hooks and may replace them.
"""
import functools
from collections import OrderedDict

import ember_tensor
from ember_autograd import Function
from ember_autograd.hooks import RemovableHandle
from ember_tensor import Tensor

__all__ = [
    "RemovableHandle", "BackwardHook", "HooksMixin", "register_module_forward_pre_hook",
    "register_module_forward_hook", "register_module_full_backward_pre_hook", "register_module_full_backward_hook",
]


# Hooks run by every module (``register_module_*``), before each module's own. OrderedDicts
# because handles keep weak references to their tables (a plain dict has none).
_global_forward_pre_hooks = OrderedDict()
_global_forward_pre_hooks_with_kwargs = OrderedDict()
_global_forward_hooks = OrderedDict()
_global_forward_hooks_with_kwargs = OrderedDict()
_global_forward_hooks_always_called = OrderedDict()
_global_backward_pre_hooks = OrderedDict()
_global_backward_hooks = OrderedDict()
_GLOBAL_TABLES = (_global_forward_pre_hooks, _global_forward_hooks, _global_backward_pre_hooks,
                  _global_backward_hooks)
_GLOBAL_HOOKS_IN_USE = [False]  # a cell, so that __call__'s fast path checks one flag


class _IdentityForHooks(Function):
    """Identity on several tensors whose backward hands all their gradients to `on_grads`."""

    @staticmethod
    def forward(ctx, on_grads, *tensors):
        ctx.on_grads = on_grads
        ctx.set_materialize_grads(False)  # an unused output's gradient reaches the hooks as None
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
        # PyTorch reports zeros (not None) for tensor inputs that need no gradient.
        self.constant_inputs = {i: a for i, a in enumerate(args)
                                if isinstance(a, Tensor) and not a.requires_grad}
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
        grad_inputs = [None] * self.n_inputs
        for i, tensor in self.constant_inputs.items():
            grad_inputs[i] = ember_tensor.zeros_like(tensor)
        grad_inputs = tuple(_replace_at(grad_inputs, self.input_positions, grads))
        for hook in self.hooks:
            new = _check_hook_result(hook(self.module, grad_inputs, self.grad_outputs),
                                     len(grad_inputs), "hook")
            if new is not None:
                grad_inputs = new
        return [grad_inputs[i] for i in self.input_positions]


class HooksMixin:
    """Hook registration and ``__call__`` of Module (the hook tables are set up by Module)."""

    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """Call ``hook(module, args)`` (or ``hook(module, args, kwargs)`` with `with_kwargs`)
        before ``forward``; a non-None result replaces the arguments."""
        handle = RemovableHandle(self._forward_pre_hooks, extra_dict=self._forward_pre_hooks_with_kwargs)
        self._forward_pre_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        if prepend:
            self._forward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False, always_call=False):
        """Call ``hook(module, args, output)`` after ``forward``; a non-None result replaces
        the output."""
        handle = RemovableHandle(self._forward_hooks, extra_dict=[
            self._forward_hooks_with_kwargs, self._forward_hooks_always_called])
        self._forward_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        if prepend:
            self._forward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """Call ``hook(module, grad_output)`` when the output gradients are known; a
        non-None result replaces them."""
        handle = RemovableHandle(self._backward_pre_hooks)
        self._backward_pre_hooks[handle.id] = hook
        if prepend:
            self._backward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_hook(self, hook, prepend=False):
        """Call ``hook(module, grad_input, grad_output)`` once the gradients with respect
        to the module's inputs are computed; a non-None result replaces grad_input."""
        if self._is_full_backward_hook is False:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks on a "
                               "single Module. Please use only one of them.")
        self._is_full_backward_hook = True
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        if prepend:
            self._backward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_backward_hook(self, hook):
        """Deprecated: ``hook(module, grad_input, grad_output)`` on the node that made the
        output, so grad_input is that node's (not the module's); use
        ``register_full_backward_hook``."""
        if self._is_full_backward_hook is True:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks on a "
                               "single Module. Please use only one of them.")
        self._is_full_backward_hook = False
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        return handle

    def _call_impl(self, *args, **kwargs):
        if not (self._forward_pre_hooks or self._forward_hooks or self._backward_hooks
                or self._backward_pre_hooks or _GLOBAL_HOOKS_IN_USE[0]):
            return self.forward(*args, **kwargs)
        pre_hooks = {**_global_forward_pre_hooks, **self._forward_pre_hooks}
        pre_with_kwargs = {**_global_forward_pre_hooks_with_kwargs, **self._forward_pre_hooks_with_kwargs}
        for hook_id, hook in pre_hooks.items():
            if hook_id in pre_with_kwargs:
                new = hook(self, args, kwargs)
                if new is not None:
                    if not (isinstance(new, tuple) and len(new) == 2):
                        raise RuntimeError("forward pre-hook must return None or a tuple of "
                                           f"(new_args, new_kwargs), but got {new}.")
                    args, kwargs = new
            else:
                new = hook(self, args)
                if new is not None:
                    args = new if isinstance(new, tuple) else (new,)
        full_hooks = list(_global_backward_hooks.values())
        if self._is_full_backward_hook:
            full_hooks += list(self._backward_hooks.values())
        backward_pre_hooks = [*_global_backward_pre_hooks.values(), *self._backward_pre_hooks.values()]
        backward_hook = None
        if full_hooks or backward_pre_hooks:
            backward_hook = BackwardHook(self, full_hooks, backward_pre_hooks)
            args = backward_hook.setup_input_hook(args)
        forward_hooks = {**_global_forward_hooks, **self._forward_hooks}
        with_kwargs = {**_global_forward_hooks_with_kwargs, **self._forward_hooks_with_kwargs}
        always_called = {**_global_forward_hooks_always_called, **self._forward_hooks_always_called}
        called = set()
        result = None
        try:
            result = self.forward(*args, **kwargs)
            for hook_id, hook in forward_hooks.items():
                called.add(hook_id)
                if hook_id in with_kwargs:
                    new = hook(self, args, kwargs, result)
                else:
                    new = hook(self, args, result)
                if new is not None:
                    result = new
        except Exception:
            for hook_id, hook in forward_hooks.items():
                if hook_id in always_called and hook_id not in called:
                    try:
                        hook(self, args, result)
                    except Exception:
                        pass  # the forward's own error is the one to report
            raise
        if backward_hook is not None:
            result = backward_hook.setup_output_hook(result)
        if self._is_full_backward_hook is False and self._backward_hooks:
            self._hook_output_node(result)
        return result

    def _hook_output_node(self, result):
        # The deprecated hooks see the gradients of the node that made the (first) output.
        tensor = result
        while not isinstance(tensor, Tensor):
            tensor = next(v for v in tensor.values() if isinstance(v, Tensor)) if isinstance(tensor, dict) \
                else tensor[0]
        node = tensor.grad_fn
        if node is None:
            return
        for hook in self._backward_hooks.values():
            node.register_hook(functools.partial(_call_module_hook, hook, self))

    __call__ = _call_impl



def _call_module_hook(hook, module, grad_inputs, grad_outputs):
    return hook(module, grad_inputs, grad_outputs)


class _GlobalHandle(RemovableHandle):
    def remove(self):
        super().remove()
        _GLOBAL_HOOKS_IN_USE[0] = any(_GLOBAL_TABLES)


def _register_global(table, hook, extra=()):
    handle = _GlobalHandle(table, extra_dict=list(extra))
    table[handle.id] = hook
    _GLOBAL_HOOKS_IN_USE[0] = True
    return handle


def register_module_forward_pre_hook(hook, *, with_kwargs=False):
    """A forward pre-hook run by every module before its own (debugging, profiling)."""
    handle = _register_global(_global_forward_pre_hooks, hook, [_global_forward_pre_hooks_with_kwargs])
    if with_kwargs:
        _global_forward_pre_hooks_with_kwargs[handle.id] = True
    return handle


def register_module_forward_hook(hook, *, with_kwargs=False, always_call=False):
    """A forward hook run by every module before its own."""
    handle = _register_global(_global_forward_hooks, hook,
                              [_global_forward_hooks_with_kwargs, _global_forward_hooks_always_called])
    if with_kwargs:
        _global_forward_hooks_with_kwargs[handle.id] = True
    if always_call:
        _global_forward_hooks_always_called[handle.id] = True
    return handle


def register_module_full_backward_pre_hook(hook):
    """A full backward pre-hook run by every module."""
    return _register_global(_global_backward_pre_hooks, hook)


def register_module_full_backward_hook(hook):
    """A full backward hook run by every module."""
    return _register_global(_global_backward_hooks, hook)
