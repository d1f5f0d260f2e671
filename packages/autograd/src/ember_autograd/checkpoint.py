"""``torch.utils.checkpoint``: trade compute for memory by recomputing a region in backward.

`checkpoint(function, *args)` runs `function` without recording the graph (its
intermediate activations are freed at once) and keeps only its inputs; when the backward
pass reaches the region it runs `function` again with grad enabled, from the same random
state, and backpropagates through that. Parameters that `function` uses get their
gradients from this inner backward.

Both of PyTorch's variants are served by this one mechanism, so ``use_reentrant=False``
adds, over the reentrant one: keyword arguments, and gradients for the parameters inside
when no input requires grad. Not provided: ``torch.autograd.grad`` (or ``backward(inputs=)``)
through a checkpoint asking for the parameters inside it (they receive ``.grad`` instead,
as with PyTorch's reentrant variant), the ``context_fn``, ``determinism_check`` and
``debug`` options beyond their defaults.

Layers above that keep state the recomputation must see again (autocast's dtype, ...)
register it with `register_recompute_state`.
"""
import contextlib
import functools
import warnings

import ember_tensor
from ember_tensor import Tensor

from ._function import Function
from ._grad_mode import enable_grad, is_grad_enabled, no_grad
from ._tensor_api import backward as _backward

__all__ = ["checkpoint", "checkpoint_sequential", "noop_context_fn", "register_recompute_state"]

# Functions called at forward time; each returns a context manager that puts back, around
# the recomputation, the state it saw (registered by layers above, e.g. autocast).
_RECOMPUTE_STATE = []


def register_recompute_state(capture):
    """Register ``capture()``: called when a checkpointed region first runs, it returns a
    context manager entered around the region's recomputation in backward."""
    _RECOMPUTE_STATE.append(capture)


def noop_context_fn():
    """The default ``context_fn``: no context around the forward or the recomputation."""
    return contextlib.nullcontext(), contextlib.nullcontext()


def _warn_use_reentrant(name):
    warnings.warn(f"{name}: the use_reentrant parameter should be passed explicitly. Starting in PyTorch 2.9, "
                  "calling checkpoint without use_reentrant will raise an exception. use_reentrant=False is "
                  "recommended, but if you need to preserve the current default behavior, you can pass "
                  "use_reentrant=True. Refer to docs for more details on the differences between the two "
                  "variants.", stacklevel=3)


def _rng_states():
    """The CPU generator's state and, once CUDA is in use, every GPU's."""
    cuda = ember_tensor.cuda
    gpus = cuda.get_rng_state_all() if cuda.is_initialized() else None
    return ember_tensor.get_rng_state(), gpus


@contextlib.contextmanager
def _replayed_rng(states):
    """Run the block from `states` and leave the generators as they were before it."""
    now = _rng_states()
    ember_tensor.set_rng_state(states[0])
    if states[1] is not None:
        ember_tensor.cuda.set_rng_state_all(states[1])
    try:
        yield
    finally:
        ember_tensor.set_rng_state(now[0])
        if now[1] is not None:
            ember_tensor.cuda.set_rng_state_all(now[1])


class _Checkpoint(Function):
    """Forward: run the region without a graph. Backward: run it again with one and
    backpropagate through it."""

    @staticmethod
    def forward(ctx, run, preserve_rng_state, *args):
        ctx.run = run
        ctx.rng = _rng_states() if preserve_rng_state else None
        ctx.recompute_state = [capture() for capture in _RECOMPUTE_STATE]
        ctx.tensor_indices = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.others = [None if isinstance(a, Tensor) else a for a in args]
        ctx.save_for_backward(*(args[i] for i in ctx.tensor_indices))
        with no_grad():
            return run(*args)

    @staticmethod
    def backward(ctx, *grads):
        args = list(ctx.others)
        for i, saved in zip(ctx.tensor_indices, ctx.saved_tensors):
            args[i] = saved.detach().requires_grad_(saved.requires_grad)
        with contextlib.ExitStack() as stack:
            if ctx.rng is not None:
                stack.enter_context(_replayed_rng(ctx.rng))
            for state in ctx.recompute_state:
                stack.enter_context(state)
            stack.enter_context(enable_grad())
            outputs = ctx.run(*args)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        pairs = [(out, grad) for out, grad in zip(outputs, grads)
                 if isinstance(out, Tensor) and out.requires_grad and grad is not None]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
        _backward([out for out, _ in pairs], [grad for _, grad in pairs])
        return (None, None) + tuple(a.grad if isinstance(a, Tensor) and a.requires_grad else None for a in args)


def checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn, determinism_check="default",
               debug=False, preserve_rng_state=True, **kwargs):
    """Run ``function(*args, **kwargs)`` keeping only its inputs; recompute it in backward.

    `preserve_rng_state` replays the random state, so dropout inside draws the same masks
    again. ``use_reentrant`` should be passed (PyTorch warns without it and takes True).
    """
    if use_reentrant is None:
        _warn_use_reentrant("torch.utils.checkpoint")
        use_reentrant = True
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if use_reentrant and (context_fn is not noop_context_fn or debug is not False):
        raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
    if context_fn is not noop_context_fn or debug or determinism_check not in ("default", "none"):
        raise NotImplementedError("ember's checkpoint supports context_fn, debug and determinism_check only at "
                                  "their defaults")
    run = functools.partial(function, **kwargs) if kwargs else function
    inputs_require_grad = any(isinstance(a, Tensor) and a.requires_grad for a in args)
    if use_reentrant and not inputs_require_grad:
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", stacklevel=2)
    if not is_grad_enabled():
        return run(*args)  # no graph, nothing to recompute
    if use_reentrant:
        return _Checkpoint.apply(run, preserve_rng_state, *args)
    if not inputs_require_grad:
        # The parameters inside may still want gradients: an input that requires grad
        # makes the region's output part of the graph (its gradient is dropped).
        anchor = ember_tensor.zeros((), requires_grad=True)
        return _Checkpoint.apply(lambda _, *a: run(*a), preserve_rng_state, anchor, *args)
    return _Checkpoint.apply(run, preserve_rng_state, *args)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Run a sequence of modules (or an ``nn.Sequential``) in `segments` checkpointed
    chunks; the last chunk runs normally."""
    if use_reentrant is None:
        _warn_use_reentrant("torch.utils.checkpoint.checkpoint_sequential")
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if hasattr(functions, "children") and not isinstance(functions, (list, tuple)):
        functions = list(functions.children())

    def run(start, end):
        def forward(x):
            for j in range(start, end + 1):
                x = functions[j](x)
            return x
        return forward

    size = len(functions) // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant, preserve_rng_state=preserve)
    return run(end + 1, len(functions) - 1)(input)
