"""Symbolic tracing: run a module's ``forward`` on Proxies and keep the graph it records.

``Tracer.trace`` creates a placeholder per parameter of ``forward``, calls it with their
Proxies, and records what happens (see proxy.py and _patching.py for how each kind of
call is caught). Submodules are the unit of abstraction: a module of ember-nn (``Linear``,
``Conv2d``, ...) becomes one ``call_module`` node (a *leaf*), any other module's
``forward`` is traced through. Parameters read in a traced ``forward`` become ``get_attr``
nodes, and so do buffers and other tensors the program combines with a Proxy.
"""
import builtins
import inspect
import math
import operator
import types

import ember_tensor
import ember_nn.functional
from ember_nn import Module, Parameter, Sequential
from ember_tensor import Tensor
from ember_tensor.dispatch import Operator

from ._patching import Patcher, record_if_proxy
from .graph import Graph
from .graph_module import GraphModule
from .node import has_side_effect
from .proxy import TracerBase

__all__ = ["Tracer", "symbolic_trace", "wrap", "PH"]


class PHBase:
    """The marker, in ``concrete_args``, of an argument that stays an input (a placeholder)."""

    def __repr__(self):
        return "PH"


PH = PHBase()

# (globals dict, name) pairs that ``wrap`` registered, patched during every trace.
_wrapped_names = {}

# Functions of ember-tensor's top level that answer about the Python object rather than
# compute on a tensor: given a Proxy they run, as in PyTorch (``is_tensor(proxy)`` is False).
_NOT_RECORDED = {"is_tensor", "is_storage", "typename", "set_default_dtype", "set_default_device",
                 "manual_seed", "seed"}


@has_side_effect
def _assert(condition, message):
    """The check a graph traced with a concrete argument runs on that argument."""
    if not condition:
        raise AssertionError(message)


@has_side_effect
def _assert_is_none(value, message):
    """The check a graph traced with a ``None`` concrete argument runs on that argument."""
    if value is not None:
        raise AssertionError(message)


def wrap(fn_or_name):
    """Make a module-level function a leaf: traced calls of it become one ``call_function``.

    Call it at the top level of the module that calls the function, with the function or
    its name (``wrap("len")`` works for a builtin). Returns its argument, so it also serves
    as a decorator.
    """
    if callable(fn_or_name):
        name = fn_or_name.__name__
        if name == "<lambda>":
            raise NotImplementedError("wrap() cannot wrap a lambda: give the function a name")
    elif isinstance(fn_or_name, str):
        name = fn_or_name
    else:
        raise TypeError(f"wrap() expects a function or its name, got {type(fn_or_name).__name__}")
    caller = inspect.currentframe().f_back
    if caller.f_code.co_name != "<module>":
        raise NotImplementedError("wrap must be called at the top level of a module")
    _wrapped_names[(id(caller.f_globals), name)] = caller.f_globals
    return fn_or_name


def _function_with_positional_varargs(fn, extra):
    """`fn` with ``*args``/``**kwargs`` turned into plain parameters, so that each can be
    bound to a single Proxy (``args[0]`` then records a getitem)."""
    code = fn.__code__
    if code.co_kwonlyargcount:
        raise NotImplementedError("symbolic_trace does not support keyword-only parameters beside *args/**kwargs")
    flags = code.co_flags & ~(inspect.CO_VARARGS | inspect.CO_VARKEYWORDS)
    code = code.replace(co_flags=flags, co_argcount=code.co_argcount + extra)
    return types.FunctionType(code, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)


