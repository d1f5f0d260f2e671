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

The package: `plan` (the steps over numbered values, `JointPlan`'s forward and backward),
`recording` (the dispatcher wrapper that lowers one run of a graph into steps, and what
it refuses), `node` (`CompiledFunction`, the one autograd node, and `JointCompiled`, which
lowers per ``requires_grad`` pattern and runs the calls).
"""
from .node import CompiledFunction, JointCompiled
from .plan import JointPlan, NotLowered

__all__ = ["JointCompiled", "JointPlan", "CompiledFunction", "NotLowered"]
