"""Ahead-of-time backward: a captured graph's forward and backward as one plan, run as
one autograd node (PyTorch's AOTAutograd, on ember's derivative table).

When a compiled call needs gradients (grad mode on, an input or a parameter requires
grad), `JointCompiled` lowers the captured graph once per set of ``requires_grad`` flags:
it runs the graph under a dispatcher wrapper that records every outermost op call
(composites as the ops they call, as the recording wrapper differentiates them) into a
list of steps over numbered values — the call's tensors, then the parameters and buffers,
then each op's outputs. From ember-autograd's derivative table (``ember_autograd.derivatives``,
the one table the eager recorder uses) the plan knows, ahead of time, which steps have a
backward, which of their inputs need a gradient (``ctx.needs_input_grad``), what each rule
saves, the shape and dtype each gradient is fitted to, and when a forward value is last
used (it is dropped then, unless a rule saved it).

A call then runs `CompiledFunction.apply`: one autograd node for the whole graph. Its
forward runs the steps with grad mode off (no per-op graph) and saves what the rules'
``save`` picked; its backward walks the steps in reverse, calls each rule's formula on the
saved values, fits each gradient (``fit_gradient``: un-broadcast and cast, the engine's
one place) and sums gradients of values used twice. The formulas are the eager rules, so
results and gradients are eager ember's bit for bit (sums of three or more gradients of
one value add in the engine's order). Saved tensors go through ``save_for_backward``: the
in-place version check, ``retain_graph`` and "backward through the graph a second time"
behave as in eager; a tensor a rule does not save is never kept.

``backward(create_graph=True)`` through the node falls back to eager: it recomputes the
captured graph from the saved inputs with autograd recording and differentiates that
(``autograd.grad(create_graph=True)``), so double backward gets eager's graph.

In-place ops into buffers that do not require grad (BatchNorm's ``num_batches_tracked``)
or into values the graph made are steps of the plan, replayed on every call with no
gradient. Random ops are steps too, drawing anew on every call from the default
generators: dropout's ``empty(shape).bernoulli_(p)`` (a factory is no op: the plan
allocates the tensor the draw fills). The lowering run's effects on buffers and the
call's tensors (running statistics updated inside an op) and on the random stream are
undone, so that the call applies them once, as an eager call would; a ``create_graph``
recomputation replays the forward's random state.

Not lowered (the call takes the captured graph's path, today's, instead): an in-place op
into an input or a parameter, or through a view (into memory another value shares), or
with an argument that requires grad, or into a value that an op with a derivative read
before, an ``out=``, a random op with its own generator, a tensor the graph did not make and that is neither an input nor a
parameter or buffer, a conversion of a graph value to a Python value (``item()``, ...), an
output that aliases an input, outputs other than a tensor or a tuple/list of tensors, and
modules with hooks.
"""
import contextlib
import inspect

import ember_autograd
import ember_tensor
from ember_autograd import Function
from ember_autograd import derivatives as _table
from ember_tensor import Tensor
from ember_tensor import dispatch

from .capture import _RANDOM_PREFIXES

__all__ = ["JointCompiled", "JointPlan", "CompiledFunction", "NotLowered"]


class NotLowered(Exception):
    """The graph cannot be lowered to a joint plan; the message says why."""


class _Slot:
    """A value of the plan in an argument template."""

    __slots__ = ("index",)

    def __init__(self, index):
        self.index = index

    def __repr__(self):
        return f"v{self.index}"


_CONVERSIONS = ("item", "tolist", "numpy", "__bool__", "__int__", "__float__", "__index__")
_draws = {}


def _draws_random(op):
    """Whether `op` draws random numbers (the plan replays the random stream around it)."""
    found = _draws.get(op)
    if found is None:
        try:
            found = "generator" in inspect.signature(op.impl).parameters
        except (TypeError, ValueError):
            found = False
        found = _draws[op] = found or op.name.startswith(_RANDOM_PREFIXES)
    return found


def _rng_states():
    """The CPU generator's state and, once CUDA is in use, every GPU's."""
    cuda = ember_tensor.cuda
    return ember_tensor.get_rng_state(), cuda.get_rng_state_all() if cuda.is_initialized() else None


def _set_rng_states(states):
    ember_tensor.set_rng_state(states[0])
    if states[1] is not None:
        ember_tensor.cuda.set_rng_state_all(states[1])


@contextlib.contextmanager
def _rng_restored(states=None):
    """Run the block (from `states`, when given) and leave the generators as they were."""
    now = _rng_states()
    if states is not None:
        _set_rng_states(states)
    try:
        yield
    finally:
        _set_rng_states(now)


