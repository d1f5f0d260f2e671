"""Module: the base class of every layer and model (PyTorch's ``nn.Module`` contract).

Attributes that are Parameters, buffers or Modules live in three ordered dicts
(`_parameters`, `_buffers`, `_modules`) rather than in ``__dict__``: that is what lets
``parameters()``, ``state_dict()``, ``to()`` and ``repr`` walk the tree. ``__setattr__``
routes assignments there, ``__getattr__`` finds them. State-dict saving and loading
live in `_state_dict.py`, hooks with ``__call__`` in `_hooks.py`, device and dtype
conversion in `_conversion.py`; Module inherits them.
"""
import threading
import weakref
from collections import OrderedDict
from types import MethodType

from ember_tensor import Tensor

from ..parameter import Buffer, Parameter
from ._conversion import ConversionMixin
from ._hooks import (
    HooksMixin, register_module_forward_hook, register_module_forward_pre_hook, register_module_full_backward_hook,
    register_module_full_backward_pre_hook,
)
from ._state_dict import StateDictMixin

__all__ = ["Module", "register_module_forward_pre_hook", "register_module_forward_hook",
           "register_module_full_backward_pre_hook", "register_module_full_backward_hook"]


# `Module.compile`'s compiler: ember-compile, a package above this one, registers its
# `compile` and `is_compiling` here when it is imported (`import ember` imports it).
_compiler = None
_compiled_calls = threading.local()  # ids of the modules whose compiled forward is running here
# What `Module.compile` made of each module, outside the module's own state: a deep copy
# or an unpickled module compiles anew for itself instead of sharing the original's.
_compiled_modules = weakref.WeakKeyDictionary()


def register_compiler(compile_fn, is_compiling):
    """Make `Module.compile` use `compile_fn` (``torch.compile``'s signature); while
    `is_compiling()` is true, a compiled module's forward runs its plain code (a capture
    traces through it). Called by ember-compile at import."""
    global _compiler
    _compiler = (compile_fn, is_compiling)


def _typename(value):
    if isinstance(value, Tensor):
        return "torch." + value.type().rsplit(".", 1)[-1] if value.is_cpu else value.type()
    module = type(value).__module__
    name = type(value).__qualname__
    return name if module in (None, "builtins") else f"{module}.{name}"


def _check_member_name(kind, name, module):
    if not isinstance(name, str):
        raise TypeError(f"{kind} name should be a string. Got {_typename(name)}")
    if "." in name:
        raise KeyError(f"{kind} name can't contain \".\"" + (f", got: {name}" if kind == "module" else ""))
    if name == "":
        raise KeyError(f"{kind} name can't be empty string \"\"")


def _addindent(text, spaces):
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    return lines[0] + "\n" + "\n".join(" " * spaces + line for line in lines[1:])


