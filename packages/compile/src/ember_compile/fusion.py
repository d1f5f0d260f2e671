"""Fusion: chains of elementwise nodes of a captured graph become one generated kernel.

`fuse(gm)` finds groups and rewrites the graph so that each group is one
``call_function`` of a `FusedGroup` (printed ``fused_0 = fused_0(x, y, z)``). A group is
a tree of elementwise nodes (add, sub, mul, div, neg, relu, sigmoid, tanh, exp, log,
where, comparisons, ... with Python numbers as constants) whose intermediate values are
used only inside it, so it has one result; matmul, convolution, reductions and every other
node stay ember's ops. Groups of one node are left alone (the eager op is already one
kernel).

A `FusedGroup` knows nothing of shapes or dtypes at compile time: it decides per call.
Tensors of one float dtype (float32/float64) on one device run its
``ember_tensor.fusion.FusedElementwise`` program — one generated Numba loop, the built-in
kernels' generator, each intermediate rounded as the eager op stores it, so results are
eager ember's bit for bit; anything else (integer tensors, mixed dtypes, Python numbers
where a tensor was traced) runs the group's eager composition.

Autograd: when a gradient is needed the group is one `ember_autograd.Function`. Its
backward recomputes the group's eager composition from the saved inputs under autograd
and differentiates it (``autograd.grad``): the gradients are those of ember's derivative
table, un-broadcasting included, and saved-tensor version checks apply. The intermediate
values are never stored (recomputed in backward, as PyTorch's compiler does for cheap
pointwise ops).
"""
import operator

import ember_autograd
import ember_nn.functional as F
from ember_autograd import Function
from ember_fx import Graph, GraphModule, Node
from ember_nn import Module
from ember_tensor import fusion as _fusion
from ember_tensor import dispatch
from ember_tensor.dispatch import Operator

from .capture import switches_grad_mode

__all__ = ["fuse", "FusedGroup", "fusible_op", "scalar_args", "replace_with_group", "grow_tree"]

_OPERATORS = {operator.add: "add", operator.sub: "sub", operator.mul: "mul", operator.truediv: "div",
              operator.neg: "neg", operator.gt: "gt", operator.lt: "lt", operator.ge: "ge", operator.le: "le",
              operator.eq: "eq", operator.ne: "ne"}
_FUNCTIONAL = {F.relu: "relu", F.sigmoid: "sigmoid", F.tanh: "tanh"}
# The tensor methods and ember ops (by name) that are one scalar function.
_NAMED = {name: name for name in _fusion.OPS} | {"true_divide": "div", "greater": "gt", "less": "lt",
                                                 "negative": "neg", "multiply": "mul", "subtract": "sub"}
_MODULES = {"ReLU": "relu", "Sigmoid": "sigmoid", "Tanh": "tanh"}


def _is_constant(a):
    return isinstance(a, (int, float)) and not isinstance(a, bool)


def fusible_op(node, root_module):
    """The scalar function `node` applies elementwise, or None when it is not fusible."""
    kwargs = dict(node.kwargs)
    if node.op == "call_function":
        target = node.target
        if target in _FUNCTIONAL and kwargs.pop("inplace", False) is False:
            name = _FUNCTIONAL[target]
        elif isinstance(target, Operator) and not target.inplace:
            name = _NAMED.get(target.name)
        else:
            name = _OPERATORS.get(target) if not isinstance(target, Operator) else None
    elif node.op == "call_method":
        name = _NAMED.get(node.target)
    elif node.op == "call_module":
        module = root_module.get_submodule(node.target)
        name = _MODULES.get(type(module).__name__) if type(module).__module__.startswith("ember_nn") else None
        if getattr(module, "inplace", False):
            name = None
    else:
        return None
    if name is None and _is_square(node):
        name = "square"
    if name is None or kwargs:
        return None
    args = scalar_args(node, name)
    arity = 1 if name in _fusion.UNARY else 2 if name in _fusion.BINARY else 3
    if len(args) != arity or not all(isinstance(a, Node) or _is_constant(a) for a in args):
        return None
    if not any(isinstance(a, Node) for a in args):
        return None
    return name


def _is_square(node):
    """``x ** 2`` (operator, method or op): eager ember computes it as ``x * x``, `square`."""
    target = node.target
    is_pow = target is operator.pow if node.op == "call_function" and not isinstance(target, Operator) else \
        target == "pow" if node.op == "call_method" else \
        isinstance(target, Operator) and target.name == "pow" and not target.inplace
    return is_pow and len(node.args) == 2 and isinstance(node.args[0], Node) and \
        node.args[1].__class__ in (int, float) and node.args[1] == 2


def scalar_args(node, name):
    """The arguments of `node`'s scalar function `name` (``x ** 2`` is ``square(x)``)."""
    return node.args[:1] if name == "square" and len(node.args) == 2 else node.args


class _FusedFunction(Function):
    """A fused group as one autograd node; backward differentiates its eager composition."""

    @staticmethod
    def forward(ctx, group, dtype, *inputs):
        ctx.group = group
        ctx.save_for_backward(*inputs)
        return group.program(*inputs, dtype=dtype)

    @staticmethod
    def backward(ctx, grad):
        inputs = ctx.saved_tensors
        needs = ctx.needs_input_grad[2:]
        create_graph = ember_autograd.is_grad_enabled()  # backward(create_graph=True)
        with ember_autograd.enable_grad():
            # Differentiating the gradient again (create_graph) needs it built from the
            # inputs themselves, still attached to the graph; otherwise detached copies
            # keep this recomputation apart from the program's graph.
            leaves = inputs if create_graph else \
                [x.detach().requires_grad_(bool(need)) for x, need in zip(inputs, needs)]
            result = ctx.group.eager.forward(*leaves)
            wanted = [leaf for leaf, need in zip(leaves, needs) if need]
            grads = iter(ember_autograd.grad(result, wanted, grad, allow_unused=True, create_graph=create_graph))
        return (None, None, *(next(grads) if need else None for need in needs))


