"""Graph: the nodes of a traced program, in order (``torch.fx.graph``).

The nodes form a doubly linked list (so inserting or erasing is O(1) wherever it
happens) in an order where every node comes after the nodes it uses. New nodes go to the
insertion point: the end, or where ``inserting_before``/``inserting_after`` put it.
"""
import builtins
import contextlib
import copy
import inspect
import keyword
import re

from . import _codegen
from .node import Node, map_arg, qualified_name as _qualified_name

__all__ = ["Graph", "PythonCode"]

PythonCode = _codegen.PythonCode

_SUFFIX = re.compile(r"(.*)_(\d+)$")
_CAMEL = re.compile(r"(?<=[a-z0-9])([A-Z])")
# Names a node may not take: Python's keywords and builtins (the generated code calls
# `getattr`, `len`, ...), and the root modules the generated code names targets by.
_RESERVED = {"self", "operator", "builtins", "math", "ember_tensor", "ember_nn", "ember_fx", "torch", "inf", "nan"}


class _Namespace:
    """Unique, legal variable names: ``relu``, then ``relu_1``, ``relu_2``."""

    def __init__(self):
        self._used = set()
        self._base_count = {}

    def create_name(self, candidate):
        candidate = _codegen._identifier(_CAMEL.sub(r"_\1", candidate).lower())  # MyModule -> my_module
        match = _SUFFIX.match(candidate)
        base, number = (candidate, None) if match is None else (match.group(1), int(match.group(2)))
        name = candidate if number is None else f"{base}_{number}"
        number = number or self._base_count.get(base, 0)
        while name in self._used or self._illegal(name):
            number += 1
            name = f"{base}_{number}"
        self._used.add(name)
        self._base_count[base] = number
        return name

    @staticmethod
    def _illegal(name):
        return keyword.iskeyword(name) or hasattr(builtins, name) or name in _RESERVED

    def copy(self):
        other = _Namespace()
        other._used, other._base_count = set(self._used), dict(self._base_count)
        return other


class _NodeList:
    """The nodes of a graph in order: iterable (forwards and ``reversed``), with ``len``."""

    def __init__(self, graph, direction="_next"):
        self._graph = graph
        self._direction = direction

    def __len__(self):
        return self._graph._len

    def __iter__(self):
        root = self._graph._root
        node = getattr(root, self._direction)
        while node is not root:
            following = getattr(node, self._direction)  # the node may be erased while we stand on it
            if not node._erased:
                yield node
            node = following

    def __reversed__(self):
        return iter(_NodeList(self._graph, "_prev" if self._direction == "_next" else "_next"))

    def __repr__(self):
        return repr(list(self))


