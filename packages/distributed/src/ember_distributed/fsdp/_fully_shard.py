"""``fully_shard(module, mesh=...)``: FSDP's per-parameter API (FSDP2).

Each parameter of ``module`` (not already in an inner ``fully_shard`` unit) is replaced,
in place, by a parameter holding this rank's chunk of its first dimension, as PyTorch
does (there, a DTensor whose local tensor is this chunk). The optimizer is built after
``fully_shard`` on ``model.parameters()`` and steps the chunks. The module's class becomes
``FSDP<Class>``, a subclass that also has FSDPModule's methods, as in PyTorch.
"""

import ember_tensor

from .._group import resolve
from ._hooks import ChunkLayout, ForwardOrder, UnitHooks
from ._unit import ShardedUnit
from .api import MixedPrecisionPolicy, OffloadPolicy

__all__ = ["fully_shard", "FSDPModule"]


class FSDPModule:
    """The methods ``fully_shard`` adds to a module (mixed into its class)."""

    def reshard(self):
        """Free the gathered full parameters (they are gathered again on the next use)."""
        if self._fsdp_unit is not None:
            self._fsdp_unit.release()

    def unshard(self, async_op=False):
        """Gather the full parameters now (forward gathers them anyway)."""
        if self._fsdp_unit is not None:
            self._fsdp_unit.gather(self._fsdp_hooks.layout.locals(self._fsdp_hooks.shards()))

    def set_modules_to_forward_prefetch(self, modules):
        """Before this module's forward, post the all-gathers of ``modules`` too (after its own),
        so that they run while this module computes instead of when each is reached."""
        self._fsdp_hooks_of(self).forward_prefetch = [self._fsdp_hooks_of(m) for m in modules]

    def set_modules_to_backward_prefetch(self, modules):
        """Before this module's backward, post the all-gathers of ``modules`` too (after its own)."""
        self._fsdp_hooks_of(self).backward_prefetch = [self._fsdp_hooks_of(m) for m in modules]

    @staticmethod
    def _fsdp_hooks_of(module):
        hooks = getattr(module, "_fsdp_hooks", None)
        if hooks is None:
            raise ValueError(f"{type(module).__name__} has no parameters of its own to gather: prefetch applies "
                             "to fully_shard modules that own parameters")
        return hooks

    def set_requires_gradient_sync(self, requires_gradient_sync, *, recurse=True):
        """False: backward keeps full gradients locally (gradient accumulation without communication)."""
        modules = self.modules() if recurse else [self]
        for m in modules:
            if isinstance(m, FSDPModule) and m._fsdp_unit is not None:
                m._fsdp_unit.sync_gradients = requires_gradient_sync

    def set_reshard_after_forward(self, reshard_after_forward, recurse=True):
        """Whether forward frees the full parameters (True) or keeps them for backward."""
        modules = self.modules() if recurse else [self]
        for m in modules:
            if isinstance(m, FSDPModule) and m._fsdp_unit is not None:
                m._fsdp_unit.reshard_after_forward = bool(reshard_after_forward)


_FSDP_CLASSES = {}


def _fsdp_class(cls):
    if cls not in _FSDP_CLASSES:
        _FSDP_CLASSES[cls] = type(f"FSDP{cls.__name__}", (FSDPModule, cls), {})
    return _FSDP_CLASSES[cls]


def fully_shard(module, *, mesh=None, reshard_after_forward=None, shard_placement_fn=None,
                mp_policy=MixedPrecisionPolicy(), offload_policy=OffloadPolicy(), ignored_params=None,
                dp_mesh_dims=None):
    """Shard ``module``'s parameters over ``mesh`` (1-D: FSDP; 2-D: replicate over dimension 0,
    shard over dimension 1, i.e. HSDP); call it on the inner blocks first, then the root.

    Returns the module, whose class is now a subclass of FSDPModule.

    >>> # for layer in model.layers: fully_shard(layer)
    >>> # fully_shard(model); optim = torch.optim.Adam(model.parameters())
    """
    if shard_placement_fn is not None:
        raise NotImplementedError("ember's fully_shard shards every parameter on dim 0 (no shard_placement_fn)")
    if mesh is None:
        shard_group, replicate_group = resolve(None), None
    elif mesh.ndim == 1:
        shard_group, replicate_group = mesh.get_group(), None
    elif mesh.ndim == 2:
        shard_group, replicate_group = mesh.get_group(1), mesh.get_group(0)
    else:
        raise ValueError(f"fully_shard expects a 1D or 2D DeviceMesh but got {mesh.ndim}-D")
    skip = {id(p) for p in (ignored_params or ())}
    params = []
    for _, owner in module.named_modules():
        for name, p in list(owner.named_parameters(recurse=False)):
            if id(p) in skip or getattr(p, "_fsdp_sharded", False) or any(q is p for _, _, q in params):
                continue
            params.append((owner, name, p))
    module._fsdp_unit = module._fsdp_hooks = None
    # this module is the root of the units under it (until fully_shard is called on a module
    # above): they record their forward order for implicit backward prefetching
    order = ForwardOrder()
    module.register_forward_pre_hook(order.begin)
    if params:
        unit = ShardedUnit(params, shard_group, replicate_group, mp_policy.param_dtype, mp_policy.reduce_dtype,
                           True if reshard_after_forward is None else bool(reshard_after_forward))
        shards = []
        for spec, (owner, name, p) in zip(unit.specs, params):
            chunk = ember_tensor.from_numpy(unit.shard_of(spec, p.detach().cpu().numpy()).copy())
            shard = type(p)(chunk, requires_grad=p.requires_grad)
            shard._fsdp_sharded = True
            shard._fsdp_global_shape, shard._fsdp_row_offset = spec.shape, unit.rank * spec.chunk
            shard._fsdp_unit, shard._fsdp_spec = unit, spec  # for full state dicts: gather_param
            setattr(owner, name, shard)
            shards.append(shard)  # the optimizer updates these very tensors in place
        hooks = UnitHooks(module, unit, ChunkLayout(unit), lambda: shards,
                          cast_inputs=mp_policy.param_dtype if mp_policy.cast_forward_inputs else None,
                          cast_outputs=mp_policy.output_dtype)
        module._fsdp_unit, module._fsdp_hooks = unit, hooks
    for m in module.modules():
        if m is module or isinstance(m, FSDPModule):
            m._fsdp_order = order
            if m._fsdp_hooks is not None:
                m._fsdp_hooks.order = order
    module.__class__ = _fsdp_class(type(module))
    return module
