"""How the compiler's benchmark rows run a function: eagerly, compiled by ember's compiler
(with one of its opt-in switches, or with memory planning off), or by PyTorch's inductor
(`compile_kernels`, `compile_training`, indexed by `compile_steps`)."""


def _compiled(fn):
    import ember_compile
    return ember_compile.compile(fn)


def _compiled_with_guarded_traces(fn):
    """`fn` compiled with the opt-in replay of guarded traces switched on (the switch is
    read when a guard key compiles, in the setup's first calls)."""
    import ember_compile
    ember_compile.config.guarded_traces = True
    return ember_compile.compile(fn)


def _compiled_whole_step(fn):
    """`fn`, a whole training step, compiled with the opt-in whole-step replay switched on
    (read when a guard key compiles, in the setup's first calls)."""
    import ember_compile
    ember_compile.config.whole_step = True
    return ember_compile.compile(fn)


def _compiled_without_memory_planning(fn):
    """`fn` compiled with `config.memory_planning` off (read when its graph compiles, in
    the setup's first call; switched back on after it)."""
    import ember_compile
    compiled = ember_compile.compile(fn)

    def first_call_unplanned(*args):
        ember_compile.config.memory_planning = False
        try:
            return compiled(*args)
        finally:
            ember_compile.config.memory_planning = True
    return compiled, first_call_unplanned


VARIANTS = ("compiled", "compiled without memory planning", "eager")


def _variant(fn, variant):
    """(the callable to time, its first call) for eager, compiled and compiled unplanned."""
    if variant == "eager":
        return fn, fn
    if variant == "compiled":
        compiled = _compiled(fn)
        return compiled, compiled
    return _compiled_without_memory_planning(fn)


def _torch_compiled(fn):
    import torch
    return torch.compile(fn)


def _run_as(fn, compiled, lib):
    """`fn` as the row runs it: compiled by ember's compiler (ember, `compiled=True`), by
    PyTorch's inductor (torch, `compiled="torch.compile"`), or eager."""
    if compiled == "torch.compile":
        return _torch_compiled(fn) if lib == "torch" else fn
    return _compiled(fn) if compiled and lib == "ember" else fn


def _no_grad(lib):
    if lib == "ember":
        import ember_autograd
        return ember_autograd.no_grad
    import torch
    return torch.no_grad
