"""Guarded traces: calls whose Python control flow reads tensor values, replayed piece by piece.

fx's symbolic tracer cannot follow ``if loss > tol:`` (a Proxy has no value), so such a
call used to run eagerly as a whole. Here the call runs eagerly once under a dispatcher
wrapper (`recording`) that writes down its outermost op calls as steps over numbered
values, and every conversion of one of those values to a Python value (``bool()``,
``item()``, ``int()``, ``float()``, ``__index__``, ``tolist()``, an op returning a Python
value) as a *check* holding the value it returned. The Python code between ops is
deterministic given the guard key and those values, so the steps and checks are a
straight-line program of that branch pattern.

Traces of one guard key share their prefix and fork at checks (`traces.TraceTree`). A later
call replays the tree: each step calls its op through the dispatcher as eagerly (autograd
records the same graph, so backward is eager's), each step's output shapes are compared
with the recorded ones (data-dependent shapes), and each check recomputes its value and
follows the branch recorded for exactly that value. The straight-line pieces between
checks run compiled where an elementwise chain in them fuses (`pieces`). A value with no branch (a new pattern,
a NaN) abandons the replay and runs the call eagerly, recording the new pattern (up to
``config.cache_size_limit`` patterns per key). Abandoning is safe because a trace holds
nothing with an effect outside its own values: the recording refuses in-place ops and
``out=``, random draws, ops writing into inputs or buffers inside themselves, tensors that
are neither inputs, parameters/buffers nor results of recorded ops, backward passes, and
values changed after their op (``requires_grad_()``, a custom ``autograd.Function``). A
refused call keeps the whole-call eager behaviour for its guard key.
"""
from .traces import GuardedTraces

__all__ = ["GuardedTraces"]
