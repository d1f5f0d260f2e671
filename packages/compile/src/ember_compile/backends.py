"""Backends: what turns a captured GraphModule into the callable a compiled call runs.

A backend is called as PyTorch calls one, ``backend(gm, example_inputs)`` (the captured
GraphModule and the call's tensors), and returns a callable taking those tensors. By name:

- ``"inductor"`` (the default) and ``"ember"``: ember's compiler, fusing elementwise
  groups into generated Numba kernels (`fusion.fuse`), reductions with the elementwise
  trees feeding them first (`fused_reductions.fuse_reductions`) and the elementwise chains
  on their results (`fuse_reduction_epilogues`), then softmax/log_softmax
  with theirs (`fused_softmax.fuse_softmaxes`) and layer norm with its
  (`fused_layer_norm.fuse_layer_norms`); elementwise groups write
  into dead buffers — matmul epilogues in place (`memory_planning.plan_memory`);
- ``"eager"``, ``"aot_eager"``, ``"aot_eager_decomp_partition"`` and the names of
  PyTorch's other backends (``"cudagraphs"``, ``"openxla"``, ``"tvm"``): the captured
  graph as it is, with ember's ops.
"""
from . import config, trace_log
from .fused_layer_norm import fuse_layer_norms
from .fused_reductions import fuse_reduction_epilogues, fuse_reductions
from .fused_softmax import fuse_softmaxes
from .fusion import fuse
from .memory_planning import plan_memory

__all__ = ["BACKENDS", "JOINT", "lookup", "ember_backend", "eager_backend"]


def ember_backend(gm, example_inputs, *, log_topics=frozenset()):
    """Fuse `gm`'s reductions, softmaxes and layer norms with their elementwise prologues, then its
    elementwise groups, plan their buffers and return its forward."""
    groups = fuse_reduction_epilogues(gm, fuse_reductions(gm))
    groups += fuse_softmaxes(gm)
    groups += fuse_layer_norms(gm)
    groups += fuse(gm)
    if config.memory_planning:
        groups = plan_memory(gm, groups)
    gm.fused_groups = groups
    if groups:
        trace_log.emit(log_topics, "fusion", f"{len(groups)} fused group(s)", "\n\n".join(
            f"{g.__name__}: {len(g.program.steps)} ops\n{g.eager.code.strip()}" for g in groups))
        trace_log.emit(log_topics, "fusion", "in place", "\n".join(
            g.reuse.describe(g.__name__) if g.reuse is not None else f"{g.__name__}: a new tensor"
            for g in groups))
        for g in groups:
            dtypes = {t.dtype for t in example_inputs if hasattr(t, "dtype") and t.dtype.is_floating_point}
            for dtype in sorted(dtypes, key=str):
                if dtype.itemsize in (4, 8):
                    trace_log.emit(log_topics, "code", f"{g.__name__} kernel {g.program.kernel_name(dtype)} "
                                   f"({dtype})", g.program.source(dtype))
        trace_log.emit(log_topics, "graph", "graph after fusion", gm.code.strip())
    return gm.forward


def eager_backend(gm, example_inputs, *, log_topics=frozenset()):
    """Run the captured graph with ember's ops."""
    return gm.forward


BACKENDS = {"inductor": ember_backend, "ember": ember_backend, "eager": eager_backend,
            "aot_eager": eager_backend, "aot_eager_decomp_partition": eager_backend,
            "cudagraphs": eager_backend, "openxla": eager_backend, "tvm": eager_backend}

# The backends whose training calls run the captured graph with its backward derived
# ahead of time (`joint`), as PyTorch's AOTAutograd backends do.
JOINT = frozenset({"inductor", "ember", "aot_eager", "aot_eager_decomp_partition"})


def lookup(backend):
    """The backend function for a name (a callable backend is wrapped to drop ember's
    keyword)."""
    if callable(backend):
        return lambda gm, example_inputs, log_topics=frozenset(): backend(gm, example_inputs)
    return BACKENDS[backend]
