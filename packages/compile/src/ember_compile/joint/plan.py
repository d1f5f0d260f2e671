"""The joint plan: a lowered graph's steps over numbered values, and its forward and
backward (see the package docstring)."""
from ember_autograd import derivatives as _table

from ..slots import Slot, fill

__all__ = ["JointPlan", "NotLowered", "ShapeChanged"]


class NotLowered(Exception):
    """The graph cannot be lowered to a joint plan; the message says why."""


class ShapeChanged(Exception):
    """A plan's op returned another shape than at the lowering (a data-dependent shape:
    ``x[x > 0]``): the plan's fitted gradients would not fit; the call takes another path."""


class _StepCtx:
    """What a rule's formula gets as ``ctx`` in a plan: which inputs want a gradient."""

    __slots__ = ("needs_input_grad",)

    def __init__(self, needs):
        self.needs_input_grad = needs


class _Step:
    """One op call of the plan: the op, its arguments with values as slots, its outputs."""

    def __init__(self, op, entry, targs, tkwargs, out_slots, single, outs, inplace=False, random=False):
        self.op = op
        self.inplace = inplace
        self.random = random
        self.rule = entry if isinstance(entry, _table.Rule) else None
        self.args = targs
        self.kwargs = tkwargs
        self.out_slots = out_slots
        self.single = single
        self.out_differentiable = tuple(o.dtype.is_floating_point or o.dtype.is_complex for o in outs)
        # Filled by the plan:
        self.arg_slots = ()      # (position, slot) of top-level tensor arguments
        self.kwarg_slots = ()    # (name, slot)
        self.nested = False      # a list/tuple argument holds tensors: fill recursively
        self.in_slots = ()       # the rule's differentiable inputs (slot or None)
        self.in_metas = ()       # their (shape, dtype)
        self.ctx = None          # _StepCtx of the rule, when the step has a backward
        self.drop = ()           # slots last read by this step (freed after it)


def _shape_changed(effects):
    if effects:
        raise RuntimeError("ember_compile: an op of a compiled graph's plan returned another shape than when the "
                           "graph was lowered (a data-dependent shape) after the plan updated a buffer or drew "
                           "random numbers")
    raise ShapeChanged()


def _has_slot(template):
    if template.__class__ is Slot:
        return True
    if template.__class__ is list or template.__class__ is tuple:
        return any(_has_slot(x) for x in template)
    if template.__class__ is dict:
        return any(_has_slot(x) for x in template.values())
    return False


def _slots_in(template):
    if template.__class__ is Slot:
        yield template.index
    elif template.__class__ is list or template.__class__ is tuple or template.__class__ is dict:
        for x in (template.values() if template.__class__ is dict else template):
            yield from _slots_in(x)