class _Recorder:
    """The dispatcher wrapper that lowers one run of the graph into steps."""

    def __init__(self, tensors, buffers):
        self.buffers = buffers  # the input slots an in-place op may write (buffers not requiring grad)
        self.n_inputs = len(tensors)
        self.slots = {}
        for i, t in enumerate(tensors):
            self.slots.setdefault(id(t), i)
        self.alive = list(tensors)  # keeps ids unique while recording
        self.steps = []
        self.depth = 0
        self.refusal = None  # kept even if the program catches the exception

    def refuse(self, reason):
        self.refusal = self.refusal or reason
        raise NotLowered(reason)

    def fresh(self, t):
        """A step allocating a tensor like `t` (made by a factory, which is no op), whose
        contents an in-place draw overwrites; its slot."""
        slot = self.slots[id(t)] = len(self.alive)
        self.alive.append(t)
        self.steps.append(_Step(_Empty(tuple(t.shape), t.dtype, t.device), _table.NOT_DIFFERENTIABLE, (), {},
                                (slot,), True, (t,)))
        return slot

    def template(self, a):
        if isinstance(a, Tensor):
            index = self.slots.get(id(a))
            if index is None:
                self.refuse("a tensor that is neither a graph input, a parameter or buffer, nor the result of "
                            "an op of the graph")
            return _Slot(index)
        if a.__class__ is list or a.__class__ is tuple:
            return a.__class__(self.template(x) for x in a)
        return a

    def __call__(self, op, args, kwargs, redispatch):
        if self.depth:
            return redispatch(op, args, kwargs)
        entry = _table.entry_for(op)
        if entry is _table.COMPOSITE:
            return redispatch(op, args, kwargs)  # its parts come through here
        # Refused before running, so that an effect never happens twice (here and eagerly).
        random = _draws_random(op)
        if random and kwargs.get("generator") is not None:
            self.refuse(f"random op {op.name!r} with its own generator (its state is not replayed)")
        inplace = op.inplace
        if inplace:
            # Into a buffer (BatchNorm's num_batches_tracked) or a value the graph made
            # (dropout's mask, drawn into an empty tensor): replayed on every call, with no
            # gradient (the plan checks that nothing differentiable flows in).
            target = self.slots.get(id(args[0])) if args and isinstance(args[0], Tensor) else None
            if target is None and random and isinstance(args[0], Tensor) and args[0].is_contiguous() and \
                    not args[0].requires_grad:
                target = self.fresh(args[0])  # ``empty(shape).bernoulli_(p)``: the draw fills it all
            if target is None:
                self.refuse("a tensor that is neither a graph input, a parameter or buffer, nor the result of "
                            "an op of the graph")
            if target < self.n_inputs and target not in self.buffers:
                self.refuse(f"in-place op {op.name!r} on an input or parameter")
            # A write through a view reaches other values (and eagerly their versions).
            memory = args[0].untyped_storage().data_ptr()
            if any(t is not args[0] and t.untyped_storage().data_ptr() == memory for t in self.alive):
                self.refuse(f"in-place op {op.name!r} on a tensor that shares memory with another value")
        if kwargs.get("out") is not None:
            self.refuse(f"op {op.name!r} with out=")
        targs = self.template(args)
        tkwargs = {k: self.template(v) for k, v in kwargs.items()}
        self.depth += 1
        try:
            result = redispatch(op, args, kwargs)
        finally:
            self.depth -= 1
        if inplace:
            self.steps.append(_Step(op, _table.NOT_DIFFERENTIABLE, targs, tkwargs, (), True, (), inplace=True,
                                    random=random))
            return result
        if args and result is args[0]:
            return result  # the op returned its input (contiguous(), to() with nothing to do)
        single = isinstance(result, Tensor)
        outs = (result,) if single else result
        if not isinstance(outs, (tuple, list)) or not all(isinstance(o, Tensor) for o in outs):
            self.refuse(f"op {op.name!r} returned a value other than tensors")
        out_slots = []
        for o in outs:
            if id(o) in self.slots:
                self.refuse(f"op {op.name!r} returned a tensor it was given")
            self.slots[id(o)] = len(self.alive)
            out_slots.append(len(self.alive))
            self.alive.append(o)
        self.steps.append(_Step(op, entry, targs, tkwargs, tuple(out_slots), single, outs, random=random))
        return result


class _Conversions:
    """While lowering: a graph value turned into a Python value refuses the lowering (the
    value would be frozen into the plan)."""

    def __init__(self, recorder):
        self.recorder = recorder
        self.originals = {}

    def __enter__(self):
        recorder = self.recorder

        def refusing(name, original):
            def method(t, *args, **kwargs):
                if not recorder.depth and id(t) in recorder.slots:
                    recorder.refuse(f"a graph value converted to a Python value ({name})")
                return original(t, *args, **kwargs)
            return method

        for name in _CONVERSIONS:
            original = Tensor.__dict__.get(name)
            if original is not None:
                self.originals[name] = original
                setattr(Tensor, name, refusing(name, original))
        return self

    def __exit__(self, *exc_info):
        for name, original in self.originals.items():
            setattr(Tensor, name, original)


