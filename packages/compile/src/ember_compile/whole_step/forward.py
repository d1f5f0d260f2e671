"""A whole step's forward as one autograd node: the ops before its backward pass lowered
by `joint` (the derivative table's ahead-of-time backward), so that a replay records no
per-op graph and the engine walks one node, then the parameters' AccumulateGrad nodes —
``.grad`` written, accumulated and hooked exactly as eagerly."""
from ..joint import JointCompiled
from ..slots import Slot
from .recording import BackwardStep, GradsToNone, InPlaceStep, OpStep

__all__ = ["ForwardNode", "lowered_forward"]


def _slots_in(template):
    cls = template.__class__
    if cls is Slot:
        yield template.index
    elif cls is list or cls is tuple:
        for x in template:
            yield from _slots_in(x)
    elif cls is dict:
        for x in template.values():
            yield from _slots_in(x)


class ForwardNode:
    """The forward ops of a program (before its one backward step) run as a `JointCompiled`.

    Attributes:
        end: the index of the backward step in the program's items.
        needed: the forward values the rest of the program reads (the loss first).
        joint: the `JointCompiled` of the forward (lowered at its first call).
    """

    def __init__(self, items, end, needed, n_inputs):
        self.end, self.needed, self.n_inputs = end, needed, n_inputs
        steps = [item for item in items[:end] if item.__class__ is OpStep]
        self.pending = tuple(i for item in items[:end] if item.__class__ is GradsToNone for i in item.positions)
        # In-place ops before the backward pass on values the forward never reads
        # (``zero_grad(set_to_none=False)``'s ``zero_()``): run after the node, in order.
        self.effects = [item for item in items[:end] if item.__class__ is InPlaceStep]
        n_values = max(slot for step in steps for slot in step.out_slots) + 1
        # Only the values the forward reads are the node's inputs (not the gradients and
        # optimizer state: each input costs the autograd node a flag, an edge, a version).
        self.inputs = sorted({slot for step in steps for slot in (*_slots_in(step.args), *_slots_in(step.kwargs))
                              if slot < n_inputs})
        input_slots = self.inputs

        def forward(*inputs):
            env = [None] * n_values
            for slot, value in zip(input_slots, inputs):
                env[slot] = value
            for step in steps:
                result = step.call(env)
                for slot, o in zip(step.out_slots, (result,) if step.single else result):
                    env[slot] = o
            return tuple(env[slot] for slot in needed)

        self.joint = JointCompiled.for_function(forward)

    def __call__(self, values):
        """The needed values through the plan, or None where the forward is not lowered."""
        return self.joint([values[slot] for slot in self.inputs])


def lowered_forward(items, output, n_inputs):
    """A `ForwardNode` for a program of one backward pass whose forward is ops under grad
    mode (no in-place op, no check), or None."""
    ends = [i for i, item in enumerate(items) if item.__class__ is BackwardStep]
    if len(ends) != 1:
        return None
    end = ends[0]
    backward = items[end]
    if backward.gradient is not None:
        return None
    forward = items[:end]
    if not any(item.__class__ is OpStep for item in forward) or \
            any(item.__class__ not in (OpStep, GradsToNone, InPlaceStep) or
                (item.__class__ is OpStep and not item.mode) for item in forward):
        return None
    written = {slot for item in forward if item.__class__ is InPlaceStep
               for slot in (*_slots_in(item.args), *_slots_in(item.kwargs))}
    if any(slot in written for item in forward if item.__class__ is OpStep
           for slot in (*_slots_in(item.args), *_slots_in(item.kwargs), *item.out_slots)):
        return None  # the forward reads a value an in-place op writes
    made = {slot for item in forward if item.__class__ is OpStep for slot in item.out_slots}
    read = []
    for item in [item for item in forward if item.__class__ is InPlaceStep] + items[end + 1:]:
        if item.__class__ is BackwardStep or item.__class__ is GradsToNone:
            continue
        read += [*_slots_in(item.args), *_slots_in(item.kwargs)]
    read += list(_slots_in(output))
    needed = [backward.loss_slot] + sorted({s for s in read if s in made and s != backward.loss_slot})
    return ForwardNode(items, end, tuple(needed), n_inputs)
