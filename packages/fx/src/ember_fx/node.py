"""Node: one operation of a Graph (``torch.fx.node``).

A node is one of six ops: ``placeholder`` (an input of the function), ``get_attr`` (a
parameter, buffer or constant of the module), ``call_function``, ``call_method``,
``call_module`` and ``output`` (the returned value). Its ``args``/``kwargs`` may hold
other nodes, nested in tuples, lists and dicts; each node keeps, both ways, who it uses
(``all_input_nodes``) and who uses it (``users``), and every edit goes through the
``args``/``kwargs`` setters so that both stay true.
"""
import builtins
import operator
import sys
import types

from ember_tensor.dispatch import Operator

from .immutable_collections import immutable_dict, immutable_list

__all__ = ["Node", "map_arg", "map_aggregate", "has_side_effect"]

# Functions whose call must stay in the graph even when nothing uses its result.
_side_effectful_functions = set()


def has_side_effect(fn):
    """Mark `fn` as impure: ``eliminate_dead_code`` keeps its calls. Returns `fn`."""
    _side_effectful_functions.add(fn)
    return fn


# ember ops that draw random numbers: dead code elimination must not drop them, or the
# generator's state after the graph runs would differ from eager.
_RANDOM_OP_PREFIXES = ("rand", "bernoulli", "normal", "multinomial", "poisson", "dropout", "uniform_",
                       "exponential_", "geometric_", "cauchy_", "log_normal_", "random_")


def map_aggregate(a, fn):
    """Apply `fn` to every leaf of `a`, rebuilding its tuples, lists, dicts and slices.

    Lists and dicts come back immutable (see immutable_collections): they are a node's
    arguments.
    """
    if isinstance(a, tuple):
        mapped = tuple(map_aggregate(elem, fn) for elem in a)
        return mapped if not hasattr(a, "_fields") else type(a)(*mapped)  # namedtuples keep their type
    if isinstance(a, list):
        return immutable_list(map_aggregate(elem, fn) for elem in a)
    if isinstance(a, dict):
        return immutable_dict((key, map_aggregate(value, fn)) for key, value in a.items())
    if isinstance(a, slice):
        return slice(map_aggregate(a.start, fn), map_aggregate(a.stop, fn), map_aggregate(a.step, fn))
    return fn(a)


def map_arg(a, fn):
    """Apply `fn` to every Node inside `a` (an argument structure); other values stay."""
    return map_aggregate(a, lambda x: fn(x) if isinstance(x, Node) else x)


def _public_module_of(obj):
    """The shortest public module path that holds `obj` under its name.

    ``ember_nn.functional._activation.relu`` is ``ember_nn.functional.relu`` to a user,
    ``_operator.add`` is ``operator.add``.
    """
    module_name = getattr(obj, "__module__", None)
    name = getattr(obj, "__name__", None)
    if module_name == "_operator":
        return "operator"
    if not isinstance(module_name, str) or name is None:
        return module_name
    parts = module_name.split(".")
    for end in range(1, len(parts) + 1):
        prefix = ".".join(parts[:end])
        module = sys.modules.get(prefix)
        if module is not None and getattr(module, name, None) is obj:
            return prefix
    return module_name


def qualified_name(obj):
    """``module.name`` of a function or op, as fx prints a target (``operator.add``)."""
    if isinstance(obj, types.BuiltinFunctionType) and getattr(builtins, obj.__name__, None) is obj:
        return f"builtins.{obj.__name__}"
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None) or repr(obj)
    module = _public_module_of(obj)
    if module is not None and getattr(sys.modules.get(module), getattr(obj, "__name__", ""), None) is obj:
        name = obj.__name__
    return f"{module}.{name}" if module else name


def _format_target(target):
    return target if isinstance(target, str) else qualified_name(target)