class _Empty:
    """The step allocating a tensor that a random op fills in place (dropout's mask)."""

    name = "empty"

    def __init__(self, shape, dtype, device):
        self.shape, self.dtype, self.device = shape, dtype, device

    def __call__(self):
        return ember_tensor.empty(self.shape, dtype=self.dtype, device=self.device)


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


def _fill(template, env):
    if template.__class__ is _Slot:
        return env[template.index]
    if template.__class__ is list or template.__class__ is tuple:
        return template.__class__(_fill(x, env) for x in template)
    return template


def _has_slot(template):
    if template.__class__ is _Slot:
        return True
    if template.__class__ is list or template.__class__ is tuple:
        return any(_has_slot(x) for x in template)
    return False


def _slots_in(template):
    if template.__class__ is _Slot:
        yield template.index
    elif template.__class__ is list or template.__class__ is tuple:
        for x in template:
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
            step.arg_slots = tuple((i, a.index) for i, a in enumerate(step.args) if a.__class__ is _Slot)
            step.kwarg_slots = tuple((k, v.index) for k, v in step.kwargs.items() if v.__class__ is _Slot)
            step.nested = any(a.__class__ is not _Slot and _has_slot(a) for a in step.args) or \
                any(v.__class__ is not _Slot and _has_slot(v) for v in step.kwargs.values())
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
            step.in_slots = tuple(x.index if x.__class__ is _Slot else None for x in inputs)
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
        self.backward_steps = [s for s in self.steps if s.ctx is not None]
        self.differentiable = differentiable

    # -- forward ---------------------------------------------------------------------------

    def forward(self, values):
        """Run the steps on `values` (the call's tensors, parameters, buffers), grad mode
        off. Returns (outputs, saved): ``saved`` holds, per backward step, the values its
        rule's ``save`` picked (outputs substituted for ``RESULT``)."""
        env = list(values) + [None] * (self.n_values - self.n_inputs)
        saved = []
        for step in self.steps:
            if step.nested:
                args = _fill(step.args, env)
                kwargs = {k: _fill(v, env) for k, v in step.kwargs.items()}
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
                env[step.out_slots[0]] = out
            else:
                for slot, o in zip(step.out_slots, out):
                    env[slot] = o
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


class CompiledFunction(Function):
    """A lowered graph as one autograd node (``CompiledFunctionBackward``, PyTorch's name)."""

    @staticmethod
    def forward(ctx, plan, joint, *values):
        # The draws of random steps, for a create_graph recomputation.
        ctx.rng = _rng_states() if plan.random else None
        outputs, saved = plan.forward(values)
        # Every tensor a rule saved goes through save_for_backward (version checks, freeing
        # after backward); the plan keeps their positions.
        tensors, layout = [], []
        for entry in saved:
            if entry is None:
                layout.append(None)
                continue
            row = []
            for v in entry:
                if isinstance(v, Tensor):
                    row.append((True, len(tensors)))
                    tensors.append(v)
                else:
                    row.append((False, v))
            layout.append(row)
        ctx.save_for_backward(*tensors)
        ctx.set_materialize_grads(False)
        ctx.plan, ctx.joint, ctx.layout = plan, joint, layout
        # For backward(create_graph=True), which recomputes eagerly from the inputs.
        ctx.inputs = values
        ctx.input_versions = tuple(v._version for v in values)
        return outputs[0] if plan.output_kind is None else tuple(outputs)

    @staticmethod
    def backward(ctx, *grads):
        plan = ctx.plan
        if ember_autograd.is_grad_enabled():
            return (None, None, *_eager_double_backward(ctx, grads))
        tensors = ctx.saved_tensors
        saved = [None if row is None else tuple(tensors[v] if is_tensor else v for is_tensor, v in row)
                 for row in ctx.layout]
        return (None, None, *plan.backward(grads, saved))


