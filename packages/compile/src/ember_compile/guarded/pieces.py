"""A straight-line piece of a guarded trace, compiled: its elementwise chains fused.

The op steps between two checks of a trace (a `traces._Node`'s steps) are a graph with no
control flow. `compile_piece` writes them as an fx graph — a placeholder for each value the
piece reads from before it, a ``call_function`` of each step's op, the values the rest of
the trace tree reads as the output — and fuses it (`fusion.fuse`: each chain of elementwise
ops whose intermediates nothing else reads becomes one generated kernel, eager ember's
results bit for bit; autograd records a fused group as one node whose backward is the
eager composition's). A replay then runs the piece as one call instead of its ops one by
one: a graph break costs what the break costs, and the code on either side of it is
compiled, as PyTorch's compiler compiles the graphs around a break.

What the step-by-step replay checks, the compiled piece checks too: each value it returns
must have its recorded shape (a data-dependent shape abandons the replay). It returns every
value an op other than a fusible elementwise op made, so each of those is checked; an
elementwise value's shape follows from its operands' (broadcasting), which are checked or
were checked before the piece. A piece whose steps switch grad mode, or in which nothing
fuses, is not compiled (the steps replay one by one).
"""
import operator

from ember_fx import Graph, GraphModule
from ember_nn import Module

from ..fusion import fuse, fusible_op
from ..slots import fill, slots_in

__all__ = ["CompiledPiece", "compile_piece"]


class CompiledPiece:
    """The fused graph of a piece's steps and how its results enter the replay's values.

    Attributes:
        module: the fused GraphModule (its ``code`` shows the groups).
        groups: the `FusedGroup`\\ s of the piece.
        mode: the grad mode every step ran in.
    """

    def __init__(self, module, groups, mode, reads, first, count, kept, shapes):
        self.module, self.groups, self.mode = module, groups, mode
        self._reads = reads          # the slots the graph's placeholders take, in order
        self._first = first          # the first slot the piece makes
        self._count = count          # how many slots it makes
        self._kept = kept            # the slots the graph returns, in order
        self._shapes = shapes        # their recorded shapes

    def run(self, env):
        """Append the piece's values to `env` (None for those nothing reads later);
        False, with `env` untouched, when a value's shape is not the recorded one."""
        results = self.module(*[env[i] for i in self._reads])
        if any(tuple(r.shape) != s for r, s in zip(results, self._shapes)):
            return False
        made = [None] * self._count
        first = self._first
        for slot, value in zip(self._kept, results):
            made[slot - first] = value
        env.extend(made)
        return True


def compile_piece(steps, read_later):
    """The `CompiledPiece` of `steps`, or None where compiling gains nothing or cannot
    keep the replay's checks (the steps then replay one by one).

    Args:
        steps: the piece's `OpStep`\\ s, in call order.
        read_later: the slots the rest of the trace tree reads (later steps, checks and the
            outputs of every pattern through this piece).
    """
    if not steps or any(step.mode != steps[0].mode for step in steps):
        return None
    first = steps[0].out_slots[0]
    slot = first
    for step in steps:  # the replay appends each step's outputs in order
        if step.out_slots != tuple(range(slot, slot + len(step.out_slots))):
            return None
        slot += len(step.out_slots)
    count = slot - first

    graph, root = Graph(), Module()
    nodes, reads = {}, []
    for index in sorted(set().union(*(slots_in((s.args, s.kwargs), set()) for s in steps))):
        if index < first:
            nodes[index] = graph.placeholder(f"v{index}")
            reads.append(index)
    shapes, fusible = {}, {}
    for step in steps:
        node = graph.call_function(step.op, fill(step.args, nodes), fill(step.kwargs, nodes))
        if step.single:
            nodes[step.out_slots[0]] = node
            fusible[step.out_slots[0]] = fusible_op(node, root) is not None
        else:
            for i, out in enumerate(step.out_slots):
                nodes[out] = graph.call_function(operator.getitem, (node, i))
                fusible[out] = False
        shapes.update(zip(step.out_slots, step.shapes))
    kept = [s for s in range(first, first + count) if s in read_later or not fusible[s]]
    graph.output(tuple(nodes[s] for s in kept))
    module = GraphModule(root, graph, "guarded_piece")
    groups = fuse(module)
    if not groups:
        return None
    return CompiledPiece(module, groups, steps[0].mode, reads, first, count, kept, [shapes[s] for s in kept])
