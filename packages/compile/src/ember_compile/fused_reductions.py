"""Reduction prologues: an elementwise group whose one consumer is a reduction fuses into it.

`fuse_reductions(gm)` runs before `fusion.fuse`. For each `sum`, `mean`, `amax` or `amin`
node (tensor method, ember op; over every dim or given dims, ``keepdim`` either way,
no ``dtype``) whose input is an elementwise node used by nothing else, it gathers the
elementwise tree behind it as `fusion` does (every node whose users are all in the tree)
and replaces tree and reduction with one ``call_function`` of a `FusedGroup` whose
program is an ``ember_tensor.fusion.FusedReduction``: one generated loop that computes
the tree per element and reduces it at once, so the tree's result is never stored
(``((x - y) ** 2).mean()``, ``(x * w).sum(-1)``, ``x.exp().sum(dim=1)``; a single
elementwise node counts).

`fuse_reduction_epilogues(gm)` then extends each such group with the chain of
elementwise nodes applied to its result alone (constants aside, each the only user of
the one before): ``((x - y) ** 2).mean().sqrt()``, ``(x * w).sum(-1) * 2 + 1``. The
chain becomes the ``FusedReduction``'s epilogue, run on each reduced value (rounded to
the dtype as eager stores it) in the same kernel before it is stored.

It is a `FusedGroup` like any other: per call, float32/float64 tensors on one device (CPU
or CUDA) of a non-empty broadcast shape run the kernel; anything else (other dtypes,
empty inputs, dims the eager op refuses) runs the group's eager composition — the tree's ops, then the
reduction — which also raises eager's errors. Autograd and the ahead-of-time backward's
lowering (which records that eager composition) are `FusedGroup`'s.
"""
from ember_fx import Graph, GraphModule, Node
from ember_nn import Module
from ember_tensor import fusion as _fusion
from ember_tensor.dispatch import Operator

from .capture import switches_grad_mode
from .fusion import FusedGroup, _program, fusible_op, grow_tree

__all__ = ["fuse_reductions", "fuse_reduction_epilogues", "fuse_prologues", "reduction_of"]

# Parameter names after the input, in the eager ops' order.
_SIGNATURE = ("dim", "keepdim")


def reduction_of(node):
    """(kind, dim, keepdim) when `node` is a fusible reduction of its first argument, else None."""
    if node.op == "call_method":
        name = node.target
    elif node.op == "call_function" and isinstance(node.target, Operator) and not node.target.inplace:
        name = node.target.name
    else:
        return None
    if name not in _fusion.REDUCTIONS or not node.args or not isinstance(node.args[0], Node):
        return None
    if len(node.args) > 1 + len(_SIGNATURE):
        return None
    given = dict(zip(_SIGNATURE, node.args[1:]))
    for key, value in node.kwargs.items():
        if key in given or key not in (*_SIGNATURE, "dtype"):
            return None  # out=, a repeated argument: the eager op's business
        if key == "dtype":
            if value is not None:
                return None
            continue
        given[key] = value
    dim, keepdim = given.get("dim", () if name in ("amax", "amin") else None), given.get("keepdim", False)
    if not isinstance(keepdim, bool) or isinstance(dim, Node):
        return None
    if isinstance(dim, list):
        dim = tuple(dim)
    if not (dim is None or isinstance(dim, int) or
            (isinstance(dim, tuple) and all(isinstance(d, int) for d in dim))):
        return None
    return name, dim, keepdim


def fuse_reductions(gm):
    """Fuse `gm`'s reductions with the elementwise trees feeding them, in place.

    Args:
        gm: a captured GraphModule (its code is regenerated when anything fuses).

    Returns:
        The `FusedGroup`\\ s made (programs: ``FusedReduction``), in graph order; none in a
        graph that switches grad mode.
    """
    def consumer(node, root_module):
        reduction = reduction_of(node)
        if reduction is None:
            return None
        kind, dim, keepdim = reduction
        return lambda program: _fusion.FusedReduction(program, kind, dim, keepdim)
    return fuse_prologues(gm, consumer, "fused_reduction")