def _eager_double_backward(ctx, grads):
    """backward(create_graph=True): recompute the graph eagerly from the inputs, recording,
    and differentiate it with the graph kept, so that the gradients can be differentiated."""
    inputs = ctx.inputs
    if tuple(v._version for v in inputs) != ctx.input_versions:
        raise RuntimeError("one of the variables needed for gradient computation has been modified by an "
                           "inplace operation: an input or parameter of a compiled graph changed between its "
                           "forward and backward(create_graph=True)")
    joint, plan = ctx.joint, ctx.plan
    with ember_autograd.enable_grad(), (_rng_restored(ctx.rng) if ctx.rng is not None else
                                        contextlib.nullcontext()):
        result = joint.eager(*inputs[:plan.n_call])  # dropout draws the forward's masks again
    outs = [result] if plan.output_kind is None else list(result)
    pairs = [(o, g) for o, g in zip(outs, grads) if g is not None and o.requires_grad]
    needs = ctx.needs_input_grad[2:]
    wanted = [t for t, need in zip(inputs, needs) if need]
    if not pairs or not wanted:
        return [None] * len(inputs)
    found = iter(ember_autograd.grad([o for o, _ in pairs], wanted, [g for _, g in pairs],
                                     create_graph=True, allow_unused=True))
    return [next(found) if need else None for need in needs]


class JointCompiled:
    """The training path of one compiled graph: lowers it per ``requires_grad`` pattern
    and runs its calls as `CompiledFunction` nodes.

    Args:
        gm: the captured GraphModule (its parameters and buffers are the plan's too).
        eager: the callable the graph's calls run otherwise (the backend's), used for the
            lowering run and for ``create_graph`` recomputation.
        dynamic: shapes are not guarded: plans are kept per input shapes.

    Attributes:
        plans: {(requires_grad flags[, shapes]): `JointPlan`, or the reason it was not lowered}.
    """

    def __init__(self, gm, eager, *, dynamic=False):
        self.eager = eager
        self.dynamic = dynamic
        self.plans = {}
        seen, self.state, self.buffers = set(), [], []
        for module in gm.modules():
            for table in (module._parameters, module._buffers):
                for name, t in table.items():
                    if t is not None and id(t) not in seen:
                        seen.add(id(t))
                        if table is module._buffers:
                            self.buffers.append(len(self.state))
                        self.state.append((table, name))
        self.hook_tables = [getattr(m, attr) for m in gm.modules()
                            for attr in ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks",
                                         "_backward_pre_hooks", "_forward_hooks_with_kwargs",
                                         "_forward_pre_hooks_with_kwargs") if hasattr(m, attr)]

    def __call__(self, tensors):
        """The call's outputs through a plan, or None when the call takes the graph's path."""
        state = [table[name] for table, name in self.state]
        values = (*tensors, *state)
        flags = tuple(t.requires_grad for t in values)
        if True not in flags or any(self.hook_tables):
            return None
        key = (flags, tuple(tuple(t.shape) for t in tensors)) if self.dynamic else flags
        plan = self.plans.get(key)
        if plan is None:
            try:
                plan = self._lower(values, flags, len(tensors))
            except NotLowered as reason:
                plan = str(reason)
            self.plans[key] = plan
        if plan.__class__ is str:
            return None
        result = CompiledFunction.apply(plan, self, *values)
        return list(result) if plan.output_kind is list else result

    def _lower(self, values, flags, n_call):
        buffers = [n_call + i for i in self.buffers if not values[n_call + i].requires_grad]
        recorder = _Recorder(values, frozenset(buffers))
        # The lowering run's effects on buffers (BatchNorm's running statistics, updated
        # inside its op) and on the call's tensors (``F.batch_norm`` given statistics as
        # arguments) are undone: the call that follows applies them, once.
        restored = buffers + [i for i in range(n_call) if not values[i].requires_grad]
        with ember_autograd.no_grad():
            snapshot = [values[i].clone() for i in restored]
        dispatch.register_wrapper(recorder, outermost=True)
        try:
            # The random stream too: the call that follows draws what an eager call would.
            with _Conversions(recorder), ember_autograd.no_grad(), dispatch.tracing(), _rng_restored():
                result = self.eager(*values[:n_call])
        finally:
            dispatch.unregister_wrapper(recorder)
            with ember_autograd.no_grad():
                for i, copy in zip(restored, snapshot):
                    values[i].copy_(copy)
        if recorder.refusal is not None:
            raise NotLowered(recorder.refusal)
        if isinstance(result, Tensor):
            kind, outs = None, [result]
        elif isinstance(result, (tuple, list)) and result and all(isinstance(r, Tensor) for r in result):
            kind, outs = type(result), list(result)
        else:
            raise NotLowered("the graph returns something other than a tensor or a tuple/list of tensors")
        slots = [recorder.slots.get(id(o)) for o in outs]
        n_inputs = len(values)
        if any(s is None or s < n_inputs for s in slots) or len(set(slots)) != len(slots):
            raise NotLowered("an output is an input, a parameter, or returned twice")
        storages = {v.untyped_storage().data_ptr() for v in values}
        if any(o.untyped_storage().data_ptr() in storages for o in outs):
            raise NotLowered("an output is a view of an input")
        shapes = [(tuple(t.shape), t.dtype) for t in recorder.alive]
        return JointPlan(recorder, n_inputs, n_call, flags, slots, kind, shapes)