class FusedGroup:
    """The callable a fused group's node calls: its kernel, or its eager composition.

    Attributes:
        program: the ``ember_tensor.fusion.FusedElementwise`` of the group.
        eager: a GraphModule computing the group with ember's ops (fallback, backward).
        calls: how many calls ran the fused kernel (the tests count them).
    """

    def __init__(self, name, program, eager):
        self.__name__ = self.__qualname__ = name
        self.__module__ = __name__
        self.program = program
        self.eager = eager
        self.calls = 0
        # Set by `memory_planning`: which input's memory the result may be written into,
        # and whether a new result may take the memory of the previous call's dead one.
        self.reuse = None
        self.recycle = False
        self.in_place_calls = 0

    def __call__(self, *inputs):
        program = self.program
        # A trace (a joint plan's lowering, an export) records the group's ember ops.
        dtype = None if dispatch.is_tracing() else program.compute_dtype(inputs)
        recorded = dtype is not None and not program.result_is_bool and ember_autograd.is_grad_enabled() and \
            any(t.requires_grad for t in inputs)
        # A group of one op (a product's epilogue, `memory_planning`) gains nothing over the
        # eager op and its own backward node when autograd records it.
        if dtype is None or (recorded and len(program.steps) == 1):
            return self.eager.forward(*inputs)
        self.calls += 1
        if recorded:
            return _FusedFunction.apply(self, dtype, *inputs)
        # No autograd node saves the inputs here, so a dead input's memory may take the result.
        reuse = self.reuse.input_index(inputs) if self.reuse is not None else None
        if reuse is None:  # (a fused reduction's program takes no `reuse` nor `recycle`)
            return program(*inputs, dtype=dtype, recycle=True) if self.recycle else program(*inputs, dtype=dtype)
        result = program(*inputs, dtype=dtype, reuse=reuse, recycle=self.recycle)
        if result is inputs[reuse]:
            self.in_place_calls += 1
        return result

    def __repr__(self):
        return f"<fused group {self.__name__}: {len(self.program.steps)} ops>"


def _groups(graph, root_module):
    """Groups of fusible nodes (lists in graph order), each with one result, found from
    the graph's end: a node joins its consumer's group when all its users are in it."""
    ops = {node: fusible_op(node, root_module) for node in graph.nodes}
    position = {node: i for i, node in enumerate(graph.nodes)}
    taken, groups = set(), []
    for node in reversed(list(graph.nodes)):
        if node in taken or ops[node] is None:
            continue
        members = grow_tree(node, ops, taken)
        if len(members) > 1:
            taken |= members
            groups.append(sorted(members, key=position.__getitem__))
    return groups[::-1], ops


def grow_tree(root, ops, taken):
    """The fusible nodes whose result is `root`: `root`, and each fusible node not `taken`
    whose users are all in the tree, to a fixed point (a diamond's shared input joins after
    both arms)."""
    members, changed = {root}, True
    while changed:
        changed = False
        for member in list(members):
            for source in member.all_input_nodes:
                if source in members or source in taken or ops[source] is None:
                    continue
                if all(user in members for user in source.users):
                    members.add(source)
                    changed = True
    return members


def _program(members, ops, name):
    """The group's FusedElementwise, its input nodes, and its eager composition."""
    inputs, steps, index = [], [], {}
    for node in members:
        args = []
        for a in scalar_args(node, ops[node]):
            if isinstance(a, Node) and a in index:
                args.append(("step", index[a]))
            elif isinstance(a, Node):
                if a not in inputs:
                    inputs.append(a)
                args.append(("in", inputs.index(a)))
            else:
                args.append(a)
        index[node] = len(steps)
        steps.append((ops[node], args))
    program = _fusion.FusedElementwise(steps, len(inputs), name=name)
    graph = Graph()
    env = {a: graph.placeholder(a.name) for a in inputs}
    for node in members:
        env[node] = graph.node_copy(node, env.__getitem__)
    graph.output(env[members[-1]])
    return program, inputs, graph


def fuse(gm):
    """Fuse `gm`'s elementwise groups in place and return them.

    Args:
        gm: a captured GraphModule (its code is regenerated).

    Returns:
        The `FusedGroup`\\ s, in graph order (none in a graph that switches grad mode: a
        group must not span the edge of a ``no_grad`` block).
    """
    if switches_grad_mode(gm.graph):
        return []
    groups, ops = _groups(gm.graph, gm)
    fused = [replace_with_group(gm, members, ops, f"fused_{number}") for number, members in enumerate(groups)]
    if fused:
        gm.recompile()
    return fused


def replace_with_group(gm, members, ops, name):
    """Replace `members` (fusible nodes of `gm`'s graph in graph order, one result: the
    last) by one call of a new `FusedGroup` named `name`, and return the group.

    Args:
        gm: the GraphModule (its code is not regenerated: call ``gm.recompile()``).
        members: the group's nodes.
        ops: each member's scalar function name (`fusible_op`'s answer).
    """
    program, inputs, graph = _program(members, ops, name)
    # The eager composition calls the same submodules (nn.ReLU) as the captured graph.
    eager = GraphModule(gm, graph, name) if any(n.op == "call_module" for n in members) \
        else GraphModule(Module(), graph, name)
    group = FusedGroup(name, program, eager)
    root = members[-1]
    with gm.graph.inserting_before(root):
        call = gm.graph.call_function(group, tuple(inputs))
    root.replace_all_uses_with(call)
    for node in reversed(members):
        gm.graph.erase_node(node)
    return group
