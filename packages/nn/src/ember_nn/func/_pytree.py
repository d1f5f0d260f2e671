"""Pytrees: nested tuples, lists, dicts and namedtuples of leaves, flattened and rebuilt.

torch.func's transforms take and return pytrees (a dict of parameters, a tuple of outputs);
``in_dims``/``out_dims`` are prefixes of them. The spec's repr is PyTorch's
(``TreeSpec(tuple, None, [*, *])``) because its errors print it.
"""
from collections import OrderedDict

__all__ = ["TreeSpec", "LEAF", "tree_flatten", "tree_unflatten", "tree_map", "broadcast_to_and_flatten",
           "treespec_pprint"]


def _is_namedtuple(value):
    return isinstance(value, tuple) and hasattr(type(value), "_fields")


def _children(tree):
    """(children, context) of a container node, or None for a leaf (None is a leaf, as in PyTorch)."""
    kind = type(tree)
    if kind in (tuple, list) or _is_namedtuple(tree):
        return list(tree), None
    if kind in (dict, OrderedDict):
        keys = list(tree)
        return [tree[k] for k in keys], keys
    return None


class TreeSpec:
    """The structure of a pytree: a node's type, its context (dict keys) and its children's specs."""

    def __init__(self, kind, context, children):
        self.type = kind
        self.context = context
        self.children = children
        self.num_leaves = sum(child.num_leaves for child in children)

    def is_leaf(self):
        return False

    def rebuild(self, values):
        if self.type in (dict, OrderedDict):
            return self.type(zip(self.context, values))
        if self.type in (tuple, list):
            return self.type(values)
        return self.type(*values)  # a namedtuple

    def __eq__(self, other):
        return (isinstance(other, TreeSpec) and not other.is_leaf() and self.type is other.type
                and self.context == other.context and self.children == other.children)

    def __repr__(self, indent=0):
        inner = ""
        if self.children:
            indent += 2
            inner = ",".join([self.children[0].__repr__(indent)]
                             + ["\n" + " " * indent + child.__repr__(indent) for child in self.children[1:]])
        return f"TreeSpec({self.type.__name__}, {self.context}, [{inner}])"


class _LeafSpec(TreeSpec):
    def __init__(self):
        super().__init__(None, None, [])
        self.num_leaves = 1

    def is_leaf(self):
        return True

    def __eq__(self, other):
        return isinstance(other, _LeafSpec)

    def __repr__(self, indent=0):
        return "*"


LEAF = _LeafSpec()


def tree_flatten(tree):
    """``(leaves, spec)``: the leaves left to right (dicts in insertion order) and the structure."""
    leaves = []

    def walk(node):
        found = _children(node)
        if found is None:
            leaves.append(node)
            return LEAF
        children, context = found
        return TreeSpec(type(node), context, [walk(child) for child in children])

    spec = walk(tree)
    return leaves, spec


def tree_unflatten(leaves, spec):
    """The pytree of structure `spec` holding `leaves` (the inverse of tree_flatten)."""
    leaves = iter(leaves)

    def build(node_spec):
        if node_spec.is_leaf():
            return next(leaves)
        return node_spec.rebuild([build(child) for child in node_spec.children])

    return build(spec)


def tree_map(fn, tree):
    """The same structure with ``fn`` applied to every leaf."""
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(leaf) for leaf in leaves], spec)


def broadcast_to_and_flatten(prefix, spec):
    """One value per leaf of `spec`: each leaf of `prefix` (a prefix of spec's structure, as
    ``in_dims`` is of the inputs) repeated over the subtree it stands for; None if `prefix`
    does not fit."""
    found = _children(prefix)
    if found is None:
        return [prefix] * spec.num_leaves
    if spec.is_leaf():
        return None
    children, context = found
    if type(prefix) is not spec.type or context != spec.context or len(children) != len(spec.children):
        return None
    flat = []
    for child, child_spec in zip(children, spec.children):
        part = broadcast_to_and_flatten(child, child_spec)
        if part is None:
            return None
        flat.extend(part)
    return flat


class _Asterisk:
    def __repr__(self):
        return "*"


def treespec_pprint(spec):
    """The structure written as a pytree of ``*`` (PyTorch's errors say ``(*, *)``)."""
    return repr(tree_unflatten([_Asterisk()] * spec.num_leaves, spec))
