"""A lowered graph as one autograd node (`CompiledFunction`), and `JointCompiled`, which
lowers a compiled graph per ``requires_grad`` pattern and runs its training calls."""
import contextlib

import ember_autograd
import ember_nn as nn
import ember_tensor
from ember_autograd import Function
from ember_tensor import Tensor
from ember_tensor import dispatch

from .plan import JointPlan, NotLowered, ShapeChanged
from .recording import _Recorder, _rng_restored, _rng_states, _watching_conversions

__all__ = ["CompiledFunction", "JointCompiled"]


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
        shape_changes: calls whose plan met another shape than at the lowering (a
            data-dependent shape) and ran the graph's path instead.
    """

    def __init__(self, gm, eager, *, dynamic=False):
        self.eager = eager
        self.dynamic = dynamic
        self.plans = {}
        self.shape_changes = 0  # calls a data-dependent shape sent down the graph's path
        seen, self.state, self.buffers = set(), [], []
        for module in gm.modules():
            for table in (module._parameters, module._buffers):
                for name, t in table.items():
                    if t is not None and id(t) not in seen:
                        seen.add(id(t))
                        if table is module._buffers:
                            self.buffers.append(len(self.state))
                        self.state.append((table, name))
        # Eagerly a recurrent layer runs its fused ops inside an autograd.Function; under the
        # lowering's trace it takes its composed path (ONNX export records that), so a plan
        # would compute other ops, with other rounding, than the eager call.
        self.recurrent = any(isinstance(m, (nn.RNNBase, nn.RNNCellBase)) for m in gm.modules())
        self.hook_tables = [getattr(m, attr) for m in gm.modules()
                            for attr in ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks",
                                         "_backward_pre_hooks", "_forward_hooks_with_kwargs",
                                         "_forward_pre_hooks_with_kwargs") if hasattr(m, attr)]

    @classmethod
    def for_function(cls, fn):
        """The training path of `fn(*tensors)`, a function of tensors only (a whole
        training step's forward, `whole_step`: its parameters come as tensors too)."""
        self = cls.__new__(cls)
        self.eager, self.dynamic, self.plans, self.shape_changes = fn, False, {}, 0
        self.state, self.buffers, self.recurrent, self.hook_tables = [], [], False, []
        return self

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
        try:
            result = CompiledFunction.apply(plan, self, *values)
        except ShapeChanged:  # a data-dependent shape: this call runs the graph op by op
            self.shape_changes += 1
            return None
        return list(result) if plan.output_kind is list else result

    def _lower(self, values, flags, n_call):
        if self.recurrent:
            raise NotLowered("a recurrent layer (nn.RNN/LSTM/GRU or a cell): its fused autograd.Function "
                             "runs eagerly, its composition under the lowering's trace")
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
            with _watching_conversions(recorder), ember_autograd.no_grad(), dispatch.tracing(), _rng_restored():
                result = self.eager(*values[:n_call])
        finally:
            dispatch.unregister_wrapper(recorder)
            with ember_autograd.no_grad():
                for i, copy in zip(restored, snapshot):
                    # Only what changed: a copy bumps the version, which would break an
                    # eager graph that saved this tensor before the compiled call.
                    if not ember_tensor.equal(values[i], copy):
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
