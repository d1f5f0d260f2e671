"""The Optimizer base class: parameter groups, per-parameter state, hooks, state_dict.

Subclasses give their hyper-parameters as ``defaults`` and implement ``step``; the
update arithmetic lives in a functional form (``sgd``, ``adam``, ...) that ``step`` calls,
so that it can be used and tested without the bookkeeping here.
"""
import copy
import functools
import warnings
from collections import OrderedDict, defaultdict
from itertools import chain

import ember_autograd
import ember_tensor
from ember_autograd.hooks import RemovableHandle

__all__ = ["Optimizer", "required", "RemovableHandle", "register_optimizer_step_pre_hook",
           "register_optimizer_step_post_hook"]


class _RequiredParameter:
    """Singleton marking a hyper-parameter without default (``lr`` of SGD in old PyTorch)."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()

_global_step_pre_hooks = OrderedDict()
_global_step_post_hooks = OrderedDict()


def register_optimizer_step_pre_hook(hook):
    """Register ``hook(optimizer, args, kwargs)`` to run before every optimizer's step."""
    handle = RemovableHandle(_global_step_pre_hooks)
    _global_step_pre_hooks[handle.id] = hook
    return handle


def register_optimizer_step_post_hook(hook):
    """Register ``hook(optimizer, args, kwargs)`` to run after every optimizer's step."""
    handle = RemovableHandle(_global_step_post_hooks)
    _global_step_post_hooks[handle.id] = hook
    return handle


def _typename(obj):
    if isinstance(obj, ember_tensor.Tensor):
        return obj.type()
    return type(obj).__qualname__ if type(obj).__module__ == "builtins" else (
        f"{type(obj).__module__}.{type(obj).__qualname__}")


def _use_grad_for_differentiable(step):
    """Run ``step`` without recording a graph: updates are not part of the model's graph."""

    @functools.wraps(step)
    def step_without_grad(self, *args, **kwargs):
        with ember_autograd.no_grad():
            return step(self, *args, **kwargs)

    return step_without_grad


def _with_step_hooks(step):
    """Wrap a subclass's ``step`` with the global and per-instance pre/post hooks."""

    @functools.wraps(step)
    def step_with_hooks(self, *args, **kwargs):
        for hook in chain(_global_step_pre_hooks.values(), self._optimizer_step_pre_hooks.values()):
            result = hook(self, args, kwargs)
            if result is not None:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError(
                        f"{hook} must return None or a tuple of (new_args, new_kwargs), but got {result}.")
                args, kwargs = result
        out = step(self, *args, **kwargs)
        self._opt_called = True
        for hook in chain(self._optimizer_step_post_hooks.values(), _global_step_post_hooks.values()):
            hook(self, args, kwargs)
        return out

    step_with_hooks._wrapped_by_step_hooks = True
    return step_with_hooks