class Graph:
    """A program as nodes: inputs, calls and one output (see the module docstring).

    >>> import operator
    >>> g = Graph()
    >>> x = g.placeholder("x")
    >>> y = g.call_function(operator.add, (x, 1))
    >>> _ = g.output(y)
    >>> print(g)
    graph():
        %x : [num_users=1] = placeholder[target=x]
        %add : [num_users=1] = call_function[target=operator.add](args = (%x, 1), kwargs = {})
        return add
    """

    def __init__(self, owning_module=None, tracer_cls=None, tracer_extras=None):
        self._root = Node(self, "", "root", "", (), {})
        self._root._erased = True
        self._len = 0
        self._namespace = _Namespace()
        self._insert = self._root.prepend
        self._owning_module = owning_module
        self._tracer_cls = tracer_cls
        self._tracer_extras = tracer_extras

    @property
    def owning_module(self):
        """The GraphModule this graph belongs to (whose attributes its get_attr nodes read)."""
        return self._owning_module

    @owning_module.setter
    def owning_module(self, module):
        self._owning_module = module

    @property
    def nodes(self):
        """The nodes in order; ``reversed(graph.nodes)`` walks them backwards."""
        return _NodeList(self)

    # -- building -----------------------------------------------------------------------

    def create_node(self, op, target, args=None, kwargs=None, name=None, type_expr=None):
        """Create a node at the insertion point and return it.

        Args:
            op: the opcode (``call_function``, ...).
            target: what it calls or names.
            args, kwargs: its arguments, which may hold other nodes of this graph.
            name: a wish for its name; made unique (``relu`` -> ``relu_1``).
            type_expr: an annotation of its value.
        """
        candidate = name if name is not None else self._target_to_str(target)
        node = Node(self, self._namespace.create_name(candidate), op, target, args or (), kwargs or {}, type_expr)
        self._insert(node)
        self._len += 1
        return node

    @staticmethod
    def _target_to_str(target):
        if isinstance(target, str):
            return target.lstrip("*").replace(".", "_") or "_"
        return getattr(target, "__name__", None) or type(target).__name__

    def placeholder(self, name, type_expr=None, default_value=inspect.Signature.empty):
        """An input of the function called `name` (with a default value if given)."""
        args = () if default_value is inspect.Signature.empty else (default_value,)
        return self.create_node("placeholder", name, args, type_expr=type_expr)

    def get_attr(self, qualified_name, type_expr=None):
        """Read the owning module's attribute at dotted path `qualified_name`."""
        return self.create_node("get_attr", qualified_name, type_expr=type_expr)

    def call_module(self, module_name, args=None, kwargs=None, type_expr=None):
        """Call the owning module's submodule at dotted path `module_name`."""
        return self.create_node("call_module", module_name, args, kwargs, type_expr=type_expr)

    def call_method(self, method_name, args=None, kwargs=None, type_expr=None):
        """Call method `method_name` on ``args[0]`` with the rest of `args`."""
        return self.create_node("call_method", method_name, args, kwargs, type_expr=type_expr)

    def call_function(self, the_function, args=None, kwargs=None, type_expr=None):
        """Call the free function (or ember op) `the_function`."""
        return self.create_node("call_function", the_function, args, kwargs, type_expr=type_expr)

    def output(self, result, type_expr=None):
        """The value the function returns (`result` may nest nodes in tuples, lists, dicts)."""
        return self.create_node("output", "output", (result,), type_expr=type_expr)

    def output_node(self):
        """The output node (the last node)."""
        for node in reversed(self.nodes):
            if node.op == "output":
                return node
        raise RuntimeError("graph has no output node")

    def find_nodes(self, *, op, target=None, sort=True):
        """The nodes with opcode `op` (and `target`, if given), in graph order."""
        return [n for n in self.nodes if n.op == op and (target is None or n.target == target)]

    # -- where new nodes go --------------------------------------------------------------

    @contextlib.contextmanager
    def _inserting(self, insert):
        previous = self._insert
        self._insert = insert
        try:
            yield
        finally:
            self._insert = previous

    def inserting_before(self, n=None):
        """Context manager: nodes created inside it go just before `n` (at the start if None).

        >>> import operator
        >>> g = Graph(); x = g.placeholder("x"); out = g.output(x)
        >>> with g.inserting_before(out):
        ...     y = g.call_function(operator.neg, (x,))
        >>> [n.name for n in g.nodes]
        ['x', 'neg', 'output']
        """
        if n is None:
            return self.inserting_after(self._root)
        if n.graph is not self:
            raise AssertionError("Node to insert before is not in graph.")
        return self._inserting(n.prepend)

    def inserting_after(self, n=None):
        """Context manager: nodes created inside it go just after `n` (at the end if None).

        As in PyTorch, each new node goes right after `n`: several come out in reverse order.
        """
        if n is None:
            return self.inserting_before(self._root)
        if n.graph is not self:
            raise AssertionError("Node to insert after is not in graph.")
        return self._inserting(n.append)

    # -- editing ------------------------------------------------------------------------

    def erase_node(self, to_erase):
        """Remove a node that nobody uses any more."""
        if to_erase.users:
            raise RuntimeError(f"Tried to erase Node {to_erase} but it still had {len(to_erase.users)} "
                               f"users in the graph: {to_erase.users}!")
        if to_erase.graph is not self:
            raise RuntimeError(f"Attempting to remove {to_erase} from wrong graph!")
        if to_erase._erased:
            return
        to_erase._remove_from_list()
        to_erase._erased = True
        self._len -= 1
        to_erase._update_args_kwargs((), {})  # it no longer uses its inputs

    def eliminate_dead_code(self, is_impure_node=None):
        """Erase every node whose value nobody uses and that has no side effect.

        Returns whether the graph changed. `is_impure_node(node)` overrides the default
        test (``node.is_impure()``).
        """
        self.lint()
        changed = False
        for node in reversed(self.nodes):
            impure = is_impure_node(node) if is_impure_node is not None else node.is_impure()
            if not impure and not node.users:
                self.erase_node(node)
                changed = True
        return changed

    def node_copy(self, node, arg_transform=lambda x: x):
        """Copy a node of another graph into this one; `arg_transform` maps its input nodes
        to nodes of this graph."""
        args = map_arg(node.args, arg_transform)
        kwargs = map_arg(node.kwargs, arg_transform)
        result = self.create_node(node.op, node.target, args, kwargs, node.name, node.type)
        result.meta = copy.copy(node.meta)
        return result

    def graph_copy(self, g, val_map, return_output_node=False):
        """Copy every node of graph `g` but its output into this one.

        `val_map` maps `g`'s nodes to this graph's (pre-filled entries are not copied) and is
        filled in. Returns the copied output value (and the output node, if asked).
        """
        for node in g.nodes:
            if node in val_map:
                continue
            if node.op == "output":
                result = map_arg(node.args[0], lambda n: val_map[n])
                return (result, node) if return_output_node else result
            val_map[node] = self.node_copy(node, lambda n: val_map[n])
        return None

    def __getstate__(self):
        # The owning module is left out: a GraphModule pickles its graph, not the reverse.
        state = dict(self.__dict__)
        state["_owning_module"] = None
        return state

    def __deepcopy__(self, memo=None):
        memo = memo if memo is not None else {}
        g = Graph(tracer_cls=self._tracer_cls)
        copied = g.graph_copy(self, val_map=memo, return_output_node=True)
        if copied is not None:
            value, old_output = copied
            new_output = g.output(value, type_expr=old_output.type)
            new_output.meta = copy.copy(old_output.meta)
        return g

    # -- checking and printing ----------------------------------------------------------

    def lint(self):
        """Check the graph: every input defined before use, names unique, use lists
        consistent, and get_attr/call_module targets present in the owning module."""
        seen, names = set(), set()
        for node in self.nodes:
            if node.graph is not self:
                raise RuntimeError(f"Node '{node}' does not belong to this Graph!")
            if node.name in names:
                raise RuntimeError(f"Node redefined name {node.name}!")
            names.add(node.name)
            for used in node.all_input_nodes:
                if used not in seen:
                    if used.graph is not self or used._erased:
                        raise RuntimeError(f"Argument '{used}' of Node '{node}' was used before it has "
                                           "been defined! Please check that Nodes in the graph are "
                                           "topologically ordered")
                    raise RuntimeError(f"Argument '{used}' of Node '{node}' was used before it has been "
                                       f"defined! Please check that Nodes in the graph are topologically "
                                       f"ordered\n{self}")
                if node not in used.users:
                    raise RuntimeError(f"Node '{node}' uses '{used}', which does not list it among its users")
            seen.add(node)
        if self._owning_module is not None:
            for node in self.nodes:
                if node.op in ("get_attr", "call_module"):
                    self._check_target(node)

    def _check_target(self, node):
        *prefix, field = node.target.split(".")
        module = self._owning_module
        for i, atom in enumerate(prefix):
            if not hasattr(module, atom):
                raise RuntimeError(f"Node {node} target {node.target} references nonexistent attribute "
                                   f"{atom} of {'.'.join(prefix[:i]) or 'the root'}")
            module = getattr(module, atom)
        if not hasattr(module, field):
            raise RuntimeError(f"Node {node} target {node.target} references nonexistent attribute "
                               f"{field} of {'.'.join(prefix) or 'the root'}")
        if node.op == "call_module" and not callable(getattr(module, field)):
            raise RuntimeError(f"Node {node} target {node.target} {field} is not a Module")

    def python_code(self, root_module="self"):
        """The source of ``forward`` for this graph and the globals it runs in (a PythonCode)."""
        return _codegen.python_code(self)

    def __str__(self):
        placeholders, return_type = [], [""]
        lines = [node.format_node(placeholders, return_type) for node in self.nodes]
        return f"graph(){return_type[0]}:\n" + "".join(f"    {line}\n" for line in lines).rstrip("\n")

    def print_tabular(self):
        """Print the nodes as a table (opcode, name, target, args, kwargs).

        Uses ``tabulate`` where it is installed, as PyTorch does; a plain table otherwise.
        """
        rows = [[n.op, n.name, n.target if isinstance(n.target, str) else _qualified_name(n.target),
                 n.args, n.kwargs] for n in self.nodes]
        headers = ["opcode", "name", "target", "args", "kwargs"]
        try:
            from tabulate import tabulate  # optional, as in PyTorch: only the printout's look depends on it
        except ImportError:
            print(_plain_table(headers, rows))
        else:
            print(tabulate(rows, headers=headers))


def _plain_table(headers, rows):
    cells = [[str(c) for c in row] for row in [headers, *rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)
