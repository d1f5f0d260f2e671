"""Whole training steps: a compiled function that runs a backward pass and an optimizer's
update (``opt.zero_grad(); loss = f(model(x), y); loss.backward(); opt.step()``),
recorded once as one program and replayed by one Python call per step.

fx cannot capture such a function (a backward pass, in-place ops on real tensors), so it
used to run eagerly as a whole. Here the call runs eagerly once under a dispatcher wrapper
(`recording`) that writes down its outermost op calls — the forward's ops, the optimizer's
in-place updates (ember-optim's fused ``_fused_sgd_``/``_fused_adam_`` ops, a step
counter's ``add_(1)``) — as steps over numbered values, ``loss.backward()`` as a step, and
``p.grad = None`` (``zero_grad()``'s default, Python code no dispatcher sees, found by
comparing the parameters' ``.grad`` around every op) as a step. The values are the call's
tensors, the parameters and buffers of the modules it reads, the parameters' gradients
and the optimizer state tensors (momentum buffers, ``exp_avg``, step counters), read
again at every call. ember-compile stands below ember-optim: an optimizer is anything the
function reads from its globals or closure with a ``param_groups`` list and a ``state``
mapping.

The program is kept per *world* (`program.WholeStep`): the identity and metadata of every
value it reads, which parameters have a gradient, and every plain value of the
optimizers' ``param_groups`` (a learning rate a scheduler changed) and ``state``. A call in
a new world is recorded again (up to ``config.cache_size_limit`` worlds, then eager with a
warning); a first optimizer step, which makes its state with a factory, is refused and
the next step records. The forward's ops (before the one backward pass) run as one
`joint` node, their backward derived ahead of time from the derivative table (`forward`;
op by op with eager's per-op graph where they cannot be lowered or with
``config.ahead_of_time_backward`` off); the backward step runs eager's engine from the
loss, which walks that one node and the parameters' AccumulateGrad nodes, so ``.grad`` is
written, accumulated and hooked exactly as eagerly. The recording refuses (that world runs eagerly):
random draws, ``out=``, tensors made by factories, values read into Python (``item()``,
``bool()``), a ``.grad`` replaced by Python code other than set to None, a backward pass
with ``create_graph``/``inputs``, a plain optimizer value changed during the call, and
results other than tensors and plain values. A replay is checked before it starts and can
be abandoned (the call then runs eagerly) until its first effect: a data-dependent shape
found in the forward sends the call to eager.
"""
from .program import WholeStep, find_optimizers, find_tensors

__all__ = ["WholeStep", "find_optimizers", "find_tensors"]
