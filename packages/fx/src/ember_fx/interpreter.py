"""Interpreter and Transformer: run a graph node by node (``torch.fx.interpreter``).

``Interpreter.run`` executes a GraphModule's graph one node at a time, calling the method
named after each node's op (``placeholder``, ``call_function``, ...); subclasses override
those to change what a node does (count ops, substitute functions, record values).
``Transformer`` runs the same way on Proxies and so builds a new graph: override its
methods to rewrite nodes as they are copied.
"""
import inspect

from .graph import Graph
from .graph_module import GraphModule
from .node import map_aggregate, map_arg
from .proxy import Proxy, TracerBase

__all__ = ["Interpreter", "Transformer"]


class Interpreter:
    """Runs the graph of `module` node by node.

    Args:
        module: the GraphModule to run (its attributes are what get_attr/call_module read).
        garbage_collect_values: free each value after its last use.
        graph: a graph to run instead of ``module.graph``.

    >>> import ember_tensor as torch
    >>> from ember_fx import symbolic_trace
    >>> gm = symbolic_trace(lambda x: torch.relu(x) * 2)
    >>> class NegateRelu(Interpreter):
    ...     def call_function(self, target, args, kwargs):
    ...         if target is torch.relu:
    ...             return torch.neg(*args)
    ...         return super().call_function(target, args, kwargs)
    >>> NegateRelu(gm).run(torch.tensor([-1., 2.])).tolist()
    [2.0, -4.0]
    """

    def __init__(self, module, garbage_collect_values=True, graph=None):
        self.module = module
        self.graph = graph if graph is not None else module.graph
        self.submodules = dict(module.named_modules())
        self.env = {}
        self.garbage_collect_values = garbage_collect_values
        self.extra_traceback = True
        # For each node, the values whose last use it is.
        self.user_to_last_uses = {node: [] for node in self.graph.nodes}
        seen = set()
        for node in reversed(self.graph.nodes):
            for used in node.all_input_nodes:
                if used not in seen:
                    seen.add(used)
                    self.user_to_last_uses[node].append(used)

    def run(self, *args, initial_env=None, enable_io_processing=True):
        """Run the graph on `args` and return what its output node returns.

        `initial_env` maps nodes to values known in advance (those nodes are not run).
        """
        self.env = dict(initial_env) if initial_env is not None else {}
        self.args_iter = iter(args)
        for node in self.graph.nodes:
            if node in self.env:
                continue
            try:
                self.env[node] = self.run_node(node)
            except Exception as error:
                if self.extra_traceback and not getattr(error, "_fx_node_noted", False):
                    note = f"While executing {node.format_node()}"
                    if hasattr(error, "add_note"):
                        error.add_note(note)
                    error._fx_node_noted = True
                raise
            if self.garbage_collect_values:
                for freed in self.user_to_last_uses[node]:
                    self.env.pop(freed, None)
            if node.op == "output":
                return self.env[node]
        return None

    def boxed_run(self, args_list):
        """``run(*args_list)`` that empties `args_list` first, so that the caller's list no
        longer keeps the inputs alive while the graph runs."""
        args = list(args_list)
        args_list.clear()
        return self.run(*args)

    def run_node(self, n):
        """Run node `n`: fetch its arguments' values, then call the method of its op."""
        args, kwargs = self.fetch_args_kwargs_from_env(n)
        return getattr(self, n.op)(n.target, args, kwargs)

    # -- one method per op --------------------------------------------------------------

    def placeholder(self, target, args, kwargs):
        """The next input (all remaining ones for ``*args``), or the default value."""
        if target.startswith("**"):
            return {}
        if target.startswith("*"):
            return list(self.args_iter)
        try:
            return next(self.args_iter)
        except StopIteration:
            if args:
                return args[0]
            raise RuntimeError(f"Expected positional argument for parameter {target}, but one was not "
                               "passed in!") from None

    def get_attr(self, target, args, kwargs):
        """The module's attribute at dotted path `target`."""
        return self.fetch_attr(target)

    def call_function(self, target, args, kwargs):
        """``target(*args, **kwargs)``."""
        return target(*args, **kwargs)

    def call_method(self, target, args, kwargs):
        """``args[0].target(*args[1:], **kwargs)``."""
        receiver, *rest = args
        return getattr(receiver, target)(*rest, **kwargs)

    def call_module(self, target, args, kwargs):
        """Call the submodule at dotted path `target`."""
        return self.fetch_attr(target)(*args, **kwargs)

    def output(self, target, args, kwargs):
        """The returned value."""
        return args[0]

    # -- helpers ------------------------------------------------------------------------

    def fetch_attr(self, target):
        """The attribute of ``self.module`` at dotted path `target`."""
        value = self.module
        for i, atom in enumerate(target.split(".")):
            if not hasattr(value, atom):
                raise RuntimeError(f"Node referenced nonexistent target {'.'.join(target.split('.')[:i + 1])}")
            value = getattr(value, atom)
        return value

    def fetch_args_kwargs_from_env(self, n):
        """`n`'s args and kwargs with each node replaced by its value."""
        return self.map_nodes_to_values(n.args, n), self.map_nodes_to_values(n.kwargs, n)

    def map_nodes_to_values(self, args, n):
        """`args` with every node replaced by its computed value (for node `n`)."""
        def value_of(node):
            if node not in self.env:
                raise RuntimeError(f"Node {n} referenced nonexistent value {node}! Run Graph.lint() "
                                   "to diagnose such issues")
            return self.env[node]

        return map_arg(args, value_of)


class _TransformerTracer(TracerBase):
    """Appends the Transformer's nodes to its new graph."""

    def __init__(self, graph, root):
        self.graph = graph
        self.root = root


class Transformer(Interpreter):
    """Copies a GraphModule's graph node by node into a new GraphModule.

    Each op method returns a Proxy in the new graph; override one to emit something else.
    ``transform()`` returns the new GraphModule.

    >>> import ember_tensor as torch
    >>> from ember_fx import symbolic_trace
    >>> gm = symbolic_trace(lambda x: torch.relu(x) + 1)
    >>> class ReluToSigmoid(Transformer):
    ...     def call_function(self, target, args, kwargs):
    ...         return super().call_function(torch.sigmoid if target is torch.relu else target, args, kwargs)
    >>> ReluToSigmoid(gm).transform()(torch.tensor([0.])).tolist()
    [1.5]
    """

    def __init__(self, module):
        super().__init__(module)
        self.new_graph = Graph()
        self.tracer = _TransformerTracer(self.new_graph, module)

    def placeholder(self, target, args, kwargs):
        default = args[0] if args else inspect.Signature.empty
        return Proxy(self.new_graph.placeholder(target, default_value=default), self.tracer)

    def get_attr(self, target, args, kwargs):
        return self.tracer.create_proxy("get_attr", target, args, kwargs)

    def call_module(self, target, args, kwargs):
        return self.tracer.create_proxy("call_module", target, args, kwargs)

    def call_function(self, target, args, kwargs):
        return self.tracer.create_proxy("call_function", target, args, kwargs)

    def call_method(self, target, args, kwargs):
        return self.tracer.create_proxy("call_method", target, args, kwargs)

    def transform(self):
        """Run the copy and return the new GraphModule."""
        result = super().run(enable_io_processing=False)
        if result is not None:
            self.new_graph.output(map_aggregate(result, lambda v: v.node if isinstance(v, Proxy) else v))
        return GraphModule(self.module, self.new_graph)
