"""ember-fx: ``torch.fx`` for ember — symbolic tracing, graph rewriting, interpreters.

``symbolic_trace(model)`` runs the model's ``forward`` on Proxies and returns a
``GraphModule``: a Module whose ``forward`` is Python code generated from a ``Graph`` of
``Node``\\ s, with the model's submodules and parameters under the same names. Edit the
graph (``graph.inserting_after``, ``node.replace_all_uses_with``, ``graph.erase_node``,
``subgraph_rewriter.replace_pattern``), call ``recompile()``, and the module runs the new
program; ``Interpreter``/``Transformer`` run or rewrite a graph node by node;
``passes.shape_prop.ShapeProp`` records each value's shape and dtype.

>>> import ember_tensor as torch
>>> import ember_nn as nn
>>> class Net(nn.Module):
...     def __init__(self):
...         super().__init__()
...         self.linear = nn.Linear(4, 2)
...     def forward(self, x):
...         return torch.relu(self.linear(x))
>>> gm = symbolic_trace(Net())
>>> [(n.op, str(n.target)) for n in gm.graph.nodes]
[('placeholder', 'x'), ('call_module', 'linear'), ('call_function', '<ember op relu>'), ('output', 'output')]
"""
import ember_nn  # noqa: F401
import ember_tensor  # noqa: F401
from ember_tensor.version import check_layers

__version__ = "0.1.0"

_NEEDED_BY = f"ember-fx {__version__}"
check_layers(__file__, _NEEDED_BY)

from . import graph, graph_module, immutable_collections, interpreter, node, passes, proxy, subgraph_rewriter  # noqa: E402,E501
from ._symbolic_trace import PH, Tracer, symbolic_trace, wrap  # noqa: E402
from .graph import Graph  # noqa: E402
from .graph_module import GraphModule  # noqa: E402
from .interpreter import Interpreter, Transformer  # noqa: E402
from .node import Node, has_side_effect, map_arg  # noqa: E402
from .proxy import Proxy, TraceError  # noqa: E402
from .subgraph_rewriter import replace_pattern  # noqa: E402

__all__ = ["symbolic_trace", "Tracer", "wrap", "PH", "Graph", "GraphModule", "Node", "Proxy", "TraceError",
           "Interpreter", "Transformer", "map_arg", "has_side_effect", "replace_pattern", "graph", "graph_module",
           "immutable_collections", "interpreter", "node", "passes", "proxy", "subgraph_rewriter"]