class Optimizer:
    """Base class of all optimizers.

    Args:
        params: an iterable of tensors, or of dicts each holding ``"params"`` and the
            hyper-parameters that differ from ``defaults`` for that group.
        defaults: the default hyper-parameters of every group.
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # Every subclass's own step gets the hooks, as PyTorch's profile_hook_step does.
        if "step" in cls.__dict__ and not getattr(cls.__dict__["step"], "_wrapped_by_step_hooks", False):
            cls.step = _with_step_hooks(cls.__dict__["step"])

    def __init__(self, params, defaults):
        self.defaults = defaults
        self._optimizer_step_pre_hooks = OrderedDict()
        self._optimizer_step_post_hooks = OrderedDict()
        self._opt_called = False
        if isinstance(params, ember_tensor.Tensor):
            raise TypeError("params argument given to the optimizer should be "
                            "an iterable of Tensors or dicts, but got " + _typename(params))
        self.state = defaultdict(dict)
        self.param_groups = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.__dict__.setdefault("_optimizer_step_pre_hooks", OrderedDict())
        self.__dict__.setdefault("_optimizer_step_post_hooks", OrderedDict())
        self.__dict__.setdefault("_opt_called", False)

    def __repr__(self):
        lines = [self.__class__.__name__ + " ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            for key in sorted(group):
                if key != "params":
                    lines.append(f"    {key}: {group[key]}")
        lines.append(")")
        return "\n".join(lines)

    # -- parameter groups ------------------------------------------------------------

    def add_param_group(self, param_group):
        """Add a group of parameters (a dict with ``"params"``) with its own hyper-parameters."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, ember_tensor.Tensor):
            param_group["params"] = [params]
        elif isinstance(params, (set, frozenset)):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but "
                            "the ordering of tensors in sets will change between runs. Please use a list instead.")
        else:
            param_group["params"] = list(params)
        for param in param_group["params"]:
            if not isinstance(param, ember_tensor.Tensor):
                raise TypeError("optimizer can only optimize Tensors, "
                                "but one of the params is " + _typename(param))
            if not param.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(
                    f"parameter group didn't specify a value of required optimization parameter {name}")
            param_group.setdefault(name, default)
        params = param_group["params"]
        if len(params) != len({id(p) for p in params}):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; "
                          "in future, this will cause an error; "
                          "see github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)
        seen = {id(p) for group in self.param_groups for p in group["params"]}
        if not seen.isdisjoint(id(p) for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    # -- gradients and steps -----------------------------------------------------------

    def zero_grad(self, set_to_none=True):
        """Reset the gradients of all optimized tensors (to None by default)."""
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    grad = p.grad
                    if grad.grad_fn is not None:
                        grad.detach_()
                    else:
                        grad.requires_grad_(False)
                    grad.zero_()

    def step(self, closure=None):
        """Perform one optimization step; ``closure`` re-evaluates the model and returns the loss."""
        raise NotImplementedError

    def register_step_pre_hook(self, hook):
        """Register ``hook(optimizer, args, kwargs) -> None | (args, kwargs)`` run before ``step``."""
        handle = RemovableHandle(self._optimizer_step_pre_hooks)
        self._optimizer_step_pre_hooks[handle.id] = hook
        return handle

    def register_step_post_hook(self, hook):
        """Register ``hook(optimizer, args, kwargs)`` run after ``step``."""
        handle = RemovableHandle(self._optimizer_step_post_hooks)
        self._optimizer_step_post_hooks[handle.id] = hook
        return handle

    # -- state_dict ----------------------------------------------------------------------

    def state_dict(self):
        """The optimizer's state as a dict: parameters are referred to by their index.

        Returns ``{"state": {index: {...}}, "param_groups": [{..., "params": [indices]}]}``;
        the tensors in it are the live state (PyTorch does not copy either).
        """
        index_of = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for p in group["params"]:
                index_of.setdefault(id(p), len(index_of))
            packed["params"] = [index_of[id(p)] for p in group["params"]]
            groups.append(packed)
        state = {index_of[id(p)]: self.state[p]
                 for group in self.param_groups for p in group["params"] if p in self.state}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        """Load a ``state_dict()``: state tensors move to their parameter's device and dtype."""
        state_dict = copy.deepcopy(state_dict)
        groups = self.param_groups
        saved_groups = state_dict["param_groups"]
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group "
                             "that doesn't match the size of optimizer's group")
        param_of = {old: p for g, s in zip(groups, saved_groups) for old, p in zip(s["params"], g["params"])}
        state = defaultdict(dict)
        for index, values in state_dict["state"].items():
            if index in param_of:
                param = param_of[index]
                state[param] = {key: _cast_state(param, key, value) for key, value in values.items()}
            else:
                state[index] = values
        new_groups = []
        for group, saved in zip(groups, saved_groups):
            saved = dict(saved)
            saved["params"] = group["params"]
            new_groups.append(saved)
        self.state = state
        self.param_groups = new_groups


def _cast_state(param, key, value):
    """Move a loaded state value to ``param``'s device (and dtype, for float state).

    ``step`` keeps its own dtype: it counts, and PyTorch keeps it float32 on the CPU.
    """
    if not isinstance(value, ember_tensor.Tensor):
        if isinstance(value, dict):
            return {k: _cast_state(param, k, v) for k, v in value.items()}
        return value
    if key == "step":
        return value
    if param.is_floating_point() and value.is_floating_point():
        return value.to(dtype=param.dtype, device=param.device)
    return value.to(device=param.device)
