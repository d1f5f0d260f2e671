"""How an FSDP unit joins its module's forward and backward, for both APIs.

Before the module's forward, the shards go through ``Unshard`` (an all-gather recorded by
autograd) and the full parameters are put on the module as plain attributes, shadowing
whatever is registered under those names (the wrapper API deletes the originals;
``fully_shard`` keeps its sharded parameters registered). After forward the attributes are
taken away again, the full parameters are freed (FULL_SHARD), and a hook on each output
that requires grad gathers them once more when backward reaches the module: the ops of
its backward read the parameters autograd saved, from the same memory.

``fully_shard``'s units under one root share a ``ForwardOrder``: the order their forwards
ended in. When backward reaches a unit, it also posts the gather of the unit whose forward
ended just before its own (FSDP2's implicit backward prefetching), unless the unit was given
modules to prefetch explicitly.
"""

import ember_autograd
import ember_tensor

from ._unit import Unshard

__all__ = []


class FlatLayout:
    """The optimizer steps one flat shard per unit (the wrapper API, ``_flat_param``)."""

    def __init__(self, unit):
        self.unit = unit

    def locals(self, shards):
        """Each parameter's padded segment of the flat shard (views: nothing is copied)."""
        return self.unit.segments(shards[0].detach().numpy())

    @staticmethod
    def split(flat):
        return [ember_tensor.from_numpy(flat)]


class ChunkLayout:
    """The optimizer steps each parameter's own chunk (``fully_shard``)."""

    def __init__(self, unit):
        self.unit = unit

    def locals(self, shards):
        """Each parameter's chunk, its own memory (padded by the unit only where it is short)."""
        return [s.detach().cpu().numpy() for s in shards]

    def split(self, flat):
        # views of one fresh array, one per parameter: no copy
        return [ember_tensor.from_numpy(chunk) for chunk in self.unit.unpack(flat)]


class ForwardOrder:
    """The units under one ``fully_shard`` root, in the order their forwards ended in this
    iteration (as PyTorch's ``post_forward_order``), for implicit backward prefetching.

    The root's forward starts a new order; a unit's backward hook prefetches the unit
    recorded just before it. A prefetched unit whose backward then never ran (its output
    did not reach the loss) would keep parameters gathered before the optimizer step:
    its next forward frees them first and gathers anew.
    """

    def __init__(self):
        self.units = []

    def begin(self, module, args):
        """The root's forward pre-hook: a fresh order for this iteration."""
        if module._fsdp_order is self:  # an inner root's hook stays registered: only the outermost acts
            self.units = []


class UnitHooks:
    """Forward pre/post hooks of one unit's module, and the backward re-gather.

    Args:
        module: the module whose forward the unit wraps.
        unit: its ShardedUnit.
        layout: FlatLayout or ChunkLayout.
        shards: a callable giving the shard tensors the optimizer steps, in layout order.
        cast_inputs: a dtype to cast floating-point tensor inputs to (mixed precision), or None.
        cast_outputs: a dtype to cast floating-point tensor outputs to, or None.
    """

    def __init__(self, module, unit, layout, shards, cast_inputs=None, cast_outputs=None):
        self.module, self.unit, self.layout, self.shards = module, unit, layout, shards
        self.cast_inputs, self.cast_outputs = cast_inputs, cast_outputs
        self.handles = [module.register_forward_pre_hook(self.pre_forward),
                        module.register_forward_hook(self.post_forward)]
        # other units' hooks whose gathers this unit posts ahead, before waiting for its own
        self.forward_prefetch, self.backward_prefetch = [], []
        self.forward_order = None  # a list this unit appends itself to in pre_forward (recording)
        self.order = None  # fully_shard: the ForwardOrder of this unit's root (implicit backward prefetch)
        self.stale = False  # gathered by a prefetch whose backward never came (see ForwardOrder)

    def start(self):
        """Post this unit's all-gather without waiting (a no-op when resident or posted)."""
        if not self.unit.resident:
            self.unit.start_gather(self.layout.locals(self.shards()))

    def unshard(self):
        """Gather the full parameters and put them on the modules; returns them."""
        fulls = Unshard.apply(self.unit, self.layout, *self.shards())
        for spec, full in zip(self.unit.specs, fulls):
            # object.__setattr__: the plain tensor shadows the registered name for this forward
            # without going through the module's parameter bookkeeping.
            object.__setattr__(spec.module, spec.name, full)
        return fulls

    def take_off(self):
        """Remove the full parameters from the modules' attributes."""
        for spec in self.unit.specs:
            vars(spec.module).pop(spec.name, None)

    def pre_forward(self, module, args):
        if self.stale:
            self.unit.release()  # gathered ahead for a backward that never came: the shards may have changed
            self.stale = False
        if self.forward_order is not None:
            self.forward_order.append(self)
        self.start()
        for other in self.forward_prefetch:
            other.start()
        self.unshard()
        if self.cast_inputs is not None:
            return tuple(cast(a, self.cast_inputs) for a in args)
        return None

    def post_forward(self, module, args, output):
        self.take_off()
        if self.unit.reshard_after_forward:
            self.unit.release()
        if ember_autograd.is_grad_enabled() and self.unit.requires_grad:
            hook = self._backward_hook()
            for t in _tensors_in(output):
                if t.requires_grad:
                    t.register_hook(hook)
        if self.cast_outputs is not None:
            return map_tensors(output, lambda t: cast(t, self.cast_outputs))
        return None

    def _backward_hook(self):
        """The hook for this forward call's outputs, run when backward reaches them."""
        order = self.order
        if order is None:
            return self._before_backward
        # record this call's place (units prefetching explicitly too, so that the others'
        # predecessors are right); with implicit prefetching, the call's first output hook
        # prefetches the unit recorded before it (once, however many outputs the call has)
        units, index = order.units, len(order.units)
        units.append(self)
        if self.backward_prefetch:
            return self._before_backward
        previous = [units[index - 1]] if index else []

        def hook(grad):
            prefetch = previous[:]
            previous.clear()
            return self._before_backward(grad, prefetch)
        return hook

    def _before_backward(self, grad, implicit=()):
        # The module's backward is about to read the saved full parameters: refill them.
        self.stale = False
        self.start()
        for other in self.backward_prefetch or implicit:
            if other is not self and not other.unit.resident and other.unit._pending is None:
                other.start()
                other.stale = True  # until its own backward hook runs
        self.unit.wait_gather()
        return None


def cast(value, dtype):
    if isinstance(value, ember_tensor.Tensor) and value.dtype.is_floating_point and value.dtype is not dtype:
        return value.to(dtype)
    return value


def map_tensors(value, fn):
    if isinstance(value, tuple):
        return tuple(map_tensors(v, fn) for v in value)
    if isinstance(value, list):
        return [map_tensors(v, fn) for v in value]
    if isinstance(value, dict):
        return {k: map_tensors(v, fn) for k, v in value.items()}
    return fn(value)


def _tensors_in(value):
    if isinstance(value, (list, tuple)):
        for item in value:
            yield from _tensors_in(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _tensors_in(item)
    elif isinstance(value, ember_tensor.Tensor):
        yield value
