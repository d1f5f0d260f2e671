"""``replace_pattern``: find a subgraph by example and put another in its place
(``torch.fx.subgraph_rewriter``).

The pattern and the replacement are functions (or GraphModules) with the same inputs.
The pattern is traced, and every place in the graph that computes the same thing — same
ops and targets, same constants, the inputs in the same roles — is replaced by the
replacement's nodes, wired to the nodes that matched the pattern's inputs. A match whose
intermediate values are used outside it is skipped: replacing it would change them.
"""
from collections import namedtuple

from ._symbolic_trace import symbolic_trace
from .graph_module import GraphModule, _copy_attr
from .node import Node

__all__ = ["Match", "replace_pattern"]

Match = namedtuple("Match", ["anchor", "nodes_map"])
Match.__doc__ = """A replaced match: `anchor` is the pattern's output node, `nodes_map` maps
each pattern node to the graph node it matched."""


def _as_graph_module(fn):
    return fn if isinstance(fn, GraphModule) else symbolic_trace(fn)


class _Matcher:
    """Matches the pattern backwards from its output, one graph position at a time."""

    def __init__(self, pattern_graph):
        outputs = [n for n in pattern_graph.nodes if n.op == "output"]
        anchor = outputs[0].args[0]
        if not isinstance(anchor, Node):
            raise ValueError("replace_pattern needs a pattern that returns a single computed value")
        self.anchor = anchor
        self.placeholders = [n for n in pattern_graph.nodes if n.op == "placeholder"]

    def match_at(self, node):
        """The pattern -> graph node map of a match whose output is `node`, or None."""
        mapping = {}
        if not self._match_node(self.anchor, node, mapping):
            return None
        inner = [mapping[p] for p in mapping if p.op != "placeholder"]
        if len(set(inner)) != len(inner):
            return None
        inside = set(inner)
        for pattern_node, graph_node in mapping.items():
            if pattern_node.op == "placeholder" or pattern_node is self.anchor:
                continue
            if any(user not in inside for user in graph_node.users):
                return None  # an intermediate value escapes the match
        return mapping

    def _match_node(self, pn, gn, mapping):
        if pn in mapping:
            return mapping[pn] is gn
        if pn.op == "placeholder":
            mapping[pn] = gn
            return True
        if pn.op != gn.op or (pn.op != "get_attr" and pn.target != gn.target):
            return False
        if len(pn.args) != len(gn.args) or pn.kwargs.keys() != gn.kwargs.keys():
            return False
        saved = dict(mapping)
        mapping[pn] = gn
        pairs = list(zip(pn.args, gn.args)) + [(pn.kwargs[k], gn.kwargs[k]) for k in pn.kwargs]
        if all(self._match_arg(pa, ga, mapping) for pa, ga in pairs):
            return True
        mapping.clear()
        mapping.update(saved)
        return False

    def _match_arg(self, pa, ga, mapping):
        if isinstance(pa, Node):
            return isinstance(ga, Node) and self._match_node(pa, ga, mapping)
        if isinstance(pa, (tuple, list)):
            return (isinstance(ga, (tuple, list)) and len(pa) == len(ga)
                    and all(self._match_arg(a, b, mapping) for a, b in zip(pa, ga)))
        if isinstance(pa, dict):
            return (isinstance(ga, dict) and pa.keys() == ga.keys()
                    and all(self._match_arg(pa[k], ga[k], mapping) for k in pa))
        return not isinstance(ga, Node) and type(pa) is type(ga) and pa == ga


def replace_pattern(gm, pattern, replacement):
    """Replace every match of `pattern` in `gm`'s graph by `replacement`; recompiles `gm`.

    Args:
        gm: the GraphModule to rewrite, in place.
        pattern: a function (or GraphModule) computing the subgraph to find.
        replacement: a function (or GraphModule) with the same inputs, computing what to
            put instead.

    Returns:
        The list of ``Match(anchor, nodes_map)`` that were replaced.

    >>> import ember_tensor as torch
    >>> from ember_fx import symbolic_trace
    >>> gm = symbolic_trace(lambda x: torch.relu(x) + torch.relu(x + 1))
    >>> matches = replace_pattern(gm, lambda x: torch.relu(x), lambda x: torch.sigmoid(x))
    >>> len(matches), "relu" in gm.code
    (2, False)
    """
    pattern_gm, replacement_gm = _as_graph_module(pattern), _as_graph_module(replacement)
    matcher = _Matcher(pattern_gm.graph)
    replacement_placeholders = [n for n in replacement_gm.graph.nodes if n.op == "placeholder"]
    if len(replacement_placeholders) != len(matcher.placeholders):
        raise ValueError(f"pattern takes {len(matcher.placeholders)} inputs but replacement takes "
                         f"{len(replacement_placeholders)}")
    graph = gm.graph
    matches, taken = [], set()
    for node in graph.nodes:
        mapping = matcher.match_at(node)
        if mapping is None:
            continue
        inner = {mapping[p] for p in mapping if p.op != "placeholder"}
        if inner & taken:
            continue
        taken |= inner
        matches.append(Match(anchor=matcher.anchor, nodes_map=mapping))

    replaced = {}  # an erased anchor -> the value that took its place (later matches may read it)
    for match in matches:
        mapping = match.nodes_map
        anchor = mapping[matcher.anchor]
        inputs = {}
        for pattern_input, replacement_input in zip(matcher.placeholders, replacement_placeholders):
            value = mapping[pattern_input]
            while value in replaced:
                value = replaced[value]
            inputs[replacement_input] = value
        with graph.inserting_before(anchor):
            result = graph.graph_copy(replacement_gm.graph, inputs)
        anchor.replace_all_uses_with(result)
        replaced[anchor] = result
        for pattern_node in reversed(list(pattern_gm.graph.nodes)):
            if pattern_node.op not in ("placeholder", "output") and pattern_node in mapping:
                graph.erase_node(mapping[pattern_node])
        for node in replacement_gm.graph.nodes:
            if node.op in ("get_attr", "call_module"):
                _copy_attr(replacement_gm, gm, node.target)
    gm.recompile()
    return matches