class Tracer(TracerBase):
    """Turns a Module or a function into a Graph by running it on Proxies.

    Args:
        autowrap_modules: modules whose functions, called on a Proxy from the traced code,
            are recorded as calls instead of run (default: ``math``).
        autowrap_functions: single functions treated the same way.
        param_shapes_constant: accepted for PyTorch's signature; shapes of parameters are
            always read from the real parameters here.

    Override ``is_leaf_module`` to choose which submodules stay opaque.
    """

    # PyTorch's class-level switches: the method traced, whether buffers read in a
    # traced forward become get_attr nodes at once, and two that ember does not act on.
    traced_func_name = "forward"
    proxy_buffer_attributes = False
    record_stack_traces = False
    check_mutable_operations = False

    def __init__(self, autowrap_modules=(math,), autowrap_functions=(), param_shapes_constant=False):
        super().__init__()
        self._autowrap_functions = [fn for module in autowrap_modules for fn in vars(module).values()
                                    if callable(fn) and not isinstance(fn, type)]
        self._autowrap_functions += list(autowrap_functions)
        self._autowrap_modules = list(autowrap_modules)
        self.param_shapes_constant = param_shapes_constant
        self.root = None
        self.graph = None
        self.submodule_paths = None
        self.tensor_attrs = {}

    # -- what becomes a node --------------------------------------------------------------

    def create_arg(self, a):
        """As TracerBase's, and a tensor of the root module (parameter, buffer, attribute)
        becomes a get_attr node; any other tensor becomes a constant attribute of the root
        (``_tensor_constant0``)."""
        if isinstance(a, Parameter):
            for name, param in self.root.named_parameters():
                if a is param:
                    return self.create_node("get_attr", name, (), {})
            raise NameError("parameter is not a member of this module")
        if isinstance(a, Tensor):
            for name, buffer in self.root.named_buffers():
                if a is buffer:
                    return self.create_node("get_attr", name, (), {})
            qualified_name = self.tensor_attrs.get(id(a))
            if qualified_name is None:
                qualified_name = self.get_fresh_qualname("_tensor_constant")
                setattr(self.root, qualified_name, a)
                self.tensor_attrs[id(a)] = qualified_name
            return self.create_node("get_attr", qualified_name, (), {})
        if isinstance(a, Module):
            return self.create_node("get_attr", self.path_of_module(a), (), {})
        return super().create_arg(a)

    def get_fresh_qualname(self, prefix):
        """An attribute name of the root starting with `prefix` that is not taken yet."""
        index = 0
        while hasattr(self.root, f"{prefix}{index}"):
            index += 1
        return f"{prefix}{index}"

    def is_leaf_module(self, m, module_qualified_name):
        """Whether submodule `m` is recorded as one call_module node rather than traced
        through: ember-nn's own layers are, except containers (Sequential)."""
        return type(m).__module__.startswith("ember_nn") and not isinstance(m, Sequential)

    def path_of_module(self, mod):
        """The dotted path of submodule `mod` in the root module."""
        path = self.submodule_paths.get(id(mod)) if self.submodule_paths is not None else None
        if path is None:
            for name, module in self.root.named_modules(remove_duplicate=False):
                if module is mod:
                    return name
            raise NameError("module is not installed as a submodule")
        return path

    def call_module(self, m, forward, args, kwargs):
        """A call of submodule `m`: one node if it is a leaf, else its traced forward."""
        qualified_name = self.path_of_module(m)
        if not self.is_leaf_module(m, qualified_name):
            return forward(*args, **kwargs)
        return self.create_proxy("call_module", qualified_name, args, kwargs)

    def getattr(self, attr, attr_val, parameter_proxy_cache):
        """A module attribute read while tracing: a parameter (and, with
        ``proxy_buffer_attributes``, a buffer) becomes a get_attr Proxy, one per tensor;
        anything else is returned as it is."""
        if isinstance(attr_val, Parameter):
            members = self.root.named_parameters()
        elif self.proxy_buffer_attributes and isinstance(attr_val, Tensor):
            members = self.root.named_buffers()
        else:
            return attr_val
        for name, member in members:
            if attr_val is member:
                if name not in parameter_proxy_cache:
                    parameter_proxy_cache[name] = self.create_proxy("get_attr", name, (), {})
                return parameter_proxy_cache[name]
        return attr_val

    # -- the inputs ----------------------------------------------------------------------

    def create_args_for_root(self, root_fn, is_module, concrete_args=None):
        """Placeholders (and the values of concrete arguments) for `root_fn`'s parameters.

        Returns the function to call and the arguments to call it with.
        """
        concrete_args = dict(concrete_args or {})
        parameters = list(inspect.signature(root_fn).parameters.values())
        args = []
        if is_module:
            if not parameters:
                raise RuntimeError(f"{root_fn.__name__} must take `self` as its first argument")
            args.append(self.root)
            parameters = parameters[1:]
        variadic = 0
        for parameter in parameters:
            name = parameter.name
            if parameter.kind is inspect.Parameter.VAR_POSITIONAL:
                args.append(self.create_proxy("placeholder", "*" + name, (), {}))
                variadic += 1
            elif parameter.kind is inspect.Parameter.VAR_KEYWORD:
                args.append(self.create_proxy("placeholder", "**" + name, (), {}))
                variadic += 1
            elif name in concrete_args and concrete_args[name] is not PH:
                args.append(self._concrete_input(name, concrete_args.pop(name)))
            else:
                concrete_args.pop(name, None)
                default = () if parameter.default is inspect.Parameter.empty else (parameter.default,)
                args.append(self.create_proxy("placeholder", name, default, {}))
        if concrete_args:
            raise RuntimeError(f"concrete_args names parameters that {root_fn.__name__} does not have: "
                               f"{sorted(concrete_args)}")
        if variadic:
            root_fn = _function_with_positional_varargs(root_fn, variadic)
        return root_fn, args

    def _concrete_input(self, name, value):
        """An input fixed at trace time: still a parameter of the generated code, which
        checks that it gets the traced value (PyTorch's specialisation asserts)."""
        placeholder = self.create_node("placeholder", name, (), {})
        message = f"{name} has been specialized to have value {value} but got another value"
        if value is None:
            self.create_node("call_function", _assert_is_none, (placeholder, message), {})
        elif isinstance(value, (bool, int, float, str)):
            equal = self.create_node("call_function", operator.eq, (placeholder, value), {})
            self.create_node("call_function", _assert, (equal, message), {})
        return value

    # -- the trace -----------------------------------------------------------------------

    def trace(self, root, concrete_args=None):
        """Trace `root` (a Module or a function) and return its Graph.

        Args:
            root: what to trace; a Module's ``forward`` is traced.
            concrete_args: parameters fixed to values (Python control flow may depend on
                them; the graph checks them at run time), or ``PH`` to keep one an input.
        """
        if isinstance(root, Module):
            self.root = root
            fn = getattr(type(root), self.traced_func_name)
        else:
            self.root = Module()
            fn = root
        self.graph = Graph(tracer_cls=type(self))
        self.tensor_attrs = {}
        for prefix, module in self.root.named_modules():
            for key, value in vars(module).items():
                if isinstance(value, Tensor):
                    self.tensor_attrs[id(value)] = f"{prefix}.{key}" if prefix else key
        self.submodule_paths = {id(module): name for name, module in self.root.named_modules()}
        fn, args = self.create_args_for_root(fn, isinstance(root, Module), concrete_args)
        parameter_proxy_cache = {}
        original_getattr = Module.__getattr__
        original_call = Module.__call__
        tracer = self

        def module_getattr(mod, attr):
            return tracer.getattr(attr, original_getattr(mod, attr), parameter_proxy_cache)

        with Patcher() as patcher:
            def module_call(mod, *args, **kwargs):
                def forward(*args, **kwargs):
                    # Traced through: the functions its source calls must be caught too.
                    patcher.wrap_in(getattr(type(mod).forward, "__globals__", {}), follow_modules=True)
                    return original_call(mod, *args, **kwargs)

                return tracer.call_module(mod, forward, args, kwargs)

            self._patch(patcher, fn)
            for module in self.root.modules():
                # Functions a module holds as attributes (TransformerEncoderLayer's
                # ``self.activation = F.relu``), which PyTorch's tracer catches through
                # ``__torch_function__``, are called on Proxies too.
                patcher.wrap_in(vars(module))
            patcher.patch_method(Module, "__getattr__", module_getattr)
            patcher.patch_method(Module, "__call__", module_call)
            try:
                result = fn(*args)
            finally:
                self.submodule_paths = None
            self.create_node("output", "output", (self.create_arg(result),), {},
                             type_expr=getattr(fn, "__annotations__", {}).get("return"))
        return self.graph

    def _patch(self, patcher, fn):
        patcher.route_ops()
        functional = [value for name, value in vars(ember_nn.functional).items()
                      if not name.startswith("_") and isinstance(value, types.FunctionType)]
        top_level = [getattr(ember_tensor, name) for name in ember_tensor.__all__
                     if isinstance(getattr(ember_tensor, name, None), types.FunctionType)
                     and name not in _NOT_RECORDED]
        patcher.add_wrappable(functional + top_level + self._autowrap_functions)
        patcher.wrap_in(vars(ember_nn.functional))
        patcher.wrap_in(vars(ember_tensor))
        for module in self._autowrap_modules:  # ``math.sqrt(proxy)`` as well as ``sqrt(proxy)``
            patcher.wrap_in(vars(module))
        patcher.wrap_in(getattr(fn, "__globals__", {}), follow_modules=True)
        for (_, name), namespace in _wrapped_names.items():
            original = namespace.get(name, getattr(builtins, name, None))  # wrap("len") wraps the builtin
            if original is not None and not isinstance(original, Operator):
                patcher.patch_item(namespace, name, record_if_proxy(getattr(original, "__fx_original__", original)))


def symbolic_trace(root, concrete_args=None):
    """Trace `root` (a Module or a function) into a GraphModule.

    Args:
        root: the Module (its ``forward`` is traced) or function.
        concrete_args: ``{parameter name: value}`` to fix while tracing (Python control
            flow may depend on them; the generated code checks them), or ``PH`` to keep
            a parameter an input.

    Returns:
        A GraphModule named after `root`'s class (or function), holding its submodules
        and parameters under their names.

    >>> import ember_tensor as torch
    >>> def f(x, y):
    ...     return torch.relu(x) + y
    >>> gm = symbolic_trace(f)
    >>> print(gm.code.strip())
    def forward(self, x, y):
        relu = ember_tensor.relu(x);  x = None
        add = relu + y;  relu = y = None
        return add
    """
    tracer = Tracer()
    graph = tracer.trace(root, concrete_args)
    name = type(root).__name__ if isinstance(root, Module) else root.__name__
    return GraphModule(tracer.root, graph, name)