class Node:
    """One operation of a Graph; see the module docstring for the six ops.

    Attributes:
        graph: the Graph holding it.
        name: a unique name in the graph (also the variable in generated code).
        op: the opcode.
        target: what is called: a callable (``call_function``) or a string (a method
            name, a submodule's or attribute's dotted path, a placeholder's name).
        users: the nodes using this one, as dict keys, in insertion order.
        meta: free-form metadata that passes (``ShapeProp``) fill.
        type: the optional annotation of the value.
    """

    # Slots: a traced model has many nodes, and PyTorch declares the same attributes.
    __slots__ = ("graph", "name", "op", "target", "_input_nodes", "users", "type", "meta", "_prev", "_next",
                 "_erased", "_sort_key", "_args", "_kwargs", "__weakref__")

    def __init__(self, graph, name, op, target, args, kwargs, return_type=None):
        if op not in ("placeholder", "call_method", "call_module", "call_function", "get_attr", "output", "root"):
            raise ValueError(f"Unknown node op {op!r}")
        if op == "call_function" and not callable(target):
            raise ValueError(f"Node [graph = {graph}, name = '{name}'] target {target} has type "
                             f"{type(target)} but a Callable is expected")
        if op in ("call_method", "call_module", "get_attr", "placeholder", "output") and not isinstance(target, str):
            raise ValueError(f"Node [graph = {graph}, name = '{name}'] target {target} has type "
                             f"{type(target)} but a str is expected")
        self.graph = graph
        self.name = name
        self.op = op
        self.target = target
        self._input_nodes = {}
        self.users = {}
        self.type = return_type
        self.meta = {}
        self._prev = self._next = self
        self._erased = False
        self._sort_key = ()
        self._args = ()
        self._kwargs = {}
        self._update_args_kwargs(args, kwargs)

    # -- the linked list of the graph -----------------------------------------------------

    @property
    def next(self):
        """The node after this one in the graph's order."""
        return self._next

    @property
    def prev(self):
        """The node before this one in the graph's order."""
        return self._prev

    def prepend(self, x):
        """Move node `x` (of the same graph) to just before this one."""
        if self.graph is not x.graph:
            raise AssertionError("Attempting to move a Node into a different Graph")
        if self is x:
            return
        x._remove_from_list()
        p = self._prev
        p._next, x._prev = x, p
        x._next, self._prev = self, x

    def append(self, x):
        """Move node `x` (of the same graph) to just after this one."""
        self._next.prepend(x)

    def _remove_from_list(self):
        p, n = self._prev, self._next
        p._next, n._prev = n, p

    # -- arguments and uses ---------------------------------------------------------------

    @property
    def args(self):
        """The positional arguments (a tuple); assigning it updates the use lists."""
        return self._args

    @args.setter
    def args(self, value):
        self._update_args_kwargs(value, self._kwargs)

    @property
    def kwargs(self):
        """The keyword arguments (a dict); assigning it updates the use lists."""
        return self._kwargs

    @kwargs.setter
    def kwargs(self, value):
        self._update_args_kwargs(self._args, value)

    @property
    def all_input_nodes(self):
        """Every Node in ``args`` and ``kwargs``, each once, in order of appearance."""
        return list(self._input_nodes)

    def update_arg(self, idx, arg):
        """Set positional argument `idx` to `arg`."""
        args = list(self.args)
        args[idx] = arg
        self.args = tuple(args)

    def insert_arg(self, idx, arg):
        """Insert `arg` as positional argument `idx`."""
        args = list(self.args)
        args.insert(idx, arg)
        self.args = tuple(args)

    def update_kwarg(self, key, arg):
        """Set keyword argument `key` to `arg`."""
        self.kwargs = {**self.kwargs, key: arg}

    def _update_args_kwargs(self, new_args, new_kwargs):
        for old_use in self._input_nodes:
            old_use.users.pop(self)
        self._input_nodes = {}
        self._args = map_aggregate(tuple(new_args), self._collect_input)
        self._kwargs = map_aggregate(dict(new_kwargs), self._collect_input)
        for new_use in self._input_nodes:
            new_use.users.setdefault(self)

    def _collect_input(self, x):
        if isinstance(x, Node):
            if x.graph is not self.graph:
                raise RuntimeError(f"Argument '{x}' of Node '{self}' was used before it has been defined! "
                                   "Please check that Nodes in the graph are topologically ordered")
            self._input_nodes.setdefault(x)
        return x

    def replace_all_uses_with(self, replace_with, delete_user_cb=lambda user: True, *, propagate_meta=False):
        """Make every user of this node use `replace_with` instead; returns the users changed.

        `delete_user_cb(user)` chooses which users to change (all by default);
        `propagate_meta` copies this node's ``meta`` onto `replace_with`.
        """
        if propagate_meta:
            if replace_with.meta:
                raise AssertionError("Called node.replace_all_uses_with(replace_with, propagate_meta=True), "
                                     "but replace_with already has .meta keys")
            replace_with.meta.update(self.meta)
        changed = []
        for user in list(self.users):
            if user is replace_with or not delete_user_cb(user):
                continue
            user.replace_input_with(self, replace_with)
            changed.append(user)
        return changed

    def replace_input_with(self, old_input, new_input):
        """Replace every use of `old_input` among this node's arguments by `new_input`."""
        def swap(n):
            return new_input if n is old_input else n

        self._update_args_kwargs(map_arg(self._args, swap), map_arg(self._kwargs, swap))

    # -- purity -------------------------------------------------------------------------

    def is_impure(self):
        """Whether dead code elimination must keep this node even with no users.

        Inputs and the output are; so are calls of functions marked ``has_side_effect``,
        ember ops that write into an argument or draw random numbers, and submodules whose
        class sets ``_is_impure``.
        """
        if self.op in ("placeholder", "output"):
            return True
        if self.op == "call_module":
            module = self.graph.owning_module
            return module is not None and getattr(module.get_submodule(self.target), "_is_impure", False)
        if self.op == "call_function":
            if self.target in _side_effectful_functions:
                return True
            if isinstance(self.target, Operator):
                return self.target.inplace or self.target.name.startswith(_RANDOM_OP_PREFIXES)
        return False

    # -- printing -------------------------------------------------------------------------

    def format_node(self, placeholder_names=None, maybe_return_typename=None):
        """The node as one line of the graph's printout, PyTorch's format."""
        if self.op == "placeholder":
            if placeholder_names is not None:
                placeholder_names.append(self.target)
            type_text = f": {_type_repr(self.type)}" if self.type is not None else ""
            default = f"(default={self.args[0]})" if self.args else ""
            return f"%{self.name}{type_text} : [num_users={len(self.users)}] = placeholder[target={self.target}]{default}"
        if self.op == "output":
            if self.type is not None and maybe_return_typename is not None:
                maybe_return_typename[0] = f" -> {_type_repr(self.type)}"
            return f"return {self.args[0]}"
        type_text = f": {_type_repr(self.type)}" if self.type is not None else ""
        if self.op == "get_attr":
            return f"%{self.name}{type_text} : [num_users={len(self.users)}] = get_attr[target={self.target}]"
        return (f"%{self.name}{type_text} : [num_users={len(self.users)}] = "
                f"{self.op}[target={_format_target(self.target)}](args = {_format_arg(self.args)}, "
                f"kwargs = {_format_arg(self.kwargs)})")

    def __repr__(self):
        return self.name

    @property
    def stack_trace(self):
        """Where in the traced program this node was recorded, if a tracer noted it."""
        return self.meta.get("stack_trace")

    @stack_trace.setter
    def stack_trace(self, trace):
        self.meta["stack_trace"] = trace

    def __getstate__(self):
        return {name: getattr(self, name) for name in self.__slots__ if name != "__weakref__"}

    def __setstate__(self, state):
        for name, value in state.items():
            object.__setattr__(self, name, value)


