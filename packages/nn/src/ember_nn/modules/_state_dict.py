"""``state_dict`` and ``load_state_dict`` of Module, with PyTorch's key rules and errors.

Kept apart from module.py so that each file reads as one thing; Module inherits it.
Keys are dotted paths ("layer1.0.weight"); loading copies values in place under no_grad
so that optimizers that hold the parameters keep working.
"""
from collections import OrderedDict, namedtuple
from collections.abc import Mapping

import ember_autograd
from ember_tensor import Tensor

from ..parameter import Parameter, is_lazy
from ._hooks import RemovableHandle

__all__ = ["StateDictMixin", "IncompatibleKeys"]

_EXTRA_STATE_KEY_SUFFIX = "_extra_state"


class IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What ``load_state_dict`` returns: the keys it missed and the ones it did not use."""

    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


class StateDictMixin:
    """The state-dict half of Module (the attributes it uses are set up by Module)."""

    def get_extra_state(self):
        """Extra picklable state saved under ``<prefix>_extra_state``; override with
        ``set_extra_state``."""
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never be called.")

    def set_extra_state(self, state):
        """Restore what ``get_extra_state`` returned."""
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never be called.")

    def _has_extra_state(self, method):
        return getattr(type(self), method) is not getattr(StateDictMixin, method)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()
        if self._has_extra_state("get_extra_state"):
            destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        """An ordered dict of every parameter and persistent buffer by dotted name.

        Values are detached (sharing storage) unless `keep_vars`.
        """
        if args:  # PyTorch's deprecated positional form: (destination, prefix, keep_vars)
            destination = args[0] if destination is None else destination
            prefix = args[1] if len(args) > 1 and prefix == "" else prefix
            keep_vars = args[2] if len(args) > 2 else keep_vars
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        local_metadata = {"version": self._version}
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            result = hook(self, destination, prefix, local_metadata)
            if result is not None:
                destination = result
        return destination

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        for hook in self._load_state_dict_pre_hooks.values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)
        local_state = {name: value for name, value in self._parameters.items() if value is not None}
        local_state.update((name, value) for name, value in self._buffers.items()
                           if value is not None and name not in self._non_persistent_buffers_set)
        assign = local_metadata.get("assign_to_params_buffers", False)
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                error_msgs.append(f'While copying the parameter named "{key}", expected torch.Tensor or '
                                  f"Tensor-like object from checkpoint but received {type(value)}")
                continue
            lazy = is_lazy(param)
            # A 0.3-era checkpoint stores scalars as shape (1,).
            if not lazy and param.dim() == 0 and value.shape == (1,):
                value = value[0]
            if not lazy and value.shape != param.shape:
                error_msgs.append(f"size mismatch for {key}: copying a param with shape {value.shape} from "
                                  f"checkpoint, the shape in current model is {param.shape}.")
                continue
            try:
                with ember_autograd.no_grad():
                    if assign:
                        if isinstance(param, Parameter) and not isinstance(value, Parameter):
                            value = Parameter(value, requires_grad=param.requires_grad)
                        setattr(self, name, value)
                    elif lazy:
                        param.materialize(value.shape)
                        param.copy_(value)
                    else:
                        param.copy_(value)
            except Exception as ex:
                error_msgs.append(f'While copying the parameter named "{key}", whose dimensions in the model '
                                  f"are {param.size()} and whose dimensions in the checkpoint are "
                                  f"{value.size()}, an exception occurred : {ex.args}.")
        extra_key = prefix + _EXTRA_STATE_KEY_SUFFIX
        if self._has_extra_state("set_extra_state"):
            if extra_key in state_dict:
                self.set_extra_state(state_dict[extra_key])
            elif strict:
                missing_keys.append(extra_key)
        elif strict and extra_key in state_dict:
            unexpected_keys.append(extra_key)
        if strict:
            for key in state_dict:
                if key.startswith(prefix) and key != extra_key:
                    first, dot, _ = key[len(prefix):].partition(".")
                    if (dot and first not in self._modules) or (not dot and first not in local_state):
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copy parameters and buffers from `state_dict` into this module and its
        descendants.

        Returns ``(missing_keys, unexpected_keys)``; with `strict` (the default) any such
        key, like any shape mismatch, raises RuntimeError listing them all.
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing_keys, unexpected_keys, error_msgs = [], [], []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)

        def load(module, local_state_dict, prefix=""):
            local_metadata = {} if metadata is None else dict(metadata.get(prefix[:-1], {}))
            if assign:
                local_metadata["assign_to_params_buffers"] = True
            module._load_from_state_dict(local_state_dict, prefix, local_metadata, True, missing_keys,
                                         unexpected_keys, error_msgs)
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    load(child, {k: v for k, v in local_state_dict.items() if k.startswith(child_prefix)},
                         child_prefix)
            keys = IncompatibleKeys(missing_keys, unexpected_keys)
            for hook in module._load_state_dict_post_hooks.values():
                if hook(module, keys) is not None:
                    raise AssertionError(
                        "Hooks registered with ``register_load_state_dict_post_hook`` are not expected to "
                        "return new values, if incompatible_keys need to be modified, it should be done "
                        "inplace.")

        load(self, state_dict)
        if strict:
            if unexpected_keys:
                error_msgs.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected_keys)))
            if missing_keys:
                error_msgs.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing_keys)))
        if error_msgs:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(error_msgs)))
        return IncompatibleKeys(missing_keys, unexpected_keys)

    # -- state-dict hooks --------------------------------------------------------------

    def register_state_dict_pre_hook(self, hook):
        """Call ``hook(module, prefix, keep_vars)`` before ``state_dict`` saves."""
        handle = RemovableHandle(self._state_dict_pre_hooks)
        self._state_dict_pre_hooks[handle.id] = hook
        return handle

    def register_state_dict_post_hook(self, hook):
        """Call ``hook(module, state_dict, prefix, local_metadata)`` after saving; it
        may modify the dict in place."""
        def checked(module, destination, prefix, local_metadata):
            if hook(module, destination, prefix, local_metadata) is not None:
                raise RuntimeError("state_dict post-hook must return None")
        handle = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[handle.id] = checked
        return handle

    def _register_state_dict_hook(self, hook):
        handle = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[handle.id] = hook
        return handle

    def register_load_state_dict_pre_hook(self, hook):
        """Call ``hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)`` before this module loads its entries."""
        def with_module(*args):
            return hook(self, *args)
        handle = RemovableHandle(self._load_state_dict_pre_hooks)
        self._load_state_dict_pre_hooks[handle.id] = with_module
        return handle

    def _register_load_state_dict_pre_hook(self, hook, with_module=False):
        if with_module:
            return self.register_load_state_dict_pre_hook(hook)
        handle = RemovableHandle(self._load_state_dict_pre_hooks)
        self._load_state_dict_pre_hooks[handle.id] = hook
        return handle

    def register_load_state_dict_post_hook(self, hook):
        """Call ``hook(module, incompatible_keys)`` after loading; it may edit the key
        lists in place."""
        handle = RemovableHandle(self._load_state_dict_post_hooks)
        self._load_state_dict_post_hooks[handle.id] = hook
        return handle