class Module(HooksMixin, StateDictMixin, ConversionMixin):
    """Base class for all neural network modules; subclasses define ``forward``.

    Assigning a Parameter, a Module or a ``Buffer`` as an attribute registers it, so that
    ``parameters()``, ``state_dict()``, ``to()`` and ``repr`` see it.

    >>> import ember_tensor as torch
    >>> class Scale(Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.weight = Parameter(torch.ones(2))
    ...     def forward(self, x):
    ...         return x * self.weight
    >>> m = Scale()
    >>> [name for name, _ in m.named_parameters()]
    ['weight']
    """

    training: bool
    _version = 1
    call_super_init = False

    def __init__(self, *args, **kwargs):
        if not self.call_super_init and kwargs:
            raise TypeError(
                f"{type(self).__name__}.__init__() got an unexpected keyword argument '{next(iter(kwargs))}'")
        if not self.call_super_init and args:
            raise TypeError(
                f"{type(self).__name__}.__init__() takes 1 positional argument but {len(args) + 1} were given")
        state = object.__setattr__
        state(self, "training", True)
        state(self, "_parameters", {})
        state(self, "_buffers", {})
        state(self, "_non_persistent_buffers_set", set())
        state(self, "_backward_pre_hooks", OrderedDict())
        state(self, "_backward_hooks", OrderedDict())
        state(self, "_is_full_backward_hook", None)
        state(self, "_forward_hooks", OrderedDict())
        state(self, "_forward_hooks_with_kwargs", OrderedDict())
        state(self, "_forward_hooks_always_called", OrderedDict())
        state(self, "_forward_pre_hooks", OrderedDict())
        state(self, "_forward_pre_hooks_with_kwargs", OrderedDict())
        state(self, "_state_dict_hooks", OrderedDict())
        state(self, "_state_dict_pre_hooks", OrderedDict())
        state(self, "_load_state_dict_pre_hooks", OrderedDict())
        state(self, "_load_state_dict_post_hooks", OrderedDict())
        state(self, "_modules", {})
        if self.call_super_init:
            super().__init__(*args, **kwargs)

    def forward(self, *input):
        """The computation of the module; every subclass overrides it."""
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    def compile(self, *args, **kwargs):
        """Compile this module's forward with ``torch.compile`` in place (its arguments are
        passed as they are): calls of the module run the compiled forward, its hooks
        around it, its state_dict keys unchanged. Needs ember-compile (``import ember``).
        """
        if _compiler is None:
            raise RuntimeError("Module.compile() needs ember-compile: install it and import ember_compile "
                               "(import ember does)")
        self.__dict__["_compile_arguments"] = (args, kwargs)
        self.__dict__["forward"] = MethodType(Module._compiled_forward, self)  # `self(...)` calls it
        _compiled_modules[self] = _compiler[0](self, *args, **kwargs)

    @property
    def _compiled_call_impl(self):
        """What `compile` made of this module (None before): PyTorch's attribute."""
        return _compiled_modules.get(self)

    def _compiled_forward(self, *args, **kwargs):
        # The compiled call's own eager runs of this module, and a capture tracing through
        # it, take the plain forward.
        active = _compiled_calls.__dict__.setdefault("ids", set())
        if id(self) in active or _compiler[1]():
            return type(self).forward(self, *args, **kwargs)
        compiled = _compiled_modules.get(self)
        if compiled is None:  # a deep copy or an unpickled module: compiled for itself
            compile_args, compile_kwargs = self.__dict__["_compile_arguments"]
            compiled = _compiled_modules[self] = _compiler[0](self, *compile_args, **compile_kwargs)
        active.add(id(self))
        try:
            return compiled(*args, **kwargs)
        finally:
            active.discard(id(self))

    # -- registration ------------------------------------------------------------------

    def register_buffer(self, name, tensor, persistent=True):
        """Add a buffer: state that is not a parameter (BatchNorm's running_mean).

        Non-persistent buffers are left out of ``state_dict``.
        """
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        _check_member_name("buffer", name, self)
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name, param):
        """Add a parameter (a Parameter or None) reachable as attribute `name`."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        _check_member_name("parameter", name, self)
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                            "(torch.nn.Parameter or None required)")
        if param is not None and param.grad_fn is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be "
                f"created explicitly. To express '{name}' as a function of another Tensor, compute "
                "the value in the forward() method.")
        self._parameters[name] = param

    def add_module(self, name, module):
        """Add a child module (or None) reachable as attribute `name`."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {_typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        _check_member_name("module", name, self)
        self._modules[name] = module

    register_module = add_module

    def __setattr__(self, name, value):
        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._forget(name, self.__dict__, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            self.register_parameter(name, value)
        elif isinstance(value, Module):
            modules = self.__dict__.get("_modules")
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._forget(name, self.__dict__, self._parameters, self._buffers, self._non_persistent_buffers_set)
            modules[name] = value
        elif name in self.__dict__.get("_modules", ()):
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as child module '{name}' "
                                "(torch.nn.Module or None expected)")
            self._modules[name] = value
        elif isinstance(value, Buffer) or name in self.__dict__.get("_buffers", ()):
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' "
                                "(torch.nn.Buffer, torch.Tensor or None expected)")
            persistent = (getattr(value, "persistent", True) if isinstance(value, Buffer)
                          else name not in self._non_persistent_buffers_set)
            self.register_buffer(name, value, persistent)
        else:
            object.__setattr__(self, name, value)

    @staticmethod
    def _forget(name, *tables):
        for table in tables:
            if name in table:
                if isinstance(table, set):
                    table.discard(name)
                else:
                    del table[name]

    def __getattr__(self, name):
        # Only called when normal lookup fails: look in the three registries.
        state = self.__dict__
        for table in ("_parameters", "_buffers", "_modules"):
            members = state.get(table)
            if members is not None and name in members:
                return members[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def __dir__(self):
        keys = (dir(type(self)) + list(self.__dict__) + list(self._parameters) + list(self._modules)
                + list(self._buffers))
        return sorted(key for key in keys if not key[0].isdigit())

    def __setstate__(self, state):
        self.__dict__.update(state)

    # -- traversal ---------------------------------------------------------------------

    def _named_members(self, get_members, prefix="", recurse=True, remove_duplicate=True):
        seen = set()
        modules = (self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse
                   else [(prefix, self)])
        for module_prefix, module in modules:
            for name, value in get_members(module):
                if value is None or id(value) in seen:
                    continue
                if remove_duplicate:
                    seen.add(id(value))
                yield (module_prefix + "." + name if module_prefix else name), value

    def parameters(self, recurse=True):
        """Iterator over the module's parameters (and its descendants' when `recurse`)."""
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        """Iterator over (dotted name, parameter); a shared parameter appears once."""
        return self._named_members(lambda m: m._parameters.items(), prefix, recurse, remove_duplicate)

    def buffers(self, recurse=True):
        """Iterator over the module's buffers."""
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        """Iterator over (dotted name, buffer)."""
        return self._named_members(lambda m: m._buffers.items(), prefix, recurse, remove_duplicate)

    def children(self):
        """Iterator over the immediate child modules."""
        for _, module in self.named_children():
            yield module

    def named_children(self):
        """Iterator over (name, child module) for the immediate children, each once."""
        seen = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in seen:
                seen.add(id(module))
                yield name, module

    def modules(self):
        """Iterator over every module of the tree, this one first."""
        for _, module in self.named_modules():
            yield module

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        """Iterator over (dotted name, module) for the whole tree, depth first."""
        if memo is None:
            memo = set()
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is not None:
                yield from module.named_modules(memo, prefix + ("." if prefix else "") + name, remove_duplicate)

    def get_submodule(self, target):
        """The submodule at dotted path `target` ("" is self)."""
        if target == "":
            return self
        module = self
        for item in target.split("."):
            if not hasattr(module, item):
                raise AttributeError(module._get_name() + " has no attribute `" + item + "`")
            module = getattr(module, item)
            if not isinstance(module, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return module

    def set_submodule(self, target, module, strict=False):
        """Replace (or, unless `strict`, add) the submodule at dotted path `target`."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        parent_path, _, name = target.rpartition(".")
        parent = self.get_submodule(parent_path)
        if strict and not hasattr(parent, name):
            raise AttributeError(parent._get_name() + " has no attribute `" + name + "`")
        if hasattr(parent, name) and not isinstance(getattr(parent, name), Module):
            raise AttributeError("`" + name + "` is not an nn.Module")
        setattr(parent, name, module)

    def get_parameter(self, target):
        """The parameter at dotted path `target` ("layer.weight")."""
        module_path, _, name = target.rpartition(".")
        module = self.get_submodule(module_path)
        if not hasattr(module, name):
            raise AttributeError(module._get_name() + " has no attribute `" + name + "`")
        param = getattr(module, name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target):
        """The buffer at dotted path `target`."""
        module_path, _, name = target.rpartition(".")
        module = self.get_submodule(module_path)
        if not hasattr(module, name):
            raise AttributeError(module._get_name() + " has no attribute `" + name + "`")
        if name not in module._buffers:
            raise AttributeError("`" + name + "` is not a buffer")
        return getattr(module, name)

    # -- modes and gradients ------------------------------------------------------

    def train(self, mode=True):
        """Set training mode on this module and its descendants; returns self."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self):
        """Set evaluation mode (``train(False)``); returns self."""
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        """Set ``requires_grad`` of every parameter; returns self."""
        for param in self.parameters():
            param.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        """Reset the gradients of every parameter: to None, or to zeros in place."""
        for param in self.parameters():
            if param.grad is None:
                continue
            if set_to_none:
                param.grad = None
            else:
                if param.grad.grad_fn is not None:
                    param.grad.detach_()
                else:
                    param.grad.requires_grad_(False)
                param.grad.zero_()

    def apply(self, fn):
        """Call `fn` on every descendant (children first) and then on self; returns self."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # -- printing ----------------------------------------------------------------------------

    def _get_name(self):
        return type(self).__name__

    def extra_repr(self):
        """The module-specific part of ``repr`` (one line, or several); override it."""
        return ""

    def __repr__(self):
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({name}): " + _addindent(repr(module), 2) for name, module in self._modules.items()]
        lines = extra_lines + child_lines
        text = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                text += extra_lines[0]
            else:
                text += "\n  " + "\n  ".join(lines) + "\n"
        return text + ")"
