"""``torch.utils.checkpoint``: trade compute for memory by recomputing a region in backward.

PyTorch's two variants, as PyTorch builds them:

- ``use_reentrant=True``: `checkpoint(function, *args)` runs `function` without recording
  the graph and keeps only its inputs; when backward reaches the region it runs
  `function` again with grad enabled, from the same random state, and backpropagates
  through that inner graph (a backward inside the backward). Parameters inside receive
  ``.grad`` from that inner pass, so ``autograd.grad`` cannot ask for them.
- ``use_reentrant=False``: the region records its graph as usual, but under
  ``saved_tensors_hooks`` whose pack hook keeps only a position: no activation is kept.
  The first unpack in backward reruns `function` (same random state, `context_fn`'s
  recompute context) collecting what it saves, and stops as soon as it has them all.
  Gradients flow through the ordinary graph, so ``autograd.grad`` and ``backward(inputs=)``
  reach the parameters inside, keyword arguments work, and ``determinism_check="default"``
  compares what the recomputation saved (count, shapes, dtypes, devices) with the
  original and raises ``CheckpointError`` on a difference. ``debug=True`` is accepted (its
  operator traces are not recorded).

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
from .graph import saved_tensors_hooks

__all__ = ["checkpoint", "checkpoint_sequential", "noop_context_fn", "register_recompute_state", "CheckpointError",
           "set_checkpoint_debug_enabled"]

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
    if determinism_check not in ("default", "none"):
        raise ValueError(f"determinism_check should be one of ['default', 'none'], but got {determinism_check}")
    run = functools.partial(function, **kwargs) if kwargs else function
    inputs_require_grad = any(isinstance(a, Tensor) and a.requires_grad for a in args)
    if use_reentrant and not inputs_require_grad:
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", stacklevel=2)
    if use_reentrant:
        if not is_grad_enabled():
            return run(*args)  # no graph, nothing to recompute
        return _Checkpoint.apply(run, preserve_rng_state, *args)
    return _checkpoint_without_reentrant(run, args, preserve_rng_state, context_fn, determinism_check)


class CheckpointError(RuntimeError):
    """The recomputation of a checkpointed region saved other tensors than its forward did."""


_CHECKPOINT_TIP = (
    "\n\nTip: To see a more detailed error message, either pass `debug=True` to\n"
    "`torch.utils.checkpoint.checkpoint(...)` or wrap the code block\n"
    "with `with torch.utils.checkpoint.set_checkpoint_debug_enabled(True):` to\n"
    "enable checkpoint-debug mode globally.")


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled):
    """PyTorch's switch for checkpoint's debug mode; accepted (ember records no operator traces)."""
    yield


class _StopRecomputation(Exception):
    """Raised inside the recomputation once every tensor the backward needs is saved again."""


class _Frame:
    """One call of a non-reentrant checkpoint: what its forward saved (as metadata) and,
    once backward needed them, the recomputed tensors."""

    def __init__(self, recompute, check):
        self.recompute = recompute
        self.check = check
        self.saved_metadata = []  # per saved tensor, in order
        self.recomputed = None

    def pack(self, tensor):
        self.saved_metadata.append(_metadata(tensor) if self.check else None)
        return len(self.saved_metadata) - 1

    def unpack(self, position):
        if self.recomputed is None:
            self.recomputed = self._recompute()
        return self.recomputed[position]

    def _recompute(self):
        recomputed = []
        wanted = len(self.saved_metadata)

        def pack(tensor):
            if len(recomputed) == wanted:
                raise _StopRecomputation
            recomputed.append(tensor.detach())
            if len(recomputed) == wanted:
                raise _StopRecomputation  # all there: skip the rest of the region
            return None

        def unpack(_):
            raise RuntimeError("torch.utils.checkpoint: unpacking a tensor saved during the recomputation")

        try:
            with saved_tensors_hooks(pack, unpack):
                self.recompute()
        except _StopRecomputation:
            pass
        if len(recomputed) != wanted:
            raise CheckpointError(
                "torch.utils.checkpoint: A different number of tensors was saved during the original forward and "
                f"recomputation.\nNumber of tensors saved during forward: {wanted}\n"
                f"Number of tensors saved during recomputation: {len(recomputed)}." + _CHECKPOINT_TIP)
        if self.check:
            different = [(i, saved, _metadata(t)) for i, (saved, t) in enumerate(zip(self.saved_metadata, recomputed))
                         if saved != _metadata(t)]
            if different:
                lines = "".join(f"tensor at position {i}:\nsaved metadata: {_describe(a)}\n"
                                f"recomputed metadata: {_describe(b)}\n" for i, a, b in different)
                raise CheckpointError("torch.utils.checkpoint: Recomputed values for the following tensors have "
                                      "different metadata than during the forward pass.\n" + lines + "."
                                      + _CHECKPOINT_TIP)
        return recomputed


def _metadata(tensor):
    return tuple(tensor.shape), tensor.dtype, tensor.device


def _describe(metadata):
    shape, dtype, device = metadata
    return f"{{'shape': {ember_tensor.Size(shape)!r}, 'dtype': {dtype!r}, 'device': {device!r}}}"


def _checkpoint_without_reentrant(run, args, preserve_rng_state, context_fn, determinism_check):
    """Run the region with its graph recorded but none of its saved tensors kept; see the
    module's docstring."""
    forward_context, recompute_context = context_fn()
    if not is_grad_enabled():
        with forward_context:
            return run(*args)
    rng = _rng_states() if preserve_rng_state else None
    recompute_state = [capture() for capture in _RECOMPUTE_STATE]

    def recompute():
        with contextlib.ExitStack() as stack:
            if rng is not None:
                stack.enter_context(_replayed_rng(rng))
            for state in recompute_state:
                stack.enter_context(state)
            stack.enter_context(recompute_context)
            stack.enter_context(enable_grad())
            run(*args)

    frame = _Frame(recompute, check=determinism_check == "default")
    with saved_tensors_hooks(frame.pack, frame.unpack), forward_context:
        return run(*args)


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
