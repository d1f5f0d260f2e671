"""The compiler's settings (``torch._dynamo.config``'s names).

Attributes:
    cache_size_limit: how many graphs one compiled callable keeps, one per set of guards
        (input shapes, dtypes, ...); a call that would need one more runs eagerly, with a
        warning the first time. PyTorch's default, 8.
    recompile_limit: PyTorch's newer name for the same limit; `cache_size_limit` wins when
        both are set differently from 8.
    ahead_of_time_backward: ember's own switch (no PyTorch name): whether the training
        calls of graphs compiled by the ``"inductor"``/``"ember"``/``"aot_eager"`` backends
        run the graph lowered with its backward derived ahead of time (`joint`), one
        autograd node per call (True, the default), or record the graph's ops one by one
        as eager ember does (False). Read when a graph compiles.
    guarded_traces: ember's own switch: whether a call whose capture meets Python control
        flow on a tensor's value is replayed from guarded traces (`guarded`; True) or runs
        eagerly as a whole (False, the default: a replay runs the same ops through the
        dispatcher and measured no faster than eager, up to 1.18x slower on tiny loops,
        until its pieces are compiled). `explain` uses them either way, to count graphs and
        breaks as PyTorch does. Read when a guard key compiles.
    whole_step: ember's own switch: whether a function whose capture meets a backward pass
        or an in-place op on real tensors (a training step: forward, ``loss.backward()``,
        ``opt.step()``) is recorded as one program and replayed per step (`whole_step`;
        True) or runs eagerly as a whole (False, the default: the replay measured no faster
        than eager, 0.86-1.05x, and not faster than ``compile(model)``). Read when a guard
        key compiles.
    memory_planning: ember's own switch: whether the ``"inductor"``/``"ember"`` backends
        let a fused group write its result into a dead input's buffer — a matmul's,
        linear's or conv2d's output (its epilogue, in place) or another intermediate used
        last by the group — on calls where the group records no autograd node
        (`memory_planning`; True, the default). Read when a graph compiles.
"""
cache_size_limit = 8
recompile_limit = 8
ahead_of_time_backward = True
guarded_traces = False
memory_planning = True
whole_step = False


def limit():
    """The graph cache limit in force (either name may have been set)."""
    return cache_size_limit if cache_size_limit != 8 else recompile_limit
