"""Python source for a Graph: the ``forward`` that a GraphModule runs (``graph.python_code``).

The code reads as PyTorch's does: one line per node, operators written inline
(``add = x + y``), methods as method calls, submodules as ``self.path(...)``, and each
value set to ``None`` right after its last use so that intermediate tensors are freed as
early as eager mode frees them.
"""
import builtins
import keyword
import math
import operator
import re
import sys

from .node import BINARY_OPERATORS, UNARY_OPERATORS, Node, qualified_name

__all__ = ["PythonCode", "python_code"]

_ILLEGAL_CHARS = re.compile(r"[^0-9a-zA-Z_]+")


class PythonCode:
    """Source of the generated ``forward`` and the globals it needs to be executed in."""

    def __init__(self, src, globals):
        self.src = src
        self.globals = globals

    def __repr__(self):
        return f"PythonCode(src={self.src!r})"


def _identifier(text):
    name = _ILLEGAL_CHARS.sub("_", text) or "_"
    return "_" + name if name[0].isdigit() else name


def _resolves_to(path, obj):
    """Whether dotted `path` (``ember_nn.functional.relu``) names `obj` from its root module."""
    root, *attributes = path.split(".")
    value = sys.modules.get(root)
    if value is None or not root.isidentifier() or keyword.iskeyword(root):
        return False
    for attribute in attributes:
        if not attribute.isidentifier():
            return False
        value = getattr(value, attribute, None)
    return value is obj


class _Globals:
    """Names the generated code refers to, kept apart from the nodes' variable names."""

    def __init__(self, taken):
        self.taken = set(taken)
        self.values = {}

    def add(self, obj, candidate):
        for name, value in self.values.items():
            if value is obj:
                return name
        base = _identifier(candidate)
        name, count = base, 0
        while name in self.taken or keyword.iskeyword(name) or hasattr(builtins, name):
            count += 1
            name = f"{base}_{count}"
        self.taken.add(name)
        self.values[name] = obj
        return name

    def callable_expression(self, target):
        """How the code names a function: ``operator.add``, ``ember_tensor.relu``, ``len``."""
        if getattr(builtins, getattr(target, "__name__", ""), None) is target:
            return target.__name__
        path = qualified_name(target)
        root = path.split(".")[0]
        if _resolves_to(path, target) and (root not in self.taken or self.values.get(root) is sys.modules[root]):
            self.taken.add(root)
            self.values[root] = sys.modules[root]
            return path
        return self.add(target, getattr(target, "__name__", None) or path)

    def literal(self, value):
        """A constant argument as source: a literal where Python has one, else a global."""
        if isinstance(value, bool) or value is None or value is Ellipsis:
            return repr(value)
        if isinstance(value, float):
            if math.isnan(value) or math.isinf(value):
                return f"float('{value}')"
            return repr(value)
        if isinstance(value, (int, str, complex)):
            return repr(value)
        return self.add(value, str(value) if type(value).__repr__ is not object.__repr__ else type(value).__name__)


def _format(arg, names):
    if isinstance(arg, Node):
        return arg.name
    if isinstance(arg, tuple) and hasattr(arg, "_fields"):
        constructor = names.add(type(arg), type(arg).__name__)
        return f"{constructor}(" + ", ".join(_format(a, names) for a in arg) + ")"
    if isinstance(arg, tuple):
        items = ", ".join(_format(a, names) for a in arg)
        return f"({items},)" if len(arg) == 1 else f"({items})"
    if isinstance(arg, list):
        return "[" + ", ".join(_format(a, names) for a in arg) + "]"
    if isinstance(arg, dict):
        return "{" + ", ".join(f"{_format(k, names)}: {_format(v, names)}" for k, v in arg.items()) + "}"
    if isinstance(arg, slice):
        return f"slice({_format(arg.start, names)}, {_format(arg.stop, names)}, {_format(arg.step, names)})"
    return names.literal(arg)


def _call_arguments(args, kwargs, names):
    parts = [_format(a, names) for a in args]
    parts += [f"{key} = {_format(value, names)}" for key, value in kwargs.items()]
    return ", ".join(parts)


def _attribute_path(target):
    """``self.a.b`` for a dotted target of identifiers, else nested getattr calls."""
    expression = "self"
    for part in target.split("."):
        expression = f"{expression}.{part}" if part.isidentifier() and not keyword.iskeyword(part) \
            else f"getattr({expression}, {part!r})"
    return expression


def _expression(node, names):
    """The right-hand side computing `node`."""
    args, kwargs = node.args, node.kwargs
    if node.op == "get_attr":
        return _attribute_path(node.target)
    if node.op == "call_module":
        return f"{_attribute_path(node.target)}({_call_arguments(args, kwargs, names)})"
    if node.op == "call_method":
        receiver = _format(args[0], names)
        return f"{receiver}.{node.target}({_call_arguments(args[1:], kwargs, names)})"
    target = node.target
    if not kwargs and len(args) == 2 and target in BINARY_OPERATORS:
        return f"{_format(args[0], names)} {BINARY_OPERATORS[target]} {_format(args[1], names)}"
    if not kwargs and len(args) == 1 and target in UNARY_OPERATORS:
        return f"{UNARY_OPERATORS[target]}{_format(args[0], names)}"
    if target is operator.getitem and not kwargs and len(args) == 2:
        return f"{_format(args[0], names)}[{_format(args[1], names)}]"
    if (target is builtins.getattr and not kwargs and len(args) == 2 and isinstance(args[1], str)
            and args[1].isidentifier() and not keyword.iskeyword(args[1])):
        return f"{_format(args[0], names)}.{args[1]}"
    return f"{names.callable_expression(target)}({_call_arguments(args, kwargs, names)})"


def _last_uses(nodes):
    """For each node, the values whose last use it is (freed right after it)."""
    seen, freed_after = set(), {node: [] for node in nodes}
    for node in reversed(nodes):
        for used in node.all_input_nodes:
            if used not in seen:
                seen.add(used)
                freed_after[node].append(used)
    return freed_after


def python_code(graph):
    """The source of ``forward(self, ...)`` computing `graph`, and its globals."""
    nodes = list(graph.nodes)
    names = _Globals(node.name for node in nodes)
    freed_after = _last_uses(nodes)
    signature, body = ["self"], []
    for node in nodes:
        if node.op == "placeholder":
            parameter = node.target
            if node.args:
                parameter += f" = {_format(node.args[0], names)}"
            signature.append(parameter)
            if node.name != node.target.lstrip("*"):
                body.append(f"{node.name} = {node.target.lstrip('*')}")
            continue
        if node.op == "output":
            body.append(f"return {_format(node.args[0], names)}")
            continue
        line = f"{node.name} = {_expression(node, names)}"
        freed = [n.name for n in freed_after[node]]
        if not node.users:
            freed.append(node.name)  # a value nobody reads (an in-place call kept for its effect)
        if freed:
            line += ";  " + " = ".join(freed) + " = None"
        body.append(line)
    if not body:
        body.append("pass")
    src = "\n\n\ndef forward(" + ", ".join(signature) + "):\n" + "".join(f"    {line}\n" for line in body) + "    "
    return PythonCode(src, names.values)