class JointPlan:
    """A lowered graph: forward steps, and the backward derived from the rules ahead of time.

    Attributes:
        steps: the `_Step`\\ s in forward order.
        backward_steps: the steps with a backward (some input needs a gradient), forward order.
        output_slots: the values the graph returns; ``output_kind``: None (one tensor),
            tuple or list.
        n_inputs: how many values the call gives (its tensors, then parameters and buffers);
            ``n_call``: how many of them are the call's tensors.
    """

    def __init__(self, recorder, n_inputs, n_call, requires_grad, output_slots, output_kind, shapes):
        self.steps = recorder.steps
        self.n_inputs = n_inputs
        self.n_call = n_call
        self.n_values = len(recorder.alive)
        self.output_slots = output_slots
        self.output_kind = output_kind
        differentiable = list(requires_grad) + [False] * (self.n_values - n_inputs)
        last_use = {}
        # Values written in place, and the last step writing each: an op with a derivative
        # must not read one before that (eagerly, a saved one would fail its version check;
        # the plan saves after the whole forward, so it would save the later value).
        last_write = {}
        for number, step in enumerate(self.steps):
            if step.inplace:
                last_write[next(_slots_in(step.args))] = number
        self.random = any(step.random for step in self.steps)
        for number, step in enumerate(self.steps):
            step.arg_slots = tuple((i, a.index) for i, a in enumerate(step.args) if a.__class__ is Slot)
            step.kwarg_slots = tuple((k, v.index) for k, v in step.kwargs.items() if v.__class__ is Slot)
            step.nested = any(a.__class__ is not Slot and _has_slot(a) for a in step.args) or \
                any(v.__class__ is not Slot and _has_slot(v) for v in step.kwargs.values())
            read = [slot for template in (*step.args, *step.kwargs.values()) for slot in _slots_in(template)]
            for slot in read:
                last_use[slot] = number
            if step.inplace:
                if any(differentiable[slot] for slot in read):
                    raise NotLowered(f"in-place op {step.op.name!r} with an argument that requires grad")
            elif step.rule is not None and any(last_write.get(slot, -1) > number for slot in read):
                raise NotLowered(f"a value written in place later is read by {step.op.name!r}, which has a "
                                 f"derivative")
            if step.rule is None:
                continue  # not differentiable: its outputs never require grad
            inputs = step.rule.extractor(step.op)(step.args, step.kwargs)
            step.in_slots = tuple(x.index if x.__class__ is Slot else None for x in inputs)
            needs = tuple(slot is not None and differentiable[slot] for slot in step.in_slots)
            if any(needs):
                step.ctx = _StepCtx(needs)
                step.in_metas = tuple(None if slot is None else shapes[slot] for slot in step.in_slots)
                for slot, ok in zip(step.out_slots, step.out_differentiable):
                    differentiable[slot] = ok
        keep = set(output_slots)
        drops = {}
        for slot, number in last_use.items():
            if slot >= n_inputs and slot not in keep:
                drops.setdefault(number, []).append(slot)
        for number, step in enumerate(self.steps):
            step.drop = tuple(drops.get(number, ()))
        for step in self.steps:
            step.out_shapes = tuple(shapes[slot][0] for slot in step.out_slots)
        self.backward_steps = [s for s in self.steps if s.ctx is not None]
        self.differentiable = differentiable

    # -- forward ---------------------------------------------------------------------------

    def forward(self, values):
        """Run the steps on `values` (the call's tensors, parameters, buffers), grad mode
        off. Returns (outputs, saved): ``saved`` holds, per backward step, the values its
        rule's ``save`` picked (outputs substituted for ``RESULT``)."""
        env = list(values) + [None] * (self.n_values - self.n_inputs)
        saved = []
        effects = False  # a buffer's update or a random draw ran: the call can no longer go another way
        for step in self.steps:
            if step.nested:
                args = fill(step.args, env)
                kwargs = {k: fill(v, env) for k, v in step.kwargs.items()}
            else:
                args = list(step.args)
                for i, slot in step.arg_slots:
                    args[i] = env[slot]
                kwargs = step.kwargs
                if step.kwarg_slots:
                    kwargs = dict(kwargs)
                    for k, slot in step.kwarg_slots:
                        kwargs[k] = env[slot]
            rule = step.rule
            to_save = rule.save(*args, **kwargs) if step.ctx is not None and rule.save is not None else None
            out = step.op(*args, **kwargs)
            if step.inplace:
                pass  # its effect is the point (a buffer's update)
            elif step.single:
                if out.shape != step.out_shapes[0]:
                    _shape_changed(effects)
                env[step.out_slots[0]] = out
            else:
                for slot, o, shape in zip(step.out_slots, out, step.out_shapes):
                    if o.shape != shape:
                        _shape_changed(effects)
                    env[slot] = o
            if step.inplace or step.random:
                effects = True
            if step.ctx is not None:
                # Its differentiable outputs require grad, as eagerly: the rules' `save`
                # of later steps reads it (``x * 0.5`` keeps no reference to x).
                if step.single:
                    if step.out_differentiable[0]:
                        out.requires_grad_()
                else:
                    for o, ok in zip(out, step.out_differentiable):
                        if ok:
                            o.requires_grad_()
                if to_save is not None:
                    to_save = tuple((out if _table.result_index(v) is None else out[_table.result_index(v)])
                                    if _table.is_result(v) else v for v in to_save)
                saved.append(to_save)
            for slot in step.drop:
                env[slot] = None
        return [env[s] for s in self.output_slots], saved

    # -- backward --------------------------------------------------------------------------

    def backward(self, output_grads, saved):
        """Gradients of the plan's inputs (None where none flows) from those of its outputs."""
        grads = {}
        for slot, g in zip(self.output_slots, output_grads):
            if g is not None:
                grads[slot] = g
        fit = _table.fit_gradient
        for step, step_saved in zip(reversed(self.backward_steps), reversed(saved)):
            if step.single:
                grad = grads.pop(step.out_slots[0], None)
                if grad is None:
                    continue
            else:
                grad = tuple(grads.pop(s, None) for s in step.out_slots)
                if all(g is None for g in grad):
                    continue
            result = step.rule.backward(step.ctx, grad, *(step_saved or ()))
            if len(step.in_slots) == 1 and not isinstance(result, (tuple, list)):
                result = (result,)
            for slot, need, meta, g in zip(step.in_slots, step.ctx.needs_input_grad, step.in_metas, result):
                if not need or g is None:
                    continue
                g = fit(g, *meta)
                old = grads.get(slot)
                if old is None:
                    grads[slot] = g
                else:  # as the engine sums: a sparse gradient on the right
                    grads[slot] = g + old if old.is_sparse and not g.is_sparse else old + g
        return [grads.get(i) for i in range(self.n_inputs)]