def fuse_prologues(gm, consumer, prefix):
    """Fuse each consumer node of `gm` with the elementwise tree feeding its first
    argument, in place: tree and consumer become one call of a `FusedGroup` whose program
    `consumer` makes (the reduction, softmax and layer norm prologue passes share this).

    Args:
        gm: a captured GraphModule (its code is regenerated when anything fuses).
        consumer: ``consumer(node, gm)`` -> None when `node` takes no prologue, else a
            function making the group's program from the tree's ``FusedElementwise``;
            the program takes the tree's inputs, then the consumer's other node
            arguments (`Node.all_input_nodes` order).
        prefix: the groups' names, numbered (``fused_reduction_0``).

    Returns:
        The `FusedGroup`\\ s made, in graph order; none in a graph that switches grad mode.
    """
    if switches_grad_mode(gm.graph):
        return []
    ops = {node: fusible_op(node, gm) for node in gm.graph.nodes}
    position = {node: i for i, node in enumerate(gm.graph.nodes)}
    taken, found = set(), []
    for node in gm.graph.nodes:
        make = consumer(node, gm)
        if make is None:
            continue
        source = node.args[0]
        # The input must be elementwise, computed only for this consumer, and produce
        # the compute dtype (a comparison's bools sum as integers).
        if ops[source] is None or source in taken or len(source.users) != 1 or ops[source] in _fusion.COMPARISONS:
            continue
        members = sorted(grow_tree(source, ops, taken), key=position.__getitem__)
        taken |= set(members)
        found.append((node, make, members))
    fused = []
    for number, (node, make, members) in enumerate(found):
        name = f"{prefix}_{number}"
        program, inputs, _ = _program(members, ops, name)
        # The consumer's other tensor arguments (layer norm's weight and bias) follow the
        # tree's inputs, in its argument order.
        extra = [a for a in node.all_input_nodes if a is not node.args[0]]
        graph = Graph()  # the eager composition: the tree's ops, then the consumer
        env, names = {}, set()
        for a in inputs + extra:
            # An input given twice (``F.layer_norm(x + w, s, w)``) takes two parameters,
            # both given it; the composition reads the first.
            parameter = a.name
            while parameter in names:
                parameter += "_again"
            names.add(parameter)
            env.setdefault(a, graph.placeholder(parameter))
        inputs = inputs + extra
        for member in [*members, node]:
            env[member] = graph.node_copy(member, env.__getitem__)
        graph.output(env[node])
        eager = GraphModule(gm, graph, name) if any(n.op == "call_module" for n in [*members, node]) \
            else GraphModule(Module(), graph, name)
        group = FusedGroup(name, make(program), eager)
        with gm.graph.inserting_before(node):
            call = gm.graph.call_function(group, tuple(inputs))
        node.replace_all_uses_with(call)
        gm.graph.erase_node(node)
        for member in reversed(members):
            gm.graph.erase_node(member)
        fused.append(group)
    if fused:
        gm.recompile()
    return fused


def fuse_reduction_epilogues(gm, groups):
    """Extend `gm`'s fused reductions with the elementwise chains applied to their results
    alone, in place.

    Args:
        gm: the GraphModule after `fuse_reductions` (its code is regenerated when a
            chain joins).
        groups: the groups `fuse_reductions` made; the extended ones are replaced.

    Returns:
        The groups, in graph order, those with a chain replaced by new groups whose
        ``FusedReduction`` carries the chain as its epilogue.
    """
    ops = {node: fusible_op(node, gm) for node in gm.graph.nodes}
    result, changed = [], False
    for call in list(gm.graph.nodes):
        group = call.target if call.op == "call_function" else None
        if not isinstance(group, FusedGroup) or group not in groups:
            continue
        chain, last = [], call
        while len(last.users) == 1:
            (user,) = last.users
            op = ops.get(user)
            if op is None or op in _fusion.COMPARISONS or [a for a in user.all_input_nodes] != [last]:
                break
            chain.append(user)
            last = user
        if not chain:
            result.append(group)
            continue
        reduction = group.program
        epilogue, _, _ = _program(chain, ops, f"{group.__name__}_epilogue")
        graph = Graph()   # the eager composition: the group's, then the chain
        env = {}
        for node in group.eager.graph.nodes:
            if node.op == "output":
                env[call] = env[node.args[0]]
            else:
                env[node] = graph.node_copy(node, env.__getitem__)
        for member in chain:
            env[member] = graph.node_copy(member, env.__getitem__)
        graph.output(env[chain[-1]])
        root = gm if any(n.op == "call_module" for n in graph.nodes) else Module()
        extended = FusedGroup(group.__name__, _fusion.FusedReduction(
            reduction.program, reduction.kind, reduction.dim, reduction.keepdim, epilogue),
            GraphModule(root, graph, group.__name__))
        with gm.graph.inserting_before(chain[-1]):
            new_call = gm.graph.call_function(extended, call.args)
        chain[-1].replace_all_uses_with(new_call)
        for node in reversed([call, *chain]):
            gm.graph.erase_node(node)
        result.append(extended)
        changed = True
    if changed:
        gm.recompile()
    return result
