"""``torch._dynamo.explain(fn)(*args)``: what compiling `fn` captures and where it breaks."""
from . import config
from .compiled_function import BreakReason, CompiledFunction

__all__ = ["explain", "ExplainOutput"]


class ExplainOutput:
    """What ``explain`` found (PyTorch's ExplainOutput's fields).

    Attributes:
        graphs: the captured GraphModules.
        graph_count: how many graphs were captured: the GraphModules, and the non-empty
            straight-line pieces of op calls between the checks of guarded traces.
        graph_break_count: how many calls could not be captured (such a call runs eagerly
            as a whole, or, a training step, is replayed as a recorded whole step), and how
            many checks of a tensor's value by Python control flow the guarded traces hold
            (each splits the call's ops, as PyTorch's breaks).
        break_reasons: a `BreakReason` per break, ``.reason`` saying why.
        op_count: the call nodes of all graphs.
        ops_per_graph: each graph's call nodes' targets.
        compile_times: seconds each compile took.
    """

    def __init__(self, graphs, break_reasons, compile_times, segments=()):
        self.graphs = graphs
        self.graph_count = len(graphs) + len(segments)
        self.graph_break_count = len(break_reasons)
        self.break_reasons = break_reasons
        self.ops_per_graph = [[n.target for n in g.graph.nodes if n.op.startswith("call_")] for g in graphs]
        self.ops_per_graph += [list(ops) for ops in segments]
        self.op_count = sum(len(ops) for ops in self.ops_per_graph)
        self.compile_times = compile_times
        self.out_guards = []

    def __str__(self):
        lines = [f"Graph Count: {self.graph_count}", f"Graph Break Count: {self.graph_break_count}",
                 f"Op Count: {self.op_count}", "Break Reasons:"]
        for i, reason in enumerate(self.break_reasons):
            lines.append(f"  Break Reason {i + 1}:\n    Reason: {reason.reason}")
        lines.append("Ops per Graph:")
        for i, ops in enumerate(self.ops_per_graph):
            lines.append(f"  Ops {i + 1}:")
            lines += [f"    {getattr(op, '__name__', op)}" for op in ops]
        return "\n".join(lines) + "\n"


def explain(fn, *extra_args, **extra_kwargs):
    """A function that runs `fn` compiled (ember's eager backend, no fusion) on the given
    arguments and returns an `ExplainOutput` instead of its result.

    >>> import ember_tensor as torch
    >>> def f(x):
    ...     if x.sum() > 0:
    ...         return x
    ...     return -x
    >>> out = explain(f)(torch.ones(2))
    >>> out.graph_count, out.graph_break_count  # sum and gt; the check; x runs no op
    (1, 1)
    """
    if extra_args or extra_kwargs:  # PyTorch's deprecated explain(fn, *args) form
        return explain(fn)(*extra_args, **extra_kwargs)

    def run(*args, **kwargs):
        compiled = CompiledFunction(fn, backend="eager")
        # The pieces between Python's checks of tensor values count as PyTorch counts them,
        # whether or not compiled calls replay them (config.guarded_traces).
        # A training step (a backward pass, an optimizer's update) is one break, its capture's:
        # the recorded whole-step program is no graph (`whole_step`).
        switches = config.guarded_traces, config.whole_step
        config.guarded_traces, config.whole_step = True, False
        try:
            compiled(*args, **kwargs)
        finally:
            config.guarded_traces, config.whole_step = switches
        reasons, segments = list(compiled.breaks), []
        for entry in compiled.guarded:
            segments += [ops for ops in entry.tree.segments() if ops]
            reasons += [BreakReason(f"data-dependent control flow: {check.describe()} of a tensor value "
                                    f"(replayed from guarded traces)") for check in entry.tree.checks()]
        return ExplainOutput(list(compiled.graph_modules), reasons, list(compiled.compile_times), segments)

    return run