def _type_repr(t):
    return getattr(t, "__name__", None) or repr(t)


def _format_arg(arg):
    if isinstance(arg, Node):
        return "%" + arg.name
    if isinstance(arg, tuple):
        items = ", ".join(_format_arg(a) for a in arg)
        return f"({items},)" if len(arg) == 1 else f"({items})"
    if isinstance(arg, list):
        return "[" + ", ".join(_format_arg(a) for a in arg) + "]"
    if isinstance(arg, dict):
        return "{" + ", ".join(f"{k}: {_format_arg(v)}" for k, v in arg.items()) + "}"
    return str(arg)


# The operators the generated code writes inline: ``a + b``, ``-a``, ``a[b]``.
BINARY_OPERATORS = {
    operator.add: "+", operator.sub: "-", operator.mul: "*", operator.floordiv: "//", operator.truediv: "/",
    operator.mod: "%", operator.pow: "**", operator.lshift: "<<", operator.rshift: ">>", operator.and_: "&",
    operator.or_: "|", operator.xor: "^", operator.matmul: "@", operator.eq: "==", operator.ne: "!=",
    operator.lt: "<", operator.gt: ">", operator.le: "<=", operator.ge: ">=",
}
UNARY_OPERATORS = {operator.neg: "-", operator.pos: "+", operator.invert: "~"}
